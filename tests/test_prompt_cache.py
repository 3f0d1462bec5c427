"""The neutral prompt-caching option (:class:`PromptCache`): its canonical
bytes, each shape's exact wire spelling and dropped lines, the Anthropic
request through :class:`~elelem.Client` over a loopback server, and the CLI's
``--cache`` flag."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import KEY, base_env, run, text_reply
from elelem import Client
from elelem.codec import dumps, loads
from elelem.errors import DecodeError
from elelem.shapes.anthropic_messages import encoder as anthropic
from elelem.shapes.bedrock_converse import encoder as bedrock
from elelem.shapes.gemini import encoder as gemini
from elelem.shapes.ollama_native import encoder as ollama
from elelem.shapes.openai_chat import encoder as chat
from elelem.shapes.openai_responses import encoder as responses
from elelem.testing.servers import LoopbackServer, replay
from elelem.vocabulary import GenerationOptions, Message, PromptCache, ProviderId, ToolSpec
from elelem.vocabulary.drop import ADJUSTED, INVALID, UNSUPPORTED, Drop
from elelem.wire import ModelRequest
from test_turn import env_for

MODEL = "anthropic:claude-sonnet-4-5"


def request(cache: PromptCache | None, *, system: str | None = "Be brief.", **extra: Any) -> Any:
    return ModelRequest(
        "m-1",
        (Message.user("hello"),),
        system=system,
        options=GenerationOptions(max_tokens=50, cache=cache, extra=extra),
    )


# -- the option and its canonical bytes ------------------------------------------------


def test_the_option_has_canonical_bytes_and_round_trips() -> None:
    options = GenerationOptions(max_tokens=10, cache=PromptCache(ttl="1h", key="user-42"))
    data = (
        b'{"max_tokens":10,"temperature":null,"top_p":null,"stop":[],"reasoning":null,'
        b'"tool_choice":null,"extra":{},"cache":{"ttl":"1h","key":"user-42"},"output":null,'
        b'"seed":null,"context_editing":null}'
    )
    assert dumps(options) == data
    assert loads(data, GenerationOptions) == options
    assert dumps(PromptCache()) == b'{"ttl":null,"key":null}'


def test_options_stored_before_the_option_existed_still_decode() -> None:
    old = b'{"max_tokens":10,"temperature":null,"top_p":null,"stop":[],"reasoning":null,"tool_choice":null,"extra":{}}'
    assert loads(old, GenerationOptions) == GenerationOptions(max_tokens=10)
    assert loads(old, GenerationOptions).cache is None


def test_a_ttl_no_provider_knows_and_an_empty_key_are_refused() -> None:
    with pytest.raises(DecodeError) as bad_ttl:
        loads(b'{"ttl":"2h","key":null}', PromptCache)
    assert "$.ttl" in str(bad_ttl.value)
    with pytest.raises(DecodeError, match="prompt cache key must not be empty"):
        PromptCache(key="")


# -- Anthropic Messages ------------------------------------------------------------------


def test_anthropic_sends_one_top_level_automatic_marker() -> None:
    encoded = anthropic.encode_request(request(PromptCache()), provider=ProviderId("anthropic"))
    assert encoded.body == {
        "model": "m-1",
        "max_tokens": 50,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hello"}]}],
        "system": "Be brief.",
        "cache_control": {"type": "ephemeral"},
        "stream": True,
    }
    assert encoded.dropped == ()


def test_anthropic_without_the_option_sends_no_marker() -> None:
    encoded = anthropic.encode_request(request(None), provider=ProviderId("anthropic"))
    assert "cache_control" not in encoded.body


def test_anthropic_ttls_and_the_key_it_has_no_field_for() -> None:
    ant = ProviderId("anthropic")
    one_hour = anthropic.encode_request(request(PromptCache(ttl="1h")), provider=ant)
    assert one_hour.body["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert one_hour.dropped == ()
    day = anthropic.encode_request(request(PromptCache(ttl="24h", key="k1")), provider=ant)
    assert day.body["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert day.dropped == (
        Drop(
            "options.cache.ttl",
            "ttl",
            ADJUSTED,
            "'24h': Anthropic keeps a prefix at most 1h; 1h sent",
        ),
        Drop("options.cache.key", "key", UNSUPPORTED, "'k1': Anthropic has no cache key"),
    )


def test_anthropic_a_callers_own_cache_control_wins() -> None:
    own = {"type": "ephemeral", "ttl": "5m"}
    encoded = anthropic.encode_request(
        request(PromptCache(ttl="24h"), cache_control=own), provider=ProviderId("anthropic")
    )
    assert encoded.body["cache_control"] == own
    assert encoded.dropped == ()


def tools_with_markers(n: int) -> tuple[ToolSpec, ...]:
    marker = {"anthropic_messages": {"cache_control": {"type": "ephemeral"}}}
    return tuple(ToolSpec(f"t{i}", native=marker if i < n else {}) for i in range(5))


@pytest.mark.parametrize(("explicit", "sent"), [(3, True), (4, False)])
def test_anthropic_the_marker_never_makes_a_fifth_breakpoint(explicit: int, sent: bool) -> None:
    req = ModelRequest(
        "m-1",
        (Message.user("hello"),),
        tools=tools_with_markers(explicit),
        options=GenerationOptions(cache=PromptCache()),
    )
    encoded = anthropic.encode_request(req, provider=ProviderId("anthropic"))
    assert [("cache_control" in t) for t in encoded.body["tools"]] == [
        i < explicit for i in range(5)
    ]
    if sent:
        assert encoded.body["cache_control"] == {"type": "ephemeral"}
        assert encoded.dropped == ()
    else:
        assert "cache_control" not in encoded.body
        assert encoded.dropped == (
            Drop(
                "options.cache",
                "automatic marker",
                UNSUPPORTED,
                "the request already has 4 cache_control breakpoints (Anthropic allows 4)",
            ),
        )


# -- Bedrock Converse --------------------------------------------------------------------


def test_bedrock_puts_cache_points_after_the_system_prompt_and_the_last_message() -> None:
    encoded = bedrock.encode_request(request(PromptCache(ttl="1h")), provider=ProviderId("bedrock"))
    assert encoded.body == {
        "messages": [
            {
                "role": "user",
                "content": [{"text": "hello"}, {"cachePoint": {"type": "default", "ttl": "1h"}}],
            }
        ],
        "system": [{"text": "Be brief."}, {"cachePoint": {"type": "default", "ttl": "1h"}}],
        "inferenceConfig": {"maxTokens": 50},
    }
    assert encoded.dropped == ()


def test_bedrock_without_a_system_prompt_marks_the_last_message_only() -> None:
    encoded = bedrock.encode_request(
        request(PromptCache(ttl="24h", key="k2"), system=None), provider=ProviderId("bedrock")
    )
    assert encoded.body["messages"] == [
        {
            "role": "user",
            "content": [{"text": "hello"}, {"cachePoint": {"type": "default", "ttl": "1h"}}],
        }
    ]
    assert "system" not in encoded.body
    assert encoded.dropped == (
        Drop(
            "options.cache.ttl",
            "ttl",
            ADJUSTED,
            "'24h': Bedrock keeps a prefix at most 1h; 1h sent",
        ),
        Drop("options.cache.key", "key", UNSUPPORTED, "'k2': Bedrock has no cache key"),
    )


def test_bedrock_a_default_ttl_sends_a_bare_point_and_tools_are_left_unmarked() -> None:
    req = ModelRequest(
        "m-1",
        (Message.user("hello"),),
        system="Be brief.",
        tools=(ToolSpec("f"),),
        options=GenerationOptions(cache=PromptCache()),
    )
    body = bedrock.encode_request(req, provider=ProviderId("bedrock")).body
    assert body["system"] == [{"text": "Be brief."}, {"cachePoint": {"type": "default"}}]
    assert body["toolConfig"] == {
        "tools": [
            {
                "toolSpec": {
                    "name": "f",
                    "description": "f",
                    "inputSchema": {"json": {"type": "object", "properties": {}}},
                }
            }
        ]
    }


# -- OpenAI Responses and Chat Completions -------------------------------------------------


@pytest.mark.parametrize(
    ("ttl", "retention"), [(None, None), ("5m", "in_memory"), ("1h", "24h"), ("24h", "24h")]
)
def test_responses_maps_key_and_retention(ttl: Any, retention: str | None) -> None:
    encoded = responses.encode_request(
        request(PromptCache(ttl=ttl, key="user-7")), provider=ProviderId("openai")
    )
    fields = {k: v for k, v in encoded.body.items() if k.startswith("prompt_cache")}
    expected = {"prompt_cache_key": "user-7"}
    if retention is not None:
        expected["prompt_cache_retention"] = retention
    assert fields == expected
    assert encoded.dropped == ()


def test_responses_a_callers_own_retention_wins() -> None:
    encoded = responses.encode_request(
        request(PromptCache(ttl="1h"), prompt_cache_retention="in_memory"),
        provider=ProviderId("openai"),
    )
    assert encoded.body["prompt_cache_retention"] == "in_memory"


def chat_body(provider: str, cache: PromptCache, **extra: Any) -> tuple[dict[str, Any], Any]:
    encoded = chat.encode_request(request(cache, **extra), provider=ProviderId(provider))
    return encoded.body, encoded.dropped


def test_chat_on_openai_sends_key_and_retention() -> None:
    body, dropped = chat_body("openai", PromptCache(ttl="5m", key="user-7"))
    assert body == {
        "model": "m-1",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "hello"},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_completion_tokens": 50,
        "prompt_cache_key": "user-7",
        "prompt_cache_retention": "in_memory",
    }
    assert dropped == ()


def test_chat_on_azure_sends_the_same_fields() -> None:
    body, dropped = chat_body("azure", PromptCache(ttl="24h", key="user-8"))
    assert (body["prompt_cache_key"], body["prompt_cache_retention"]) == ("user-8", "24h")
    assert dropped == ()


def test_chat_on_openrouter_sends_a_top_level_cache_control() -> None:
    body, dropped = chat_body("openrouter", PromptCache(ttl="1h", key="k3"))
    assert body["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert "prompt_cache_key" not in body
    assert dropped == (
        Drop("options.cache.key", "key", UNSUPPORTED, "'k3': openrouter has no cache key"),
    )
    own, dropped = chat_body("openrouter", PromptCache(), cache_control={"type": "ephemeral"})
    assert own["cache_control"] == {"type": "ephemeral"}
    assert dropped == ()


def test_chat_on_xai_sends_the_key_as_its_conversation_header() -> None:
    encoded = chat.encode_request(
        request(PromptCache(ttl="1h", key="conv-9")), provider=ProviderId("xai")
    )
    assert encoded.headers == {"x-grok-conv-id": "conv-9"}
    assert not {k for k in encoded.body if "cache" in k}
    assert encoded.dropped == (
        Drop(
            "options.cache.ttl",
            "ttl",
            UNSUPPORTED,
            "'1h': xai caches automatically with no lifetime to set",
        ),
    )
    bad = chat.encode_request(request(PromptCache(key="a\nb")), provider=ProviderId("xai"))
    assert bad.headers == {}
    assert bad.dropped == (
        Drop("options.cache.key", "key", INVALID, "'a\\nb': not a valid x-grok-conv-id header"),
    )
    plain = chat.encode_request(request(PromptCache()), provider=ProviderId("xai"))
    assert (plain.headers, plain.dropped) == ({}, ())


def test_chat_on_a_provider_that_caches_by_itself_reports_only_what_it_cannot_set() -> None:
    plain, dropped = chat_body("deepseek", PromptCache())
    assert dropped == ()
    assert not {k for k in plain if "cache" in k}
    _, dropped = chat_body("deepseek", PromptCache(ttl="1h", key="k4"))
    assert dropped == (
        Drop(
            "options.cache.ttl",
            "ttl",
            UNSUPPORTED,
            "'1h': deepseek caches automatically with no lifetime to set",
        ),
        Drop("options.cache.key", "key", UNSUPPORTED, "'k4': deepseek has no cache key"),
    )


def test_chat_on_a_provider_with_no_caching_control_reports_the_option() -> None:
    body, dropped = chat_body("mistral", PromptCache())
    assert not {k for k in body if "cache" in k}
    assert dropped == (
        Drop("options.cache", "cache", UNSUPPORTED, "mistral has no prompt-cache control"),
    )


# -- Gemini and Ollama ---------------------------------------------------------------------


def test_gemini_caches_implicitly_and_reports_what_it_cannot_set() -> None:
    g = ProviderId("gemini")
    plain = gemini.encode_request(request(None), provider=g)
    bare = gemini.encode_request(request(PromptCache()), provider=g)
    assert bare.body == plain.body
    assert bare.dropped == ()
    asked = gemini.encode_request(request(PromptCache(ttl="5m", key="k5")), provider=g)
    assert asked.body == plain.body
    assert asked.dropped == (
        Drop(
            "options.cache.ttl",
            "ttl",
            UNSUPPORTED,
            "'5m': Gemini caches automatically with no lifetime to set",
        ),
        Drop("options.cache.key", "key", UNSUPPORTED, "'k5': Gemini has no cache key"),
    )


def test_ollama_reports_the_option() -> None:
    o = ProviderId("ollama")
    encoded = ollama.encode_request(request(PromptCache(ttl="1h")), provider=o)
    assert encoded.body == ollama.encode_request(request(None), provider=o).body
    assert encoded.dropped == (
        Drop("options.cache", "cache", UNSUPPORTED, "Ollama has no prompt-cache control"),
    )


# -- through the client, over a loopback server ----------------------------------------


def test_the_client_sends_the_marker_and_reports_the_shortfall_on_the_response() -> None:
    async def main() -> tuple[list[dict[str, Any]], tuple[str, ...]]:
        with LoopbackServer([replay(text_reply("Cached."))]) as server:
            async with Client(env=env_for(server)) as client:
                options = GenerationOptions(cache=PromptCache(ttl="24h"))
                async with client.stream(MODEL, "hi", options=options) as stream:
                    await stream.final()
                return [json.loads(r.body) for r in server.requests], stream.dropped

    sent, dropped = asyncio.run(main())
    assert [body["cache_control"] for body in sent] == [{"type": "ephemeral", "ttl": "1h"}]
    assert dropped == (
        Drop(
            "options.cache.ttl",
            "ttl",
            ADJUSTED,
            "'24h': Anthropic keeps a prefix at most 1h; 1h sent",
        ),
    )


# -- the command line ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "marker"),
    [
        (["--cache"], {"type": "ephemeral"}),
        (["--cache", "1h"], {"type": "ephemeral", "ttl": "1h"}),
        (["--cache", "24h"], {"type": "ephemeral", "ttl": "1h"}),
        ([], None),
    ],
)
def test_ask_cache_flag(tmp_path: Path, flag: list[str], marker: Any) -> None:
    with LoopbackServer([replay(text_reply("Cached."))]) as server:
        env = {**base_env(tmp_path), "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY}
        done = run(env, "ask", "-m", MODEL, *flag, "--", "Hello there")
    assert done.returncode == 0, done.stderr
    (sent,) = [json.loads(r.body) for r in server.requests]
    assert sent.get("cache_control") == marker
    assert sent["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Hello there"}]}
    ]
