"""A read's frames parsed in one call (``ParserSkeleton.messages``) give what
one call per frame (``message``) gives: the same chunks in the same order, the
same error after the same chunks, and nothing read past the finish.

The driver hands the parser each network read's frames at once; every
streamed corpus response of every shape, cut into reads of several sizes,
must parse exactly as frame by frame.  Read in place from the corpus; skipped
where it is absent.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from elelem.errors import ElelemError, MalformedStreamError
from elelem.providers import load_shape
from elelem.shapes.openai_chat.parser import ChatParser
from elelem.stream import BlockEnd, BlockStart, Chunk, Finish, ResponseStart, TextDelta
from elelem.vocabulary import ProviderId
from test_unknown_field_property import corpus_streams

P = ProviderId("openai")


def one_by_one(parser: Any, frames: Sequence[tuple[str, str]]) -> tuple[list[Chunk], Any]:
    out: list[Chunk] = []
    try:
        for event, data in frames:
            if parser.finished:
                break
            out.extend(parser.message(event, data))
    except ElelemError as exc:
        return out, (type(exc), str(exc))
    return out, None


def in_reads(parser: Any, frames: Sequence[tuple[str, str]], size: int) -> tuple[list[Chunk], Any]:
    out: list[Chunk] = []
    try:
        for start in range(0, len(frames), size):
            parser.messages(frames[start : start + size], out)
            if parser.finished:
                break
    except ElelemError as exc:
        return out, (type(exc), str(exc))
    return out, None


def _ids() -> list[Any]:
    return [pytest.param(i, id=s[2]) for i, s in enumerate(corpus_streams())]


@pytest.mark.parametrize("index", _ids())
def test_every_corpus_stream_parses_alike_in_reads_of_any_size(corpus: Path, index: int) -> None:
    shape, provider, _, frames = corpus_streams()[index]
    make = load_shape(shape).new_parser
    want = one_by_one(make(ProviderId(provider)), frames)
    for size in (1, 2, 7, len(frames) or 1):
        assert in_reads(make(ProviderId(provider)), frames, size) == want


def chunk(content: str, finish: str | None = None) -> tuple[str, str]:
    choice = {"index": 0, "delta": {"content": content}, "finish_reason": finish}
    return "", json.dumps({"id": "c1", "model": "m", "choices": [choice]})


def test_chunks_before_a_bad_frame_are_kept_and_the_error_names_its_frame() -> None:
    frames = [chunk("a"), chunk("b"), ("", '{"choices": 7}'), chunk("c")]
    out: list[Chunk] = []
    with pytest.raises(MalformedStreamError, match="frame 3: 'choices' is not a list"):
        ChatParser(P).messages(frames, out)
    assert out == [
        ResponseStart("c1", "m", P),
        BlockStart("text-1", "text"),
        TextDelta("text-1", "a"),
        TextDelta("text-1", "b"),
    ]


def test_a_value_of_the_wrong_type_is_a_malformed_frame_in_a_read_too() -> None:
    frames = [chunk("a"), ("", '{"choices": [{"index": 0, "delta": {"content": 5}}]}')]
    out: list[Chunk] = []
    with pytest.raises(MalformedStreamError, match="frame 2: 'content' is a int"):
        ChatParser(P).messages(frames, out)
    assert len(out) == 3


def test_frames_after_the_finish_are_not_read() -> None:
    parser = ChatParser(P)
    out: list[Chunk] = []
    parser.messages([chunk("a", "stop"), ("", "[DONE]"), ("", "not json at all")], out)
    assert out[-2:] == [BlockEnd("text-1"), Finish("stop", raw="stop")]
    assert parser.frames == 2


class Wrapping(ChatParser):
    """A shape that wraps ``message`` (as Gemini Interactions does with ``[DONE]``)."""

    def message(self, event: str, data: str) -> Sequence[Chunk]:
        if data == "skip me":
            return ()
        return super().message(event, data)


def test_a_shape_that_wraps_message_keeps_its_wrapping() -> None:
    out: list[Chunk] = []
    Wrapping(P).messages([chunk("a"), ("", "skip me"), chunk("b", "stop"), ("", "[DONE]")], out)
    assert [c for c in out if isinstance(c, TextDelta)] == [
        TextDelta("text-1", "a"),
        TextDelta("text-1", "b"),
    ]
    assert out[-1] == Finish("stop", raw="stop")
