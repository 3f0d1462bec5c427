"""The typed fast path of the Ollama native parser gives exactly what the dict path gives.

:class:`DictOnly` is the parser with the fast path switched off.  Both parse
the same NDJSON lines (every Ollama ``/api/chat`` recording of the corpus,
and hand-written lines carrying new fields, tool calls, wrong types and
lines after the end); each line must give the same chunks, or the same error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from elelem.errors import ElelemError
from elelem.recordings import cassettes
from elelem.shapes.ollama_native import OllamaParser
from elelem.shapes.ollama_native.fast import HotMessage, hot_decoder
from elelem.stream import BlockEnd, BlockStart, Chunk, ReasoningDelta, TextDelta
from elelem.vocabulary import ProviderId
from test_ollama_native_corpus import PARAMS

OLLAMA = ProviderId("ollama-native")


class DictOnly(OllamaParser):
    """The parser with the typed fast path off: every line takes the dict path."""

    def fast(self, event: str, data: str) -> list[Chunk] | None:
        return None


class Counting(OllamaParser):
    """The real parser, counting the lines its fast path answered."""

    def __init__(self, provider: ProviderId) -> None:
        super().__init__(provider)
        self.hits = 0

    def fast(self, event: str, data: str) -> list[Chunk] | None:
        chunks = super().fast(event, data)
        self.hits += chunks is not None
        return chunks


def outcome(parser: OllamaParser, data: str) -> str:
    """The line's chunks, or its error, as exact text (repr tells 1 from True)."""
    try:
        return repr(list(parser.message("", data)))
    except ElelemError as exc:  # the error itself is what is compared
        return repr((type(exc), str(exc), exc.__dict__))


def compare(lines: list[str]) -> tuple[list[str], int]:
    """Feed both parsers the lines; assert equal outcomes; return them and the fast hits."""
    fast, slow = Counting(OLLAMA), DictOnly(OLLAMA)
    seen = []
    for data in lines:
        got, want = outcome(fast, data), outcome(slow, data)
        assert got == want, data
        seen.append(got)
    assert repr(list(fast.eof())) == repr(list(slow.eof()))
    return seen, fast.hits


def line(message: Any, **top: Any) -> str:
    return json.dumps(
        {"model": "m", "created_at": "2026-01-01T00:00:00Z", "message": message, **top}
    )


def piece(field: str, value: Any) -> str:
    return line({"role": "assistant", "content": "", field: value}, done=False)


@pytest.mark.parametrize("name", PARAMS)
def test_every_corpus_line_gives_what_the_dict_path_gives(corpus: Path, name: str) -> None:
    interactions = [
        i
        for i in cassettes.load(corpus / name).interactions
        if i.request is not None and i.request.path == "/api/chat"
    ]
    assert interactions
    for interaction in interactions:
        lines = [x for x in interaction.response.body.decode().splitlines() if x.strip()]
        _, hits = compare(lines)
        # every line but the first and the done line is a text or thinking piece
        # or a tool call; the pieces all take the fast path
        pieces = sum(
            1
            for x in lines[1:]
            if not json.loads(x)["done"] and not json.loads(x)["message"].get("tool_calls")
        )
        assert hits == pieces > 0


def test_hot_lines_take_the_fast_path_with_exact_chunks() -> None:
    parser = Counting(OLLAMA)
    parser.message("", piece("thinking", "hm"))
    assert parser.message("", piece("thinking", " ok")) == [ReasoningDelta("reasoning-1", " ok")]
    assert parser.message("", piece("content", "Hi")) == [
        BlockEnd("reasoning-1"),
        BlockStart(index="text-2", block="text"),
        TextDelta("text-2", "Hi"),
    ]
    # a new top-level field is kept once, by the dict path; then the lines
    # holding it stay typed, and keep it again only when its value changes
    kept = {"type": "ollama.event", "event": "line", "field": "future"}
    assert parser.message("", line({"role": "assistant", "content": "!"}, future=[1])) == [
        TextDelta("text-2", "!"),
        BlockStart(index="event-1", block="unknown", raw={**kept, "value": [1]}),
        BlockEnd("event-1"),
    ]
    assert parser.message("", line({"role": "assistant", "content": "?"}, future=[1])) == [
        TextDelta("text-2", "?")
    ]
    assert parser.message("", line({"role": "assistant", "content": "."}, future=[2])) == [
        TextDelta("text-2", "."),
        BlockStart(index="event-2", block="unknown", raw={**kept, "value": [2]}),
        BlockEnd("event-2"),
    ]
    assert parser.hits == 4


def test_new_message_fields_tool_calls_wrong_types_and_the_end_take_the_dict_path() -> None:
    hot = hot_decoder().decode(piece("content", "x"))
    assert (hot.message, hot.done) == (HotMessage(role="assistant", content="x"), False)
    with pytest.raises(msgspec.ValidationError, match="unknown field `images`"):
        hot_decoder().decode(line({"role": "assistant", "images": ["b64"]}))
    lines = [
        piece("content", "a"),
        line({"role": "assistant", "content": "b", "images": ["b64"]}),
        line({"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": {}}}]}),
        piece("content", 5),
        piece("thinking", None),
        line(None),
        line({"role": "assistant", "content": "c"}, done="no"),
        line({"role": "assistant", "content": ""}, done=True, done_reason="stop", eval_count=3),
        piece("content", "late"),
    ]
    seen, hits = compare(lines)
    assert hits == 1  # only the null thinking piece; "a" is the first line
    assert "arrived after the response finished" in seen[-1]
    assert "message.content is not a string" in seen[3]
