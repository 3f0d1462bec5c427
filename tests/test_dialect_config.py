"""A provider's Chat Completions dialect is a field of its spec and of its
TOML table: a user endpoint chooses one, and the request on the wire
follows it (checked on a loopback server through the real client)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from elelem import Client
from elelem.errors import ConfigError
from elelem.providers import load_catalog
from elelem.testing.servers import LoopbackServer, replay, sse_body
from elelem.vocabulary import GenerationOptions, JsonSchemaOutput

SCHEMA = {"type": "object", "properties": {"metres": {"type": "number"}}}
ANSWER = sse_body(
    [
        (None, json.dumps({"id": "c1", "object": "chat.completion.chunk", "model": "m",
                           "choices": [{"index": 0, "delta": {"content": "{}"}}]})),
        (None, json.dumps({"id": "c1", "object": "chat.completion.chunk", "model": "m",
                           "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})),
        (None, "[DONE]"),
    ]
)  # fmt: skip


def sent_request(tmp_path: Path, table: str) -> dict[str, object]:
    """The JSON body the client sends to the endpoint ``table`` configures."""
    with LoopbackServer([replay(ANSWER)]) as server:
        config = tmp_path / "config.toml"
        config.write_text(
            f'[providers.proxy]\ncompatible = "openai"\nbase_url = "{server.url}/v1"\n{table}',
            encoding="utf-8",
        )

        async def main() -> None:
            async with Client(config=config, env={}) as client:
                options = GenerationOptions(max_tokens=50, output=JsonSchemaOutput(SCHEMA))
                stream = client.stream("proxy:model-x", "How tall?", options=options)
                async with stream:
                    await stream.final()

        asyncio.run(main())
        (request,) = server.requests
    body: dict[str, object] = json.loads(request.body)
    return body


def test_a_toml_endpoint_chooses_its_dialect(tmp_path: Path) -> None:
    default = sent_request(tmp_path, "")
    deepseek = sent_request(tmp_path, 'dialect = "deepseek"\n')
    openai = sent_request(tmp_path, 'dialect = "openai"\n')
    # The default dialect takes a JSON schema and names the limit max_tokens.
    assert default["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "output", "schema": SCHEMA, "strict": True},
    }
    assert (default["max_tokens"], "max_completion_tokens" in default) == (50, False)
    # DeepSeek's takes JSON objects only.
    assert deepseek["response_format"] == {"type": "json_object"}
    # OpenAI's names the limit max_completion_tokens.
    assert (openai["max_completion_tokens"], "max_tokens" in openai) == (50, False)


def test_a_toml_endpoint_sets_a_single_convention(tmp_path: Path) -> None:
    # One field over the default dialect: the limit named as OpenAI names it.
    one = sent_request(tmp_path, 'conventions = { max_tokens_field = "max_completion_tokens" }\n')
    assert (one["max_completion_tokens"], "max_tokens" in one) == (50, False)
    assert one["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "output", "schema": SCHEMA, "strict": True},
    }
    # Over a named dialect: DeepSeek's, but with the limit renamed.
    both = sent_request(
        tmp_path,
        'dialect = "deepseek"\nconventions = { max_tokens_field = "max_completion_tokens" }\n',
    )
    assert both["response_format"] == {"type": "json_object"}
    assert (both["max_completion_tokens"], "max_tokens" in both) == (50, False)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            'compatible = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
            'conventions = { reasoning = "x" }\n',
            "[providers.x]: conventions: provider x: reasoning is no Chat Completions "
            "convention (known: reasoning_replay, tool_call_index, null_content, "
            "max_tokens_field, stream_usage, effort, web_search, search_elsewhere, cache, "
            "output, images, files, audio)",
        ),
        (
            'compatible = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
            'conventions = { cache = "always" }\n',
            "[providers.x]: conventions: provider x: convention cache must be 'openai' or "
            "'cache_control' or 'conversation_header' or 'automatic' or 'none', not 'always'",
        ),
        (
            'compatible = "anthropic"\nbase_url = "http://127.0.0.1:9"\n'
            'conventions = { cache = "none" }\n',
            "[providers.x]: conventions: provider x: shape anthropic_messages has no "
            "conventions to set",
        ),
    ],
)
def test_a_bad_convention_names_the_file_table_and_field(
    tmp_path: Path, table: str, message: str
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f"[providers.x]\n{table}", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_catalog(config, {})
    assert str(info.value) == f"{config}: {message}"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            'compatible = "openai"\nbase_url = "http://127.0.0.1:9/v1"\ndialect = "nosuch"\n',
            "[providers.x]: dialect: provider x: unknown openai_chat dialect 'nosuch' (known: "
            "alibaba, azure, azure-chat, cerebras, cloudflare, deepseek, fireworks, groq, huggingface, "
            "litellm, llamacpp, mistral, moonshot, ollama, openai, openrouter, perplexity, "
            "together, vercel, xai, zai)",
        ),
        (
            'compatible = "anthropic"\nbase_url = "http://127.0.0.1:9"\ndialect = "deepseek"\n',
            "[providers.x]: dialect: provider x: shape anthropic_messages has no dialects "
            "(dialect = 'deepseek')",
        ),
        (
            'compatible = "openai"\nbase_url = "http://127.0.0.1:9/v1"\ndialect = 3\n',
            "[providers.x]: dialect must be a string",
        ),
    ],
)
def test_a_bad_dialect_names_the_file_and_table(tmp_path: Path, table: str, message: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[providers.x]\n" + table, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_catalog(config)
    assert str(info.value) == f"{config}: {message}"


def test_the_chat_shape_is_a_spec_value_that_binds_a_dialect_as_data() -> None:
    from elelem.shapes.base import ShapeSpec
    from elelem.shapes.openai_chat import SHAPE, Dialect
    from elelem.vocabulary import ProviderId
    from elelem.wire import ModelRequest

    request = ModelRequest(model="m", messages=(), options=GenerationOptions(max_tokens=5))
    openai = ProviderId("openai")
    assert type(SHAPE) is ShapeSpec
    # unbound: each provider speaks the dialect of its own name
    assert SHAPE.encode_request(request, provider=openai).body["max_completion_tokens"] == 5
    bound = SHAPE.with_dialect("llamacpp")
    assert (bound.dialect, SHAPE.dialect) == ("llamacpp", None)
    assert repr(bound) == "ShapeSpec('openai_chat', 'sse', dialect='llamacpp')"
    assert bound.encode_request(request, provider=openai).body == {
        "model": "m",
        "messages": [],
        "stream": True,
        "max_tokens": 5,
    }
    custom = SHAPE.with_dialect(Dialect(max_tokens_field="max_output_tokens", stream_usage=False))
    assert custom.encode_request(request, provider=openai).body["max_output_tokens"] == 5
    with pytest.raises(ConfigError, match=r"^3 is not a dialect of shape openai_chat$"):
        SHAPE.with_dialect(3)
