"""The typed fast path of the Bedrock Converse parser gives exactly what the dict path gives.

:class:`DictOnly` is the parser with the fast path switched off.  Both parse
the same events (the corpus's Converse recording, as recorded one-key unions
and as named event-stream messages, and hand-written events carrying new
fields, other delta kinds, wrong types and deltas in the wrong block); each
event must give the same chunks, or the same error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from elelem.shapes.bedrock_converse import BedrockParser
from elelem.shapes.bedrock_converse.fast import HotBody, HotDelta, hot_decoder
from elelem.shapes.skeleton import unknown_block
from elelem.stream import ReasoningDelta, TextDelta
from elelem.vocabulary import ProviderId
from fast_paths import compare
from test_bedrock_converse import RECORDING

BEDROCK = ProviderId("bedrock")


def named(frames: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The same events as event-stream messages: the event type names the body."""
    out = []
    for _, data in frames:
        ((name, body),) = json.loads(data).items()
        out.append((name, json.dumps(body)))
    return out


def union(name: str, body: dict[str, Any]) -> tuple[str, str]:
    return "", json.dumps({name: body})


def delta(index: Any, value: Any, **extra: Any) -> tuple[str, str]:
    return union("contentBlockDelta", {"contentBlockIndex": index, "delta": value, **extra})


START = [
    union("messageStart", {"role": "assistant"}),
    delta(0, {"reasoningContent": {"text": "hm"}}),
    delta(1, {"text": "Hi"}),
]


def test_the_recorded_stream_gives_what_the_dict_path_gives(corpus: Path) -> None:
    path = corpus / RECORDING
    if not path.exists():
        pytest.skip("recording not in this corpus")
    frames = [("", line) for line in path.read_text().splitlines() if line.strip()]
    for form in (frames, named(frames)):
        _, hits = compare(BedrockParser, BEDROCK, form)
        assert hits == 18  # every text and reasoning-text delta but each block's first


def test_hot_deltas_take_the_fast_path_with_exact_chunks() -> None:
    # a body field beside the index and the delta (event-stream padding) is passed over
    padded = {"contentBlockIndex": 1, "delta": {"text": "!"}, "p": "abcdefgh"}
    seen, hits = compare(
        BedrockParser,
        BEDROCK,
        [
            *START,
            delta(1, {"text": " there"}),
            delta(0, {"reasoningContent": {"text": "…"}}),
            delta(1, {"text": ""}),
            ("contentBlockDelta", json.dumps(padded)),
        ],
    )
    assert seen[3:] == [
        repr([TextDelta(1, " there")]),
        repr([ReasoningDelta(0, "…")]),
        "[]",
        repr([TextDelta(1, "!")]),
    ]
    assert hits == 4


def test_other_deltas_wrong_types_and_wrong_blocks_take_the_dict_path() -> None:
    assert hot_decoder().body.decoder.decode(
        '{"contentBlockIndex": 2, "delta": {"text": "x"}}'
    ) == (HotBody(2, HotDelta(text="x")))
    for bad in (
        '{"text": null}',
        '{"text": "x", "citation": {}}',
        '{"reasoningContent": {"signature": "s"}}',
    ):
        with pytest.raises(msgspec.ValidationError):
            hot_decoder().body.decoder.decode(f'{{"contentBlockIndex": 0, "delta": {bad}}}')
    frames = [
        *START,
        delta(1, {"text": None}),
        delta(1, {"text": "a", "reasoningContent": {"text": "b"}}),
        delta(0, {"text": "in a reasoning block"}),
        delta(1, {"reasoningContent": {"text": "in a text block"}}),
        delta(True, {"text": "bool index"}),
        delta(7, {"text": "not open"}),
        delta(0, {"reasoningContent": {"signature": "sig"}}),
        delta(1, {"citation": {"title": "t", "location": {}}}),
        union("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "x"}, "more": 1}),
        (
            "",
            json.dumps(
                {"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"text": "y"}}, "x": {}}
            ),
        ),
        union("contentBlockStop", {"contentBlockIndex": 1}),
        delta(1, {"text": "after its stop"}),
        union("messageStop", {"stopReason": "end_turn"}),
        union("metadata", {"usage": {"inputTokens": 1, "outputTokens": 2}}),
        delta(0, {"text": "late"}),
    ]
    seen, hits = compare(BedrockParser, BEDROCK, frames)
    assert hits == 0  # "more" is a field the dict path keeps
    assert "after the response finished" in seen[-1]


def test_a_new_body_field_on_every_named_event_is_kept_and_the_stream_stays_typed() -> None:
    def named_delta(text: str, trace: str) -> tuple[str, str]:
        body = {"contentBlockIndex": 1, "delta": {"text": text}, "p": "abc", "trace": trace}
        return "contentBlockDelta", json.dumps(body)

    frames = [*START, *(named_delta(t, "t1") for t in "abc"), named_delta("d", "t2")]
    seen, hits = compare(BedrockParser, BEDROCK, frames)
    kept = {"type": "bedrock.event", "event": "contentBlockDelta", "field": "trace"}
    assert seen[3:] == [
        repr([TextDelta(1, "a"), *unknown_block("event-1", {**kept, "value": "t1"})]),
        repr([TextDelta(1, "b")]),
        repr([TextDelta(1, "c")]),
        repr([TextDelta(1, "d"), *unknown_block("event-2", {**kept, "value": "t2"})]),
    ]
    assert hits == 3  # the dict path kept the field once; the decoder learned it
