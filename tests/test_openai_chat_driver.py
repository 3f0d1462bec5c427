"""The Chat Completions shape through the real driver, against a loopback server.

A two-turn tool loop: the first streamed response asks for a tool, the second
request must carry the model's reasoning and tool call back natively; then
the error paths (429 with retry-after, a mid-stream error frame, a body cut
off before ``[DONE]``) and the non-streaming path.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import msgspec
import pytest

from elelem.errors import IncompleteStreamError, InvalidRequestError, RateLimitError
from elelem.shapes.openai_chat import SHAPE
from elelem.stream import AssembledResponse
from elelem.testing.servers import LoopbackServer, Reply, replay, sse_body, status, truncate
from elelem.transport.driver import Driver, Timeouts
from elelem.transport.endpoint import Endpoint
from elelem.vocabulary import (
    CallId,
    Message,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolSpec,
    Usage,
)
from elelem.wire import ModelRequest

DEEPSEEK = ProviderId("deepseek")
KEY = "sk-test-0123456789"


def frames(*deltas: dict[str, Any], finish: str, usage: dict[str, Any]) -> bytes:
    base = {"id": "c9", "object": "chat.completion.chunk", "model": "deepseek-reasoner"}
    out: list[tuple[str | None, str]] = []
    for delta in deltas:
        choice = {"index": 0, "delta": delta, "finish_reason": None}
        out.append((None, json.dumps({**base, "choices": [choice]})))
    last = {"index": 0, "delta": {}, "finish_reason": finish}
    out.append((None, json.dumps({**base, "choices": [last], "usage": usage})))
    out.append((None, "[DONE]"))
    return sse_body(out)


TOOL_TURN = frames(
    {"role": "assistant", "content": None, "reasoning_content": "Need the weather."},
    {
        "tool_calls": [
            {
                "index": 0,
                "id": "call_0",
                "type": "function",
                "function": {"name": "weather", "arguments": ""},
            }
        ]
    },
    {"tool_calls": [{"index": 0, "function": {"arguments": '{"city": "Oslo"}'}}]},
    finish="tool_calls",
    usage={
        "prompt_tokens": 50,
        "completion_tokens": 20,
        "completion_tokens_details": {"reasoning_tokens": 8},
    },
)
ANSWER_TURN = frames(
    {"content": "It is "},
    {"content": "sunny."},
    finish="stop",
    usage={"prompt_tokens": 80, "completion_tokens": 4},
)

TOOLS = (ToolSpec("weather", "Weather by city", {"type": "object"}),)


async def stream_once(server: LoopbackServer, request: ModelRequest) -> AssembledResponse:
    driver = Driver(timeouts=Timeouts(connect=2, idle=5))
    try:
        endpoint = Endpoint(DEEPSEEK, server.url + "/v1", api_key=KEY)
        async with driver.stream(endpoint, SHAPE, request) as stream:
            return await stream.final()
    finally:
        await driver.aclose()


def test_a_tool_loop_replays_reasoning_and_the_call_natively() -> None:
    async def main() -> None:
        with LoopbackServer([replay(TOOL_TURN, chunk_size=37), replay(ANSWER_TURN)]) as server:
            first_request = ModelRequest(
                model="deepseek-reasoner",
                messages=(Message.user("Weather in Oslo?"),),
                tools=TOOLS,
            )
            first = await stream_once(server, first_request)
            field = ProviderPayload(DEEPSEEK, "reasoning-field", None, "reasoning_content")
            assert first.content == (
                ReasoningBlock("Need the weather.", (field,)),
                ToolCallBlock(CallId("call_0"), "weather", '{"city": "Oslo"}'),
            )
            assert first.usage == Usage(
                input=50,
                output=12,
                reasoning=8,
                raw={
                    "prompt_tokens": 50,
                    "completion_tokens": 20,
                    "completion_tokens_details": {"reasoning_tokens": 8},
                },
            )
            result = Message(
                role="user", content=(ToolResultBlock(CallId("call_0"), "sunny"),), source="tool"
            )
            second_request = ModelRequest(
                model="deepseek-reasoner",
                messages=(*first_request.messages, first.to_message(), result),
                tools=TOOLS,
            )
            second = await stream_once(server, second_request)
            assert second.content == (TextBlock("It is sunny."),)
            assert second.finish_reason == "stop"
            sent = [msgspec.json.decode(r.body) for r in server.requests]
        assert [r.path for r in server.requests] == ["/v1/chat/completions"] * 2
        assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
        assert sent[1]["messages"] == [
            {"role": "user", "content": "Weather in Oslo?"},
            {
                "role": "assistant",
                "reasoning_content": "Need the weather.",
                "tool_calls": [
                    {
                        "id": "call_0",
                        "type": "function",
                        "function": {"name": "weather", "arguments": '{"city": "Oslo"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_0", "content": "sunny"},
        ]
        assert sent[0]["stream_options"] == {"include_usage": True}

    asyncio.run(main())


REQUEST = ModelRequest(model="deepseek-chat", messages=(Message.user("hi"),))


def test_rate_limit_carries_retry_after() -> None:
    async def main() -> None:
        body = b'{"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}'
        reply = status(429, body, headers={"retry-after": "3"})
        with LoopbackServer([reply]) as server, pytest.raises(RateLimitError) as err:
            await stream_once(server, REQUEST)
        assert (err.value.status, err.value.retry_after, err.value.retryable) == (429, 3.0, True)
        assert KEY not in str(err.value)

    asyncio.run(main())


def test_a_mid_stream_error_frame_is_typed() -> None:
    error = {
        "error": {"message": "bad tool call", "type": "invalid_request_error", "status_code": 400}
    }
    body = sse_body(
        [
            (
                None,
                json.dumps(
                    {
                        "id": "c",
                        "choices": [
                            {"index": 0, "delta": {"content": "Hi"}, "finish_reason": None}
                        ],
                    }
                ),
            ),
            ("error", json.dumps(error)),
        ]
    )

    async def main() -> None:
        with (
            LoopbackServer([replay(body)]) as server,
            pytest.raises(InvalidRequestError, match="bad tool call"),
        ):
            await stream_once(server, REQUEST)

    asyncio.run(main())


def test_a_body_cut_before_done_is_incomplete() -> None:
    cut = ANSWER_TURN.index(b"sunny")

    async def main() -> None:
        with (
            LoopbackServer([truncate(ANSWER_TURN, cut)]) as server,
            pytest.raises(IncompleteStreamError),
        ):
            await stream_once(server, REQUEST)

    asyncio.run(main())


def test_non_streaming_complete() -> None:
    body = json.dumps(
        {
            "id": "c1",
            "object": "chat.completion",
            "model": "deepseek-chat",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "Hello"},
                }
            ],
            "usage": {"prompt_tokens": 2, "completion_tokens": 1},
        }
    ).encode()

    async def main() -> None:
        with LoopbackServer(
            [Reply(200, {"content-type": "application/json"}, replay(body).script)]
        ) as server:
            driver = Driver(timeouts=Timeouts(connect=2, idle=5))
            try:
                endpoint = Endpoint(DEEPSEEK, server.url, api_key=KEY)
                got = await driver.complete(endpoint, SHAPE, REQUEST)
            finally:
                await driver.aclose()
            assert msgspec.json.decode(server.requests[0].body)["stream"] is False
        assert got.content == (TextBlock("Hello"),)
        assert got.response_id == "c1" and got.finish_reason == "stop"

    asyncio.run(main())
