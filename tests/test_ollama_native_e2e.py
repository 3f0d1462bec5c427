"""The Ollama native shape end to end: client, real transport, NDJSON from a
loopback server.

A two-turn tool conversation runs against a server on 127.0.0.1 that sends
the NDJSON body in small writes cutting lines apart; the second request must
carry the first response's thinking and tool call back as Ollama sent them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from elelem import SyncClient
from elelem.errors import MalformedStreamError, NotFoundError, ProviderStreamError
from elelem.testing.servers import LoopbackServer, replay, status
from elelem.vocabulary import (
    GenerationOptions,
    Message,
    ReasoningBlock,
    ReasoningOptions,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolSpec,
)

MODEL = "qwen3:8b"
NDJSON = "application/x-ndjson"
ENV = {"ELELEM_CONFIG": "/nonexistent/x.toml"}


def _ndjson(*objs: dict[str, Any]) -> bytes:
    return "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs).encode()


def _line(message: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {
        "model": MODEL,
        "created_at": "2026-03-06T14:52:13Z",
        "message": {"role": "assistant", **message},
        "done": False,
        **top,
    }


DONE = {"done": True, "done_reason": "stop", "prompt_eval_count": 20, "eval_count": 9}
CALL = {
    "id": "call_7",
    "function": {"index": 0, "name": "weather", "arguments": {"city": "Zürich"}},
}


def test_two_turn_tool_conversation_over_ndjson_replays_thinking_and_calls() -> None:
    first = _ndjson(
        _line({"content": "", "thinking": "Need the "}),
        _line({"content": "", "thinking": "weather."}),
        _line({"content": "", "tool_calls": [CALL]}),
        _line({"content": ""}, **DONE),
    )
    second = _ndjson(
        _line({"content": "Zürich: "}),
        _line({"content": "18°C."}),
        _line({"content": ""}, **DONE),
    )
    tools = [ToolSpec("weather", "Weather for a city", {"type": "object", "properties": {}})]
    options = GenerationOptions(reasoning=ReasoningOptions(effort="medium"))
    replies = [
        replay(first, content_type=NDJSON, chunk_size=7),
        replay(second, content_type=NDJSON, chunk_size=5),
    ]
    with LoopbackServer(replies) as server:
        env = {**ENV, "ELELEM_OLLAMA_NATIVE_BASE_URL": server.url}
        with SyncClient(env=env) as client:
            conversation = [Message.user("Weather in Zürich?")]
            model = f"ollama-native:{MODEL}"
            with client.stream(model, conversation, tools=tools, options=options) as stream:
                one = stream.final()
            assert one.finish_reason == "tool-calls"
            thought, call = one.blocks
            assert thought == ReasoningBlock("Need the weather.")
            assert isinstance(call, ToolCallBlock)
            assert (call.id, call.name, call.input) == ("call_7", "weather", {"city": "Zürich"})
            conversation += [
                one.to_message(),
                Message(role="user", content=(ToolResultBlock(call.id, "18C"),), source="tool"),
            ]
            with client.stream(model, conversation, tools=tools, options=options) as stream:
                two = stream.final()
        requests = list(server.requests)
    assert [r.path for r in requests] == ["/api/chat", "/api/chat"]
    assert "authorization" not in requests[0].headers
    assert requests[0].headers["accept"] == NDJSON
    sent = [json.loads(r.body) for r in requests]
    assert sent[0]["think"] == "medium" and sent[0]["stream"] is True
    assert sent[1]["messages"] == [
        {"role": "user", "content": "Weather in Zürich?"},
        {
            "role": "assistant",
            "content": "",
            "thinking": "Need the weather.",
            "tool_calls": [CALL],
        },
        {"role": "tool", "content": "18C", "tool_name": "weather", "tool_call_id": "call_7"},
    ]
    assert two.blocks == (TextBlock("Zürich: 18°C."),)
    assert two.usage is not None and (two.usage.input, two.usage.output) == (20, 9)


def test_complete_posts_stream_false_and_maps_the_json_body() -> None:
    body = json.dumps(
        _line({"content": "Hi ☕", "thinking": "t"}, **{**DONE, "done_reason": "length"})
    )
    with LoopbackServer([replay(body.encode(), content_type="application/json")]) as server:
        env = {**ENV, "ELELEM_OLLAMA_NATIVE_BASE_URL": server.url}
        with SyncClient(env=env) as client:
            result = client.complete(f"ollama-native:{MODEL}", [Message.user("Hi")])
        (request,) = server.requests
    assert json.loads(request.body) == {
        "model": MODEL,
        "messages": [{"role": "user", "content": "Hi"}],
        "stream": False,
    }
    assert (result.model, result.text, result.finish_reason) == (MODEL, "Hi ☕", "max-tokens")


def test_complete_with_a_body_that_is_not_utf8_is_malformed_not_replaced() -> None:
    body = json.dumps(_line({"content": "Hi"}, **DONE)).encode().replace(b"Hi", b"H\xffi")
    with LoopbackServer([replay(body, content_type="application/json")]) as server:
        env = {**ENV, "ELELEM_OLLAMA_NATIVE_BASE_URL": server.url}
        with SyncClient(env=env) as client, pytest.raises(MalformedStreamError) as caught:
            client.complete(f"ollama-native:{MODEL}", [Message.user("Hi")])
    at = body.index(b"\xff")
    assert caught.value.message == (
        f"ollama response body is not valid UTF-8 (byte 0xff at offset {at})"
    )


def test_an_unpulled_model_is_not_found() -> None:
    error = b'{"error":"model \'nope\' not found"}'
    with LoopbackServer([status(404, error)]) as server:
        env = {**ENV, "ELELEM_OLLAMA_NATIVE_BASE_URL": server.url}
        with (
            SyncClient(env=env) as client,
            pytest.raises(NotFoundError) as caught,
            client.stream("ollama-native:nope", [Message.user("Hi")]) as stream,
        ):
            stream.final()
    assert (caught.value.status, caught.value.message) == (
        404,
        "ollama-native 404 error: model 'nope' not found",
    )


def test_an_error_line_mid_stream_is_a_provider_stream_error() -> None:
    body = _ndjson(_line({"content": "Hal"}), {"error": "model runner has unexpectedly stopped"})
    with LoopbackServer([replay(body, content_type=NDJSON)]) as server:
        env = {**ENV, "ELELEM_OLLAMA_NATIVE_BASE_URL": server.url}
        with (
            SyncClient(env=env) as client,
            pytest.raises(ProviderStreamError) as caught,
            client.stream(f"ollama-native:{MODEL}", [Message.user("Hi")]) as stream,
        ):
            stream.final()
    assert (
        caught.value.message == "ollama-native stream error: model runner has unexpectedly stopped"
    )
