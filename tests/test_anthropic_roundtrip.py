"""Property: any Anthropic message, streamed in arbitrary delta pieces or sent
whole, parses to the same content, and native replay gives back its blocks."""

from __future__ import annotations

import itertools
import json
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from elelem.codec import dumps, loads
from elelem.shapes.anthropic_messages import SHAPE, assistant_wire
from elelem.stream import assemble
from elelem.vocabulary import Message, ProviderId, ToolCallBlock

A = ProviderId("anthropic")

text = st.text(max_size=40)
ident = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_", min_size=1, max_size=12)
scalar = st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), text)
json_object = st.dictionaries(ident, st.one_of(scalar, st.lists(scalar, max_size=3)), max_size=4)

citation = st.builds(
    lambda cited, url, title, index: {
        "type": "web_search_result_location",
        "cited_text": cited,
        "url": url,
        "title": title,
        "encrypted_index": index,
    },
    text,
    text,
    text,
    ident,
)


@st.composite
def blocks(draw: st.DrawFn) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n in range(draw(st.integers(0, 6))):
        kind = draw(
            st.sampled_from(["text", "thinking", "redacted", "tool_use", "server", "unknown"])
        )
        if kind == "text":
            block: dict[str, Any] = {"type": "text", "text": draw(text)}
            cites = draw(st.lists(citation, max_size=2))
            if cites:
                block["citations"] = cites
            out.append(block)
        elif kind == "thinking":
            out.append({"type": "thinking", "thinking": draw(text), "signature": draw(ident)})
        elif kind == "redacted":
            out.append({"type": "redacted_thinking", "data": draw(ident)})
        elif kind == "tool_use":
            out.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{n}",
                    "name": draw(ident),
                    "input": draw(json_object),
                }
            )
        elif kind == "server":
            sid = f"srvtoolu_{n}"
            out.append(
                {
                    "type": "server_tool_use",
                    "id": sid,
                    "name": "web_search",
                    "input": {"query": draw(text)},
                }
            )
            results = [
                {"type": "web_search_result", "url": draw(text), "encrypted_content": draw(ident)}
                for _ in range(draw(st.integers(0, 2)))
            ]
            out.append({"type": "web_search_tool_result", "tool_use_id": sid, "content": results})
        else:
            out.append({"type": "future_block", "note": draw(text), "data": draw(json_object)})
    return out


def pieces(draw: st.DrawFn, value: str) -> list[str]:
    cuts = sorted(draw(st.lists(st.integers(0, len(value)), max_size=4)))
    bounds = [0, *cuts, len(value)]
    return [value[a:b] for a, b in itertools.pairwise(bounds)]


def stream_events(draw: st.DrawFn, content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_p",
                "type": "message",
                "role": "assistant",
                "model": "claude-p",
                "content": [],
                "stop_reason": None,
                "usage": {"input_tokens": 3, "output_tokens": 1},
            },
        }
    ]

    def delta(i: int, **fields: Any) -> None:
        events.append({"type": "content_block_delta", "index": i, "delta": fields})

    for i, block in enumerate(content):
        kind = block["type"]
        if kind == "text":
            start: dict[str, Any] = {"type": "text", "text": ""}
            if "citations" in block:
                start["citations"] = []
            events.append({"type": "content_block_start", "index": i, "content_block": start})
            for c in block.get("citations", []):
                delta(i, type="citations_delta", citation=c)
            for piece in pieces(draw, block["text"]):
                delta(i, type="text_delta", text=piece)
        elif kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            events.append({"type": "content_block_start", "index": i, "content_block": start})
            for piece in pieces(draw, block["thinking"]):
                delta(i, type="thinking_delta", thinking=piece)
            delta(i, type="signature_delta", signature=block["signature"])
        elif kind in ("tool_use", "server_tool_use"):
            start = {**block, "input": {}}
            events.append({"type": "content_block_start", "index": i, "content_block": start})
            for piece in pieces(draw, json.dumps(block["input"])):
                delta(i, type="input_json_delta", partial_json=piece)
        else:
            events.append({"type": "content_block_start", "index": i, "content_block": block})
        events.append({"type": "content_block_stop", "index": i})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 9},
        }
    )
    events.append({"type": "message_stop"})
    return events


def canonical(content: tuple[Any, ...]) -> list[Any]:
    return [
        msgspec.structs.replace(p, arguments=json.dumps(p.input, sort_keys=True))
        if isinstance(p, ToolCallBlock)
        else p
        for p in content
    ]


@settings(max_examples=60, deadline=None)
@given(data=st.data(), content=blocks())
def test_stream_and_whole_agree_and_replay_exactly(
    data: st.DataObject, content: list[dict[str, Any]]
) -> None:
    parser = SHAPE.new_parser(A)
    chunks = []
    for event in stream_events(data.draw, content):
        chunks.extend(parser.message(event["type"], json.dumps(event)))
    chunks.extend(parser.eof())
    streamed = assemble(chunks, A)

    whole_body = {
        "id": "msg_p",
        "type": "message",
        "role": "assistant",
        "model": "claude-p",
        "content": content,
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 3, "output_tokens": 9},
    }
    whole = assemble(SHAPE.parse_response(json.dumps(whole_body).encode(), A), A)

    # Arguments are kept as the provider sent them (streamed pieces vs a
    # parsed object), so tool calls compare by their parsed input.
    assert canonical(streamed.content) == canonical(whole.content)
    assert streamed.usage == whole.usage
    wire, dropped = assistant_wire(streamed.to_message(), A)
    assert dropped == ()
    assert wire == {"role": "assistant", "content": content}
    # ...and after a trip through the canonical codec (storage) too.
    stored = loads(dumps(streamed.to_message()), Message)
    assert assistant_wire(stored, A)[0] == wire
