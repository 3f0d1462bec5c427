"""The OpenAI Responses shape end to end: client, real transport, loopback server.

A two-turn tool conversation runs against a server on 127.0.0.1; the second
request must carry the first response's reasoning and function-call items
byte-for-byte as the server sent them.  The live test does the same against
the real API when ``OPENAI_API_KEY`` is set.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from elelem import SyncClient
from elelem.testing.servers import LoopbackServer, replay, sse_body
from elelem.vocabulary import (
    CallId,
    GenerationOptions,
    Message,
    ReasoningBlock,
    ReasoningOptions,
    ToolCallBlock,
    ToolResultBlock,
    ToolSpec,
)

KEY = "sk-test-responses-000"

REASONING = {
    "id": "rs_9",
    "type": "reasoning",
    "summary": [{"type": "summary_text", "text": "Need the weather."}],
    "encrypted_content": "gAAAAB-opaque==",
}
CALL = {
    "id": "fc_9",
    "type": "function_call",
    "status": "completed",
    "arguments": '{"city":"Paris"}',
    "call_id": "call_9",
    "name": "weather",
}
ANSWER = {
    "id": "msg_9",
    "type": "message",
    "status": "completed",
    "role": "assistant",
    "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": "Sunny."}],
}


def _response(rid: str, status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": rid,
        "object": "response",
        "model": "gpt-5-mini",
        "status": status,
        "output": output,
    }


def _body(rid: str, items: list[dict[str, Any]]) -> bytes:
    frames: list[tuple[str | None, str]] = [
        (
            "response.created",
            json.dumps({"type": "response.created", "response": _response(rid, "in_progress", [])}),
        )
    ]
    for i, item in enumerate(items):
        for kind in ("response.output_item.added", "response.output_item.done"):
            frames.append((kind, json.dumps({"type": kind, "output_index": i, "item": item})))
    done = {"type": "response.completed", "response": _response(rid, "completed", items)}
    frames.append(("response.completed", json.dumps(done)))
    return sse_body(frames)


def test_two_turn_tool_conversation_replays_items_exactly() -> None:
    env = {"OPENAI_BASE_URL": "", "OPENAI_API_KEY": KEY, "ELELEM_CONFIG": "/nonexistent/x.toml"}
    tools = [ToolSpec("weather", "Weather for a city", {"type": "object", "properties": {}})]
    with LoopbackServer(
        [replay(_body("resp_1", [REASONING, CALL])), replay(_body("resp_2", [ANSWER]))]
    ) as server:
        env["OPENAI_BASE_URL"] = server.url + "/v1"
        with SyncClient(env=env) as client:
            conversation = [Message.user("Weather in Paris?")]
            with client.stream("openai:gpt-5-mini", conversation, tools=tools) as stream:
                first = stream.final()
            assert first.finish_reason == "tool-calls"
            reasoning, call = first.blocks
            assert isinstance(reasoning, ReasoningBlock) and reasoning.text == "Need the weather."
            assert isinstance(call, ToolCallBlock) and call.input == {"city": "Paris"}
            conversation += [
                first.to_message(),
                Message(
                    role="user",
                    content=(ToolResultBlock(CallId("call_9"), "18C sunny"),),
                    source="tool",
                ),
            ]
            with client.stream("openai:gpt-5-mini", conversation, tools=tools) as stream:
                second = stream.final()
            assert second.text == "Sunny."
        sent = [json.loads(r.body) for r in server.requests]
    assert [r.path for r in server.requests] == ["/v1/responses", "/v1/responses"]
    assert server.requests[1].headers["authorization"] == f"Bearer {KEY}"
    assert sent[1]["input"] == [
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "Weather in Paris?"}],
        },
        REASONING,
        CALL,
        {"type": "function_call_output", "call_id": "call_9", "output": "18C sunny"},
    ]
    assert (sent[1]["store"], sent[1]["include"], sent[1]["stream"]) == (
        False,
        ["reasoning.encrypted_content"],
        True,
    )


@pytest.mark.live
@pytest.mark.skipif(
    not os.environ.get("OPENAI_API_KEY"), reason="live test: set OPENAI_API_KEY to run it"
)
def test_live_openai_accepts_native_replay_of_reasoning_and_calls() -> None:
    model = "openai:" + os.environ.get("ELELEM_LIVE_OPENAI_MODEL", "gpt-5-mini")
    tools = [
        ToolSpec(
            "weather",
            "Current weather for a city",
            {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        )
    ]
    options = GenerationOptions(reasoning=ReasoningOptions(effort="low"), tool_choice="required")
    with SyncClient() as client:
        conversation = [Message.user("What's the weather in Paris? Use the tool.")]
        with client.stream(model, conversation, tools=tools, options=options) as stream:
            first = stream.final()
        calls = [b for b in first.blocks if isinstance(b, ToolCallBlock)]
        assert first.finish_reason == "tool-calls" and calls
        results = tuple(ToolResultBlock(c.id, "18C and sunny") for c in calls)
        conversation += [first.to_message(), Message(role="user", content=results, source="tool")]
        with client.stream(model, conversation, tools=tools) as stream:
            second = stream.final()
        assert second.finish_reason == "stop"
        assert second.text
