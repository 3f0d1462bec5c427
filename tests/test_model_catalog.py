"""The model catalog: limits and capabilities of every built-in model, what
providers report merged in, and the warnings before sending (issue #28)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx2
import pytest

from cli_helpers import KEY, base_env, run, text_reply
from elelem import Client
from elelem.client.preflight import ModelWarning, preflight
from elelem.providers.capabilities import ModelInfo, as_record, model_info, with_remote
from elelem.providers.listing import RemoteModel, list_remote_models
from elelem.providers.models import DEFAULT_MODELS, known_models
from elelem.testing.servers import LoopbackServer, replay
from elelem.transport import Endpoint
from elelem.vocabulary import (
    DocumentBlock,
    GenerationOptions,
    ImageBlock,
    JsonSchemaOutput,
    Message,
    ProviderId,
    TextBlock,
    ToolSpec,
)
from elelem.wire import ModelRequest

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)


def test_every_built_in_model_has_limits() -> None:
    for provider, model in [*known_models(), *DEFAULT_MODELS.items()]:
        info = model_info(provider, model)
        where = f"{provider}:{model}"
        assert info.context_window is not None and info.context_window >= 64000, where
        assert info.input_modalities is not None and "text" in info.input_modalities, where
        assert info.output_modalities == ("text",), where
        assert None not in (info.tools, info.reasoning, info.structured_output), where
        assert info.deprecated is not None, where


def test_a_record_names_the_source_of_each_field() -> None:
    record = as_record(model_info("anthropic", "claude-sonnet-4-5"))
    assert record == {
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "context_window": 200000,
        "max_output_tokens": 64000,
        "input_modalities": ["text", "image", "pdf"],
        "output_modalities": ["text"],
        "tools": True,
        "reasoning": True,
        "structured_output": True,
        "deprecated": False,
        "sources": {
            "context_window": "genai-prices",
            "deprecated": "genai-prices",
            "max_output_tokens": "elelem",
            "input_modalities": "elelem",
            "output_modalities": "elelem",
            "tools": "elelem",
            "reasoning": "elelem",
            "structured_output": "elelem",
        },
    }


def test_cloud_ids_are_the_same_models() -> None:
    vertex = model_info("vertex-anthropic", "claude-sonnet-4-5@20250929")
    bedrock = model_info("bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0")
    direct = model_info("anthropic", "claude-sonnet-4-5")
    for info in (vertex, bedrock):
        assert (info.context_window, info.max_output_tokens, info.structured_output) == (
            direct.context_window,
            direct.max_output_tokens,
            direct.structured_output,
        )
    assert model_info("vertex", "gemini-2.5-flash").context_window == 1048576
    # An Azure deployment named after its model is known; one named otherwise is not.
    assert model_info("azure", "gpt-4o").max_output_tokens == 16384
    assert not model_info("azure", "team-prod-deployment").known


def test_models_json_carries_the_limits(tmp_path: Path) -> None:
    result = run(base_env(tmp_path), "models", "--json", "deepseek")
    assert result.returncode == 0, result.stderr
    first = json.loads(result.stdout.splitlines()[0])
    assert first["address"] == "deepseek:deepseek-chat"
    assert (first["context_window"], first["max_output_tokens"]) == (64000, 8192)
    assert (first["tools"], first["reasoning"], first["structured_output"]) == (True, False, False)
    assert first["input_modalities"] == ["text"]


GEMINI_LIST = {
    "models": [
        {
            "name": "models/gemini-2.5-flash",
            "displayName": "Gemini 2.5 Flash",
            "inputTokenLimit": 1048576,
            "outputTokenLimit": 65535,
            "thinking": True,
        },
        {"name": "models/gemini-9-ultra", "inputTokenLimit": 4000000, "outputTokenLimit": 9000},
    ]
}

OPENROUTER_LIST = {
    "data": [
        {
            "id": "acme/tiny-chat",
            "name": "Acme: Tiny Chat",
            "context_length": 8192,
            "architecture": {"input_modalities": ["text", "file"], "output_modalities": ["text"]},
            "top_provider": {"max_completion_tokens": 2048},
            "supported_parameters": ["temperature", "max_tokens"],
        }
    ]
}


def remote(shape: str, page: object) -> list[RemoteModel]:
    async def main(server: LoopbackServer) -> list[RemoteModel]:
        endpoint = Endpoint(ProviderId("p"), server.url, api_key="k-0123456789")
        async with httpx2.AsyncClient() as http:
            return await list_remote_models(shape, endpoint, http)

    body = json.dumps(page).encode()
    with LoopbackServer([replay(body, content_type="application/json")]) as server:
        return asyncio.run(main(server))


def test_gemini_reports_its_limits_and_they_win() -> None:
    flash, ultra = remote("gemini", GEMINI_LIST)
    assert flash.reported == {
        "context_window": 1048576,
        "max_output_tokens": 65535,
        "reasoning": True,
    }
    merged = with_remote(model_info("google", flash.id), flash.reported)
    assert merged.max_output_tokens == 65535 and merged.sources["max_output_tokens"] == "remote"
    assert merged.tools is True and merged.sources["tools"] == "elelem"
    unknown = with_remote(model_info("google", ultra.id), ultra.reported)
    assert (unknown.context_window, unknown.max_output_tokens) == (4000000, 9000)


def test_openrouter_reports_modalities_and_parameters() -> None:
    (tiny,) = remote("openai_chat", OPENROUTER_LIST)
    assert tiny.name == "Acme: Tiny Chat"
    assert tiny.reported == {
        "context_window": 8192,
        "max_output_tokens": 2048,
        "input_modalities": ("text", "pdf"),
        "output_modalities": ("text",),
        "tools": False,
        "reasoning": False,
        "structured_output": False,
    }
    # What the provider reported is what the pre-send checks then use.
    info = with_remote(model_info("openrouter", tiny.id), tiny.reported)
    request = ModelRequest(
        model=tiny.id,
        messages=(Message("user", (ImageBlock.from_bytes(PNG), TextBlock("x" * 40000)), "user"),),
        tools=(ToolSpec("lookup", "Look up", {"type": "object"}),),
        options=GenerationOptions(output=JsonSchemaOutput({"type": "object"})),
    )
    kinds = [w.kind for w in preflight("openrouter", tiny.id, request, info=info)]
    assert kinds == ["context-window", "modality", "tools", "structured-output"]


def test_models_remote_json_merges_what_gemini_reports(tmp_path: Path) -> None:
    body = json.dumps(GEMINI_LIST).encode()
    with LoopbackServer([replay(body, content_type="application/json")]) as server:
        env = base_env(tmp_path, GOOGLE_GEMINI_BASE_URL=server.url, GEMINI_API_KEY=KEY)
        result = run(env, "models", "--remote", "--json", "google")
    assert result.returncode == 0, result.stderr
    flash, ultra = (json.loads(line) for line in result.stdout.splitlines())
    assert (flash["address"], flash["max_output_tokens"], flash["tools"]) == (
        "google:gemini-2.5-flash",
        65535,
        True,
    )
    assert flash["sources"]["max_output_tokens"] == "remote"
    assert (ultra["context_window"], ultra["tools"]) == (4000000, None)


def request_of(*parts: object, **fields: object) -> ModelRequest:
    message = Message("user", tuple(parts), "user")  # type: ignore[arg-type]
    return ModelRequest(model="m", messages=(message,), **fields)  # type: ignore[arg-type]


def test_warnings_before_sending() -> None:
    hello = request_of(TextBlock("hello"))
    assert preflight("anthropic", "claude-sonnet-4-5", hello) == ()
    assert preflight("anthropic", "claude-sonet-4-5", hello) == (
        ModelWarning(
            "unknown-model",
            "anthropic:claude-sonet-4-5 is not a model elelem knows; "
            "did you mean anthropic:claude-sonnet-4-5?",
            suggestion="claude-sonnet-4-5",
        ),
    )
    # A model nothing is close to is the caller's business: no warning.
    assert preflight("anthropic", "claude-next-private", hello) == ()
    assert preflight("anthropic", "claude-3-7-sonnet-latest", hello) == (
        ModelWarning("deprecated", "anthropic:claude-3-7-sonnet-latest is deprecated"),
    )
    big = request_of(TextBlock("word " * 80000))
    (window,) = preflight("deepseek", "deepseek-chat", big)
    assert (window.kind, window.limit) == ("context-window", 64000)
    assert window.value is not None and window.value > 64000
    assert window.message == (
        f"the request is about {window.value:,} tokens (estimated), more than "
        "deepseek:deepseek-chat's context window of 64,000"
    )
    pdf = DocumentBlock.from_bytes(b"%PDF-1.4\n%%EOF\n", "application/pdf")
    assert preflight("deepseek", "deepseek-chat", request_of(ImageBlock.from_bytes(PNG), pdf)) == (
        ModelWarning(
            "modality", "deepseek:deepseek-chat does not take image input (it takes text)"
        ),
        ModelWarning("modality", "deepseek:deepseek-chat does not take pdf input (it takes text)"),
    )
    schema = GenerationOptions(output=JsonSchemaOutput({"type": "object"}))
    assert preflight(
        "anthropic", "claude-sonnet-4-0", request_of(TextBlock("x"), options=schema)
    ) == (
        ModelWarning(
            "structured-output",
            "anthropic:claude-sonnet-4-0 does not follow a JSON schema (--schema)",
        ),
    )
    no_tools = ModelInfo("p", "m", tools=False, sources={"tools": "remote"})
    assert preflight("p", "m", hello, tools_asked=True, info=no_tools) == (
        ModelWarning("tools", "p:m does not take tools"),
    )


def test_client_check_is_the_same_preflight() -> None:
    client = Client(env={"ELELEM_CONFIG": "/nonexistent.toml", "DEEPSEEK_API_KEY": "k-0123456789"})
    (warning,) = client.check("deepseek:deepseek-chat", [Message.user("word " * 80000)])
    assert warning.kind == "context-window"


def test_ask_warns_then_sends(tmp_path: Path) -> None:
    with LoopbackServer([replay(text_reply("Sent anyway."))]) as server:
        env = base_env(tmp_path, ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=KEY)
        result = run(env, "ask", "-m", "anthropic:claude-sonet-4-5", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith(
        "elelem: warning: anthropic:claude-sonet-4-5 is not a model elelem knows; "
        "did you mean anthropic:claude-sonnet-4-5?\n"
    )
    assert result.stdout.startswith("Sent anyway.")
    (sent,) = server.requests
    assert json.loads(sent.body)["model"] == "claude-sonet-4-5"


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "claude-haiku-4-5"])
def test_ask_without_a_problem_warns_nothing(tmp_path: Path, model: str) -> None:
    with LoopbackServer([replay(text_reply("Fine."))]) as server:
        env = base_env(tmp_path, ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=KEY)
        result = run(env, "ask", "-m", f"anthropic:{model}", "hi")
    assert result.returncode == 0 and "warning" not in result.stderr


def test_ask_json_gives_warnings_as_events(tmp_path: Path) -> None:
    with LoopbackServer([replay(text_reply("Sent anyway."))]) as server:
        env = base_env(tmp_path, ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=KEY)
        result = run(env, "ask", "--json", "-m", "anthropic:claude-3-7-sonnet-latest", "hi")
    assert result.returncode == 0, result.stderr
    first = json.loads(result.stdout.splitlines()[0])
    assert first == {
        "type": "warning",
        "kind": "deprecated",
        "message": "anthropic:claude-3-7-sonnet-latest is deprecated",
    }
    assert "warning" not in result.stderr
