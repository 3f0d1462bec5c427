"""The typed fast path of the Anthropic parser gives exactly what the dict path gives.

:class:`DictOnly` is the parser with the fast path switched off, so every
frame goes through the dict path.  Both parse the same frames (every corpus
recording, and generated streams whose frames carry extra fields, wrong
types and misplaced deltas); each frame must give the same chunks, or the
same error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elelem.errors import ElelemError
from elelem.recordings.cassettes import load, sse_frames
from elelem.shapes.anthropic_messages.parser import MessagesParser
from elelem.stream import (
    BlockEnd,
    BlockStart,
    Chunk,
    Payload,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
)
from elelem.vocabulary import ProviderId, ProviderPayload

ANTHROPIC = ProviderId("anthropic")


class DictOnly(MessagesParser):
    """The parser with the typed fast path off: every frame takes the dict path."""

    def fast(self, event: str, data: str) -> list[Chunk] | None:
        return None


class Counting(MessagesParser):
    """The real parser, counting the frames its fast path answered."""

    hits = 0

    def fast(self, event: str, data: str) -> list[Chunk] | None:
        chunks = super().fast(event, data)
        if chunks is not None:
            Counting.hits += 1
        return chunks


def outcome(parser: MessagesParser, event: str, data: str) -> str:
    """The frame's chunks, or its error, as exact text (repr tells 1 from True)."""
    try:
        return repr(list(parser.message(event, data)))
    except ElelemError as exc:  # the error itself is what is compared
        return repr((type(exc), str(exc), exc.__dict__))


def compare(frames: list[tuple[str, str]]) -> list[str]:
    """Feed both parsers the frames; assert equal outcomes; return them."""
    fast, slow = Counting(ANTHROPIC), DictOnly(ANTHROPIC)
    seen = []
    for event, data in frames:
        got, want = outcome(fast, event, data), outcome(slow, event, data)
        assert got == want, data
        seen.append(got)
        if got.startswith("(<class"):
            break
    return seen


def frame(payload: dict[str, Any]) -> tuple[str, str]:
    return str(payload.get("type", "")), json.dumps(payload)


