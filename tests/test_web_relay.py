"""Relaying elelem to a useChat page: a FastAPI endpoint taking useChat's
request (its UIMessages made into elelem messages) and a tool loop of a
stored conversation, each read by the `ai` package's own client code."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI, Request

from elelem.client import Client
from elelem.conversation import Conversation, SQLiteStore
from elelem.errors import DecodeError
from elelem.testing.asgi import ASGIServer
from elelem.testing.servers import LoopbackServer
from elelem.tools import tool
from elelem.turns.toolloop import run
from elelem.vocabulary import (
    CallId,
    DocumentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    UnknownBlock,
    URLSource,
)
from elelem.web import UIMessageStreamResponse, messages_from_ui, relay
from toolloop_wires import WIRES, anthropic_calls, anthropic_text
from web_helpers import ai_reader_ready, demo_interaction, png, read_with_ai, replaying


def test_a_fastapi_endpoint_relays_a_stream_to_use_chat() -> None:
    node = ai_reader_ready()
    with replaying(demo_interaction()) as open_stream:
        app = FastAPI()

        @app.post("/api/chat")
        async def chat(request: Request) -> UIMessageStreamResponse:
            body = await request.json()
            return UIMessageStreamResponse(open_stream(messages_from_ui(body["messages"])))

        with ASGIServer(app) as server:
            (got,) = read_with_ai(node, [{"url": server.url + "/api/chat", "body": {}}])
        sent = json.loads(open_stream.server.requests[0].body)
    # useChat's message reached the provider as the user's text.
    assert sent["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert got["errors"] == []
    parts = got["message"]["parts"]
    kinds = [p["type"] for p in parts]
    assert kinds.count("source-url") == 4 and kinds.count("data-hosted-activity") == 1
    assert kinds[:4] == ["step-start", "reasoning", "text", "data-hosted-activity"]
    assert (
        parts[3]["data"]["status"]
        == 'searched "Eiffel Tower height and completion date" → 5 results'
    )
    cited = [p for p in parts if p["type"] == "text" and "providerMetadata" in p]
    assert len(cited) == 4


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return {"Paris": "18°C"}[city]


def test_a_tool_loop_is_one_message_with_steps(tmp_path: Path) -> None:
    node = ai_reader_ready()
    wire = WIRES[0]
    replies = [
        anthropic_calls([("call_1", "get_weather", {"city": "Paris"})]),
        anthropic_text("It is 18°C in Paris."),
    ]
    store = SQLiteStore(tmp_path / "log.db")
    conv = Conversation.create(store)
    with LoopbackServer(replies) as provider:
        app = FastAPI()

        @app.post("/api/chat")
        async def chat(request: Request) -> UIMessageStreamResponse:
            async def go(on_chunk: Any, on_call: Any) -> object:
                async with Client(env=wire.env(provider)) as client:
                    return await run(
                        conv,
                        client,
                        wire.model,
                        "Weather in Paris?",
                        tools=[get_weather],
                        on_chunk=on_chunk,
                        on_call=on_call,
                    )

            return UIMessageStreamResponse(relay(go), message_id="loop-1")

        with ASGIServer(app) as server:
            (got,) = read_with_ai(node, [{"url": server.url + "/api/chat", "body": {}}])
    assert got["errors"] == []
    message = got["message"]
    assert message["id"] == "loop-1"
    assert message["parts"] == [
        {"type": "step-start"},
        {
            "type": "tool-get_weather",
            "toolCallId": "call_1",
            "state": "output-available",
            "input": {"city": "Paris"},
            "output": "18°C",
        },
        {"type": "step-start"},
        {"type": "text", "text": "It is 18°C in Paris.", "state": "done"},
    ]
    assert message["metadata"]["finishReason"] == "stop"
    assert message["metadata"]["usage"]["input"] == 20  # both steps summed
    # What the page saw is what the log holds.
    stored = [p for e in store.load(conv.id) for p in getattr(e.body, "content", ())]
    assert ToolResultBlock(CallId("call_1"), "18°C", name="get_weather") in stored


def test_messages_from_ui() -> None:
    history = messages_from_ui(
        [
            {"id": "s", "role": "system", "parts": [{"type": "text", "text": "be brief"}]},
            {"id": "u", "role": "user", "parts": [{"type": "text", "text": "weather?"}]},
            {
                "id": "a",
                "role": "assistant",
                "parts": [
                    {"type": "step-start"},
                    {"type": "reasoning", "text": "unsigned, never resent"},
                    {"type": "tool-get_weather", "toolCallId": "c1", "state": "output-available",
                     "input": {"city": "Paris"}, "output": "18°C"},
                    {"type": "dynamic-tool", "toolName": "f", "toolCallId": "c2",
                     "state": "output-error", "input": None, "errorText": "boom"},
                    {"type": "source-url", "sourceId": "s1", "url": "https://a.example"},
                    {"type": "data-hosted-activity", "id": "x", "data": {}},
                    {"type": "text", "text": "18°C"},
                    {"type": "custom-part", "value": 1},
                ],
            },
        ]
    )  # fmt: skip
    assert history == (
        Message(role="system", content=(TextBlock("be brief"),), source="system"),
        Message(role="user", content=(TextBlock("weather?"),), source="user"),
        Message(
            role="assistant",
            source="assistant",
            content=(
                ToolCallBlock(CallId("c1"), "get_weather", '{"city":"Paris"}'),
                ToolCallBlock(CallId("c2"), "f", "{}"),
                TextBlock("18°C"),
                UnknownBlock({"type": "custom-part", "value": 1}),
            ),
        ),
        Message(
            role="user",
            source="tool",
            content=(
                ToolResultBlock(CallId("c1"), "18°C", name="get_weather"),
                ToolResultBlock(CallId("c2"), "boom", is_error=True, name="f"),
            ),
        ),
    )


@pytest.mark.parametrize(
    ("messages", "error", "where"),
    [
        ({"role": "user"}, DecodeError, "$.messages"),
        ([{"role": "robot", "parts": []}], DecodeError, "$.messages[0].role"),
        (
            [{"role": "user", "parts": [{"type": "text"}]}],
            DecodeError,
            "$.messages[0].parts[0].text",
        ),
        ([{"role": "user", "parts": [{"text": "x"}]}], DecodeError, "$.messages[0].parts[0].type"),
    ],
)
def test_malformed_ui_messages_are_named(
    messages: object, error: type[Exception], where: str
) -> None:
    with pytest.raises(error) as raised:
        messages_from_ui(messages)
    assert getattr(raised.value, "path", None) == where or where in str(raised.value)


def test_file_parts_become_image_and_document_blocks() -> None:
    image = png()
    data_url = "data:image/png;base64," + base64.b64encode(image).decode()
    (message,) = messages_from_ui(
        [
            {
                "role": "user",
                "parts": [
                    {"type": "text", "text": "what is this?"},
                    {
                        "type": "file",
                        "mediaType": "image/png",
                        "url": data_url,
                        "filename": "red.png",
                    },
                    {
                        "type": "file",
                        "mediaType": "application/pdf",
                        "url": "https://a.example/x.pdf",
                    },
                ],
            }
        ]
    )
    assert message.content == (
        TextBlock("what is this?"),
        ImageBlock.from_bytes(image, "image/png", filename="red.png"),
        DocumentBlock(URLSource("https://a.example/x.pdf"), "application/pdf"),
    )
    assert message.content[1].width == 3  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("javascript:alert(1)", "must be data: or http"),
        ("data:image/png,raw", "must be base64"),
        ("data:image/png;base64,!!!", "not base64"),
    ],
)
def test_bad_file_parts_are_refused(url: str, why: str) -> None:
    with pytest.raises(DecodeError, match=why):
        messages_from_ui(
            [{"role": "user", "parts": [{"type": "file", "url": url, "mediaType": "image/png"}]}]
        )
