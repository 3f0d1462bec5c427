"""The typed text-chunk fast path and the usage rebuild skip change nothing.

The reference is the parser as it was before both: every frame decoded to a
dict and walked, and a :class:`Usage` built from every ``usageMetadata`` and
compared with the last one.  Over every streamed Gemini recording in the
corpus and over hand-written streams, the chunks after each frame, the
``partial()`` at every prefix and the final result must be equal.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest

from elelem.errors import MalformedStreamError
from elelem.recordings import cassettes
from elelem.shapes.common import decode_frame
from elelem.shapes.gemini import GeminiParser, map_usage
from elelem.shapes.gemini.fast import HotChunk, hot_decoder
from elelem.stream import Assembler, Chunk, TextDelta, UsageUpdate
from elelem.vocabulary import ProviderId, ProviderPayload, TextBlock, Usage
from test_gemini_corpus import PARAMS

G = ProviderId("google")


class Reference(GeminiParser):
    """The previous behaviour: no typed decode, a Usage built on every chunk."""

    def __init__(self, provider: ProviderId) -> None:
        super().__init__(provider)
        self._last: Usage | None = None

    def message(self, event: str, data: str) -> Sequence[Chunk]:
        return self.chunk(decode_frame(data, f"gemini {event or 'frame'}"))

    def _report_usage(self, usage: dict[str, Any], out: list[Chunk]) -> None:
        current = map_usage(usage)
        if current != self._last:
            self._last = current
            out.append(UsageUpdate(current))


class Counting(GeminiParser):
    """The real parser, counting the frames its fast path applied."""

    def __init__(self, provider: ProviderId) -> None:
        super().__init__(provider)
        self.hits = 0

    def _text_chunk(self, data: HotChunk) -> list[Chunk] | None:
        out = super()._text_chunk(data)
        self.hits += out is not None
        return out


def _compare(frames: list[str]) -> int:
    """Feed both parsers frame by frame, asserting equal chunks and partials;
    return how many frames the fast path took."""
    new, old = Counting(G), Reference(G)
    new_asm, old_asm = Assembler(G), Assembler(G)
    for data in frames:
        got, want = list(new.message("", data)), list(old.message("", data))
        assert got == want
        new_asm.feed_all(got)
        old_asm.feed_all(want)
        assert new_asm.partial() == old_asm.partial()
    got, want = list(new.eof()), list(old.eof())
    assert got == want
    new_asm.feed_all(got)
    old_asm.feed_all(want)
    assert new_asm.result() == old_asm.result()
    return new.hits


@pytest.mark.parametrize("local_file", PARAMS)
def test_every_recorded_stream_parses_as_before(corpus: Path, local_file: str) -> None:
    interactions = [
        i
        for i in cassettes.load(corpus / local_file).interactions
        if i.response.streamed and i.response.status == 200
    ]
    for interaction in interactions:
        _compare([f.data for f in cassettes.sse_frames(interaction.response.body)])


def _frame(parts: list[dict[str, Any]], usage: Any, **candidate: Any) -> str:
    cand = {"content": {"parts": parts, "role": "model"}, **candidate, "index": 0}
    return json.dumps(
        {
            "candidates": [cand],
            "usageMetadata": usage,
            "modelVersion": "gemini-2.5-flash",
            "responseId": "r1",
        }
    )


U1 = {"promptTokenCount": 9, "candidatesTokenCount": 1, "totalTokenCount": 10}
U2 = {"promptTokenCount": 9, "candidatesTokenCount": 3, "totalTokenCount": 12}


def test_text_thought_and_signature_chunks_take_the_fast_path_with_equal_results() -> None:
    frames = [
        _frame([{"text": "Plan", "thought": True}], U1),
        _frame([{"text": " more", "thought": True, "thoughtSignature": "c2ln"}], U1),
        _frame([{"text": "Hel"}], U1),
        _frame([{"text": "lo", "thought": False}, {"text": "", "thoughtSignature": "dA=="}], U2),
        _frame([{"text": "!"}], U2),
        _frame([], U2, finishReason="STOP"),
    ]
    # The first frame starts the response and the last one finishes it: both
    # need the general path; the four between are text-only.
    assert _compare(frames) == 4


def test_repeated_usage_is_one_update_and_a_changed_one_another() -> None:
    frames = [_frame([{"text": t}], u) for t, u in (("a", U1), ("b", U1), ("c", U2), ("d", U2))]
    frames.append(_frame([], U2, finishReason="STOP"))
    parser = GeminiParser(G)
    chunks = [c for f in frames for c in parser.message("", f)] + list(parser.eof())
    assert [c.usage for c in chunks if isinstance(c, UsageUpdate)] == [
        Usage(input=9, output=1, raw=U1),
        Usage(input=9, output=3, raw=U2),
    ]
    assert [c.text for c in chunks if isinstance(c, TextDelta)] == ["a", "b", "c", "d"]
    assert _compare(frames) == 3


def test_a_usage_seen_again_after_another_came_the_general_way_is_reported_again() -> None:
    other = json.loads(_frame([{"text": "c"}], U2))
    other["promptFeedback"] = {"safetyRatings": []}
    frames = [
        _frame([{"text": "a"}], U1),
        _frame([{"text": "b"}], U1),
        json.dumps(other),
        _frame([{"text": "d"}], U1),
        _frame([{"text": "e"}], U1, finishReason="STOP"),
    ]
    parser = GeminiParser(G)
    chunks = [c for f in frames for c in parser.message("", f)]
    assert [c.usage.raw for c in chunks if isinstance(c, UsageUpdate)] == [U1, U2, U1]
    assert _compare(frames) == 2


def test_usage_that_is_not_an_object_takes_the_general_path() -> None:
    frames = [_frame([{"text": "a"}], U1), _frame([{"text": "b"}], [1])]
    frames.append(_frame([{"text": "c"}], U2, finishReason="STOP"))
    assert _compare(frames) == 0


def test_a_chunk_with_any_other_field_keeps_it_through_the_general_path() -> None:
    extra = json.loads(_frame([{"text": "b", "futurePartField": {"x": 1}}], U1))
    extra["createTime"] = "2026-01-01T00:00:00Z"
    frames = [
        _frame([{"text": "a"}], U1),
        json.dumps(extra),
        _frame([{"text": "c"}], U1, finishReason="STOP"),
    ]
    with pytest.raises(msgspec.ValidationError):
        hot_decoder().decode(frames[1])
    assert _compare(frames) == 0
    assembler = Assembler(G)
    parser = GeminiParser(G)
    for f in frames:
        assembler.feed_all(parser.message("", f))
    assembler.feed_all(parser.eof())
    result = assembler.result()
    assert result.blocks == (
        TextBlock(
            "abc",
            payloads=(ProviderPayload(G, "part_fields", None, {"futurePartField": {"x": 1}}),),
        ),
    )
    assert result.finish is not None
    assert result.finish.payloads[0] == ProviderPayload(
        G,
        "response",
        None,
        {
            "modelVersion": "gemini-2.5-flash",
            "responseId": "r1",
            "createTime": "2026-01-01T00:00:00Z",
        },
    )


def test_a_second_candidate_and_a_new_envelope_key_take_the_general_path() -> None:
    second = json.loads(_frame([{"text": "x"}], U1))
    second["candidates"].append({"content": {"parts": [{"text": "y"}]}, "index": 1})
    no_model = json.loads(_frame([{"text": "a"}], U1))
    del no_model["modelVersion"]
    frames = [json.dumps(no_model), _frame([{"text": "b"}], U1), json.dumps(second)]
    frames.append(_frame([], U1, finishReason="STOP"))
    # Frame 2 would add modelVersion to the envelope: only the dict path
    # keeps the wire's key order, so it is not taken there.
    assert _compare(frames) == 0


def test_frames_after_the_finish_and_bad_json_fail_as_before() -> None:
    parser = GeminiParser(G)
    parser.message("", _frame([{"text": "a"}], U1, finishReason="STOP"))
    parser.eof()
    with pytest.raises(MalformedStreamError, match="after the response finished"):
        parser.message("", _frame([{"text": "b"}], U1))
    with pytest.raises(MalformedStreamError, match=r"^gemini frame data is not JSON"):
        GeminiParser(G).message("", '{"candidates": [')


THINKING = "pydantic__pydantic-ai/tests__models__cassettes__test_google__test_google_model_thinking_part_iter.yaml"


def test_a_recorded_thinking_stream_takes_the_fast_path_on_all_but_its_ends(corpus: Path) -> None:
    (interaction,) = [
        i for i in cassettes.load(corpus / THINKING).interactions if i.response.streamed
    ]
    frames = [f.data for f in cassettes.sse_frames(interaction.response.body)]
    assert (len(frames), _compare(frames)) == (23, 21)


def test_an_envelope_field_nobody_listed_is_learnt_and_the_stream_stays_typed() -> None:
    def with_field(frame: str, value: object) -> str:
        obj = json.loads(frame)
        obj["createTime"] = value
        return json.dumps(obj)

    frames = [with_field(_frame([{"text": t}], U1), "t0") for t in "abcd"]
    frames.insert(3, with_field(_frame([{"text": "x"}], U1), "t1"))
    frames.append(with_field(_frame([{"text": "e"}], U1, finishReason="STOP"), "t1"))
    # The first chunk starts the response on the dict path, which learns the
    # field; every later text chunk is typed, a changed value included, and
    # the envelope ends as the dict path leaves it (the finish chunk is the
    # dict path's).
    assert _compare(frames) == 4
    parser = GeminiParser(G)
    assembler = Assembler(G)
    for f in frames:
        assembler.feed_all(parser.message("", f))
    assembler.feed_all(parser.eof())
    finish = assembler.result().finish
    assert finish is not None
    assert finish.payloads[0] == ProviderPayload(
        G,
        "response",
        None,
        {"modelVersion": "gemini-2.5-flash", "responseId": "r1", "createTime": "t1"},
    )