START = [
    frame({"type": "message_start", "message": {"id": "msg_1", "model": "m", "content": []}}),
    frame({"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}),
    frame({"type": "content_block_start", "index": 1, "content_block": {"type": "thinking"}}),
    frame(
        {
            "type": "content_block_start",
            "index": 2,
            "content_block": {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
        }
    ),
    frame(
        {
            "type": "content_block_start",
            "index": 3,
            "content_block": {"type": "server_tool_use", "id": "s1", "name": "web_search"},
        }
    ),
]


def delta(index: Any, dtype: str, field: str, value: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": {"type": dtype, field: value}}


def test_hot_frames_take_the_fast_path_with_exact_chunks() -> None:
    parser = Counting(ANTHROPIC)
    Counting.hits = 0
    for event, data in START:
        parser.message(event, data)
    assert parser.message(*frame(delta(0, "text_delta", "text", "Hi \u00e9"))) == [
        TextDelta(0, "Hi \u00e9")
    ]
    assert parser.message(*frame(delta(1, "thinking_delta", "thinking", "hm"))) == [
        ReasoningDelta(1, "hm")
    ]
    assert parser.message(*frame(delta(2, "input_json_delta", "partial_json", '{"a"'))) == [
        ToolCallDelta(2, '{"a"')
    ]
    # A server tool's input is buffered for its hosted activity: no chunk yet.
    assert parser.message(*frame(delta(3, "input_json_delta", "partial_json", '{"q"'))) == []
    assert parser._blocks[3].deltas == ['{"q"']
    assert Counting.hits == 4


def test_a_new_event_field_is_kept_once_and_the_rest_of_the_stream_stays_typed() -> None:
    extra_top = {**delta(0, "text_delta", "text", "x"), "future": 1}
    extra_inner = delta(0, "text_delta", "text", "x")
    extra_inner["delta"]["future"] = [1]
    # A field beside the event's own fails the first decoder; the parser then
    # takes one that holds it raw (and still refuses one inside the delta).
    parser = MessagesParser(ANTHROPIC)
    with pytest.raises(msgspec.ValidationError, match="unknown field `future`"):
        parser._hot.decoder.decode(json.dumps(extra_top))
    parser._hot.learn({"future"})
    assert parser._hot.decoder.decode(json.dumps(extra_top)).index == 0
    with pytest.raises(msgspec.ValidationError, match="unknown field `future`"):
        parser._hot.decoder.decode(json.dumps(extra_inner))
    changed = {**extra_top, "future": 2}
    Counting.hits = 0
    seen = compare([*START, frame(extra_top), frame(extra_top), frame(changed), frame(extra_inner)])
    kept = {"type": "anthropic.event", "event": "content_block_delta", "field": "future"}
    assert seen[-4:] == [
        # The first one takes the dict path and keeps the field where it came.
        repr(
            [
                TextDelta(0, "x"),
                BlockStart("event-1", "unknown", raw={**kept, "value": 1}),
                BlockEnd("event-1"),
            ]
        ),
        repr([TextDelta(0, "x")]),  # the same value again: typed, kept once
        repr(
            [
                TextDelta(0, "x"),
                BlockStart("event-2", "unknown", raw={**kept, "value": 2}),
                BlockEnd("event-2"),
            ]
        ),
        # A field of the delta itself joins the text block's fields.
        repr(
            [
                TextDelta(0, "x"),
                Payload(0, ProviderPayload(ANTHROPIC, "block_fields", None, {"future": [1]})),
            ]
        ),
    ]
    assert Counting.hits == 2


def test_errors_stay_those_of_the_dict_path() -> None:
    cases = [
        delta(9, "text_delta", "text", "x"),  # block not open
        delta(0, "thinking_delta", "thinking", "x"),  # wrong kind for a text block
        delta(True, "text_delta", "text", "x"),  # a bool is not an index
        delta(0, "text_delta", "text", 5),  # text is not a string
    ]
    for case in cases:
        seen = compare([*START, frame(case)])
        assert seen[-1].startswith("(<class 'elelem.errors.MalformedStreamError'>"), seen[-1]
    # Before message_start and after message_stop the dict path's errors stand.
    seen = compare([frame(delta(0, "text_delta", "text", "x"))])
    assert "content_block_delta event before message_start" in seen[-1]


_FIELDS = {
    "text_delta": "text",
    "thinking_delta": "thinking",
    "input_json_delta": "partial_json",
    "signature_delta": "signature",
    "citations_delta": "citation",
}


@st.composite
def delta_frames(draw: st.DrawFn) -> tuple[str, str]:
    dtype = draw(st.sampled_from(sorted(_FIELDS)))
    value = draw(st.one_of(st.text(), st.integers(), st.none(), st.just({"url": "u"})))
    index = draw(st.one_of(st.integers(0, 4), st.just(True), st.just(1.0), st.just("0")))
    payload = delta(index, dtype, _FIELDS[dtype], value)
    if draw(st.booleans()):
        payload[draw(st.sampled_from(["extra", "usage", "type"]))] = draw(
            st.sampled_from([None, 1, "content_block_delta", "ping"])
        )
    if draw(st.booleans()):
        payload["delta"][draw(st.sampled_from(["extra", "type", "text"]))] = draw(
            st.sampled_from([None, "text_delta", "thinking_delta", "x"])
        )
    event = draw(st.sampled_from(["", "content_block_delta", "message"]))
    return event, json.dumps(payload)


@settings(max_examples=300, deadline=None)
@given(st.lists(delta_frames(), max_size=12))
def test_generated_frames_give_the_same_outcome(frames: list[tuple[str, str]]) -> None:
    compare([*START, *frames])


def corpus_streams(corpus: Path) -> list[list[tuple[str, str]]]:
    rows = [ln.split("\t") for ln in (corpus / "INDEX.tsv").read_text().splitlines()[1:]]
    streams = []
    for row in rows:
        if row[4] != "anthropic":
            continue
        for interaction in load(corpus / row[0]).interactions:
            if interaction.response.streamed:
                body = interaction.response.body
                streams.append([(f.event, f.data) for f in sse_frames(body)])
    return streams


def test_every_corpus_frame_gives_the_same_chunks(corpus: Path) -> None:
    Counting.hits = 0
    deltas = 0
    for frames in corpus_streams(corpus):
        seen = compare(frames)
        assert len(seen) == len(frames)
        deltas += sum('"content_block_delta"' in data for _, data in frames)
    # All but the citation, signature and compaction deltas fit the typed frame.
    assert Counting.hits > deltas * 9 // 10 > 0
