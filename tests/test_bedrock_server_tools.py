"""Bedrock Converse server tools (``toolUse`` of ``type: server_tool_use``, as
Nova web grounding runs) are hosted activity, never client tool calls."""

from __future__ import annotations

import json

from elelem.shapes.bedrock_converse import SHAPE
from elelem.shapes.bedrock_converse.encoder import encode_request
from elelem.stream import AssembledResponse, assemble
from elelem.vocabulary import (
    HostedActivity,
    Message,
    ProviderId,
    ProviderPayload,
    TextBlock,
    ToolCallBlock,
)
from elelem.wire import ModelRequest

B = ProviderId("bedrock")
USE = {"toolUseId": "tooluse_1", "name": "nova_grounding", "type": "server_tool_use"}
RESULT_CONTENT = [{"json": {"sources": [{"url": "https://example.com/a"}]}}]


def stream(events: list[tuple[str, dict]]) -> AssembledResponse:  # type: ignore[type-arg]
    parser = SHAPE.new_parser(B)
    chunks = []
    for name, body in events:
        chunks += parser.message(name, json.dumps(body))
    chunks += parser.eof()
    return assemble(chunks, B)


EVENTS: list[tuple[str, dict]] = [  # type: ignore[type-arg]
    ("messageStart", {"role": "assistant"}),
    ("contentBlockStart", {"contentBlockIndex": 0, "start": {"toolUse": USE}}),
    ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"query": "tallest'}}}),
    ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": ' mountain"}'}}}),
    ("contentBlockStop", {"contentBlockIndex": 0}),
    ("contentBlockStart", {"contentBlockIndex": 1, "start": {"toolResult": {
        "toolUseId": "tooluse_1", "type": "nova_grounding_result", "status": "success"}}}),
    ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolResult": RESULT_CONTENT}}),
    ("contentBlockStop", {"contentBlockIndex": 1}),
    ("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"text": "Everest."}}),
    ("contentBlockStop", {"contentBlockIndex": 2}),
    ("messageStop", {"stopReason": "end_turn"}),
    ("metadata", {"usage": {"inputTokens": 5, "outputTokens": 2, "totalTokens": 7}}),
]  # fmt: skip

WIRE_USE = {"toolUse": {**USE, "input": {"query": "tallest mountain"}}}
WIRE_RESULT = {"toolResult": {"toolUseId": "tooluse_1", "type": "nova_grounding_result",
               "status": "success", "content": RESULT_CONTENT}}  # fmt: skip
EXPECTED = (
    HostedActivity("tooluse_1", "web_search", "started", {"query": "tallest mountain"},  # type: ignore[arg-type]
                   payload=ProviderPayload(B, "server_tool_use", None, WIRE_USE)),
    HostedActivity("tooluse_1", "web_search", "completed", {"query": "tallest mountain"},  # type: ignore[arg-type]
                   "1 result", ProviderPayload(B, "tool_result", None, WIRE_RESULT)),
    TextBlock("Everest."),
)  # fmt: skip


def test_a_streamed_server_tool_is_hosted_activity_not_a_client_call() -> None:
    result = stream(EVENTS)
    assert result.content == EXPECTED
    assert not any(isinstance(p, ToolCallBlock) for p in result.content)
    assert result.finish is not None and result.finish.reason == "stop"


def test_a_whole_response_maps_the_same_and_replays_the_blocks_natively() -> None:
    body = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [WIRE_USE, WIRE_RESULT, {"text": "Everest."}],
            }
        },
        "stopReason": "end_turn",
        "usage": {"inputTokens": 5, "outputTokens": 2, "totalTokens": 7},
    }
    result = assemble(SHAPE.parse_response(json.dumps(body).encode(), B), B)
    assert result.content == EXPECTED
    message = Message("assistant", result.content, provider=B, model="nova")
    wire = encode_request(ModelRequest("nova", (Message.user("q"), message)), provider=B).body
    assert wire["messages"][1] == {
        "role": "assistant",
        "content": [WIRE_USE, WIRE_RESULT, {"text": "Everest."}],
    }


def test_a_failed_server_tool_result() -> None:
    events = [*EVENTS[:5],
              ("contentBlockStart", {"contentBlockIndex": 1, "start": {"toolResult": {
                  "toolUseId": "tooluse_1", "status": "error"}}}),
              ("contentBlockStop", {"contentBlockIndex": 1}), *EVENTS[-2:]]  # fmt: skip
    done = stream(events).content[1]
    assert isinstance(done, HostedActivity)
    assert (done.state, done.summary, done.name) == ("failed", "error", "web_search")


def test_web_citations_of_a_grounded_answer_are_attributions_with_their_url() -> None:
    citation = {"title": "Everest - Wikipedia", "sourceContent": [{"text": "8,849 m"}],
                "location": {"web": {"url": "https://en.wikipedia.org/wiki/Everest", "domain": "wikipedia.org"}}}  # fmt: skip
    untitled = {"location": {"web": {"url": "https://example.com/x", "domain": "example.com"}}}
    empty = {"location": {"web": {}}}
    events = [*EVENTS[:8],
              ("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"text": "Everest."}}),
              ("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"citation": citation}}),
              ("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"citation": untitled}}),
              ("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"citation": empty}}),
              *EVENTS[9:]]  # fmt: skip
    text = stream(events).content[2]
    assert isinstance(text, TextBlock)
    assert [(a.source.url, a.source.title, a.excerpt) for a in text.attributions] == [
        ("https://en.wikipedia.org/wiki/Everest", "Everest - Wikipedia", "8,849 m"),
        ("https://example.com/x", "example.com", None),
        (None, None, None),  # names nothing, but is a citation all the same
    ]
    assert [a.replay for a in text.attributions] == [
        ProviderPayload(B, "citation", None, c) for c in (citation, untitled, empty)
    ]
    # The attributions are the citations: no raw copy rides beside them.
    assert text.payloads == ()
