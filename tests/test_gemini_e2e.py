"""The Gemini shape end to end: client, real transport, loopback server.

A two-turn tool conversation runs against a server on 127.0.0.1; the second
request must carry the first response's thought and function call with their
thought signatures, on the parts they arrived on, and the grounded answer's
citations must land on the right code points.  The live test does the same
against the real API when ``GEMINI_API_KEY`` is set.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from elelem import SyncClient
from elelem.errors import RateLimitError
from elelem.testing.servers import LoopbackServer, replay, sse_body, status
from elelem.vocabulary import (
    GenerationOptions,
    Message,
    ReasoningBlock,
    ReasoningOptions,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolSpec,
    WebSearch,
)

KEY = "AIza-test-gemini-000"
MODEL = "gemini-3-pro-preview"


def _frame(parts: list[dict[str, Any]], rid: str, **candidate: Any) -> tuple[None, str]:
    chunk = {
        "candidates": [{"content": {"role": "model", "parts": parts}, "index": 0, **candidate}],
        "modelVersion": MODEL,
        "responseId": rid,
        "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 5},
    }
    return (None, json.dumps(chunk))


THOUGHT = {"text": "Need the weather.", "thought": True, "thoughtSignature": "VEhPVUdIVA=="}
CALL = {
    "functionCall": {"name": "weather", "args": {"city": "Zürich"}},
    "thoughtSignature": "Q0FMTFNJRw==",
}
ANSWER = "Zürich: 18°C, sunny."
GROUNDING = {
    "webSearchQueries": ["Zürich weather"],
    "groundingChunks": [{"web": {"uri": "https://meteo.example/zh", "title": "meteo.example"}}],
    "groundingSupports": [
        # "18°C, sunny." starts at byte 9 ("ü" is two bytes) and spans 13 bytes.
        {
            "segment": {"startIndex": 9, "endIndex": 22, "text": "18°C, sunny."},
            "groundingChunkIndices": [0],
        }
    ],
}


def test_two_turn_tool_conversation_replays_signed_parts_exactly() -> None:
    first_body = sse_body(
        [
            _frame([THOUGHT], "r-1"),
            _frame([CALL], "r-1"),
            _frame([{"text": ""}], "r-1", finishReason="STOP"),
        ]
    )
    second_body = sse_body(
        [
            _frame([{"text": "Zürich: "}], "r-2"),
            _frame(
                [{"text": "18°C, sunny."}], "r-2", finishReason="STOP", groundingMetadata=GROUNDING
            ),
        ]
    )
    env = {"GEMINI_API_KEY": KEY, "ELELEM_CONFIG": "/nonexistent/x.toml"}
    tools = [ToolSpec("weather", "Weather for a city", {"type": "object", "properties": {}})]
    with LoopbackServer([replay(first_body), replay(second_body)]) as server:
        env["GOOGLE_GEMINI_BASE_URL"] = server.url
        with SyncClient(env=env) as client:
            conversation = [Message.user("Weather in Zürich?")]
            with client.stream(f"google:{MODEL}", conversation, tools=tools) as stream:
                first = stream.final()
            assert first.finish_reason == "tool-calls"
            thought, call = first.blocks
            assert isinstance(thought, ReasoningBlock) and thought.text == "Need the weather."
            assert isinstance(call, ToolCallBlock) and call.input == {"city": "Zürich"}
            conversation += [
                first.to_message(),
                Message(
                    role="user", content=(ToolResultBlock(call.id, "18C sunny"),), source="tool"
                ),
            ]
            with client.stream(
                f"google:{MODEL}", conversation, tools=tools, hosted_tools=[WebSearch()]
            ) as stream:
                second = stream.final()
        sent = [json.loads(r.body) for r in server.requests]
    path = f"/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"
    assert [r.path for r in server.requests] == [path, path]
    assert server.requests[0].headers["x-goog-api-key"] == KEY
    assert "authorization" not in server.requests[0].headers
    assert sent[1]["contents"] == [
        {"role": "user", "parts": [{"text": "Weather in Zürich?"}]},
        {"role": "model", "parts": [THOUGHT, CALL]},
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "weather", "response": {"content": "18C sunny"}}}
            ],
        },
    ]
    assert sent[1]["tools"][-1] == {"google_search": {}}
    assert second.text == ANSWER
    (block,) = second.blocks
    assert isinstance(block, TextBlock)
    ((attribution),) = block.attributions
    assert attribution.range == (8, 20) and ANSWER[8:20] == "18°C, sunny."
    assert attribution.source.url == "https://meteo.example/zh"
    assert [(a.name, a.state, a.summary) for a in second.activities] == [
        ("web_search", "started", ""),
        ("web_search", "completed", "1 source"),
    ]


def test_complete_posts_generate_content_and_maps_the_json_body() -> None:
    body = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [{"text": "Café ☕", "thoughtSignature": "c2ln"}],
                },
                "finishReason": "MAX_TOKENS",
            }
        ],
        "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2},
        "modelVersion": MODEL,
        "responseId": "r-9",
    }
    env = {"GEMINI_API_KEY": KEY, "ELELEM_CONFIG": "/nonexistent/x.toml"}
    reply = replay(json.dumps(body).encode(), content_type="application/json")
    with LoopbackServer([reply]) as server:
        env["GOOGLE_GEMINI_BASE_URL"] = server.url
        with SyncClient(env=env) as client:
            result = client.complete(f"google:{MODEL}", [Message.user("Hi")])
        (request,) = server.requests
    assert request.path == f"/v1beta/models/{MODEL}:generateContent"
    assert json.loads(request.body) == {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
    assert (result.response_id, result.model, result.text, result.finish_reason) == (
        "r-9",
        MODEL,
        "Café ☕",
        "max-tokens",
    )


def test_a_quota_error_is_a_rate_limit_with_the_servers_delay() -> None:
    error = {
        "error": {
            "code": 429,
            "message": "Resource has been exhausted (e.g. check quota).",
            "status": "RESOURCE_EXHAUSTED",
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "31s"}],
        }
    }
    env = {"GEMINI_API_KEY": KEY, "ELELEM_CONFIG": "/nonexistent/x.toml"}
    with LoopbackServer([status(429, json.dumps(error).encode())]) as server:
        env["GOOGLE_GEMINI_BASE_URL"] = server.url
        with (
            SyncClient(env=env, max_retries=0) as client,
            pytest.raises(RateLimitError) as caught,
            client.stream(f"google:{MODEL}", [Message.user("Hi")]) as stream,
        ):
            stream.final()
    assert (caught.value.status, caught.value.retry_after, caught.value.retryable) == (
        429,
        31.0,
        True,
    )
    assert KEY not in repr(caught.value) and KEY not in str(caught.value)


@pytest.mark.live
@pytest.mark.skipif(
    not os.environ.get("GEMINI_API_KEY"), reason="live test: set GEMINI_API_KEY to run it"
)
def test_live_gemini_accepts_native_replay_of_signed_calls() -> None:
    model = "google:" + os.environ.get("ELELEM_LIVE_GEMINI_MODEL", "gemini-2.5-flash")
    tools = [
        ToolSpec(
            "weather",
            "Current weather for a city",
            {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        )
    ]
    options = GenerationOptions(
        reasoning=ReasoningOptions(budget_tokens=512), tool_choice="required"
    )
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
