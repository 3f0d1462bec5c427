"""The typed fast path of the Chat Completions parser gives exactly what the dict path gives.

:class:`DictOnly` is the parser with the fast path switched off, so every
frame goes through the dict path.  Both parse the same frames (every corpus
recording, and generated streams whose chunks carry extra fields, usage,
other choices and values of other types); each frame, and the end of the
stream, must give the same chunks, or the same error.
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
from elelem.shapes.openai_chat.fast import hot_decoder
from elelem.shapes.openai_chat.parser import ChatParser
from elelem.stream import BlockEnd, BlockStart, Chunk, Finish, Payload, ReasoningDelta, TextDelta
from elelem.vocabulary import ProviderId, ProviderPayload

OPENAI = ProviderId("openai")


class DictOnly(ChatParser):
    """The parser with the typed fast path off: every frame takes the dict path."""

    def fast(self, event: str, data: str) -> list[Chunk] | None:
        return None


class Counting(ChatParser):
    """The real parser, counting the frames its fast path answered."""

    hits = 0

    def fast(self, event: str, data: str) -> list[Chunk] | None:
        chunks = super().fast(event, data)
        if chunks is not None:
            Counting.hits += 1
        return chunks


def outcome(parser: ChatParser, event: str | None, data: str) -> str:
    """The frame's chunks (or, for event None, eof's), or its error, as exact text."""
    try:
        chunks = parser.eof() if event is None else parser.message(event, data)
        return repr(list(chunks))
    except ElelemError as exc:  # the error itself is what is compared
        return repr((type(exc), str(exc), exc.__dict__))


def compare(frames: list[tuple[str, str]], provider: str = "openai") -> list[str]:
    """Feed both parsers the frames, then eof; assert equal outcomes; return them."""
    fast, slow = Counting(ProviderId(provider)), DictOnly(ProviderId(provider))
    seen = []
    for event, data in [*frames, (None, "")]:
        got, want = outcome(fast, event, data), outcome(slow, event, data)
        assert got == want, data
        seen.append(got)
        if got.startswith("(<class"):
            break
    return seen


HEAD = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}


def chunk(delta: dict[str, Any], finish: str | None = None, **top: Any) -> tuple[str, str]:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return "", json.dumps({**HEAD, "choices": [choice], "usage": None, **top})


FIRST = chunk({"role": "assistant", "content": "", "refusal": None})


def test_hot_chunks_take_the_fast_path_with_exact_chunks() -> None:
    parser = Counting(OPENAI)
    Counting.hits = 0
    parser.message(*FIRST)
    assert parser.message(*chunk({"reasoning_content": "hm"})) == [
        BlockStart("reasoning-1", "reasoning"),
        Payload(
            "reasoning-1", ProviderPayload(OPENAI, "reasoning-field", None, "reasoning_content")
        ),
        ReasoningDelta("reasoning-1", "hm"),
    ]
    assert parser.message(*chunk({"content": "Hi \u00e9"})) == [
        BlockEnd("reasoning-1"),
        BlockStart("text-2", "text"),
        TextDelta("text-2", "Hi \u00e9"),
    ]
    assert parser.message(*chunk({}, "stop")) == []
    assert Counting.hits == 3
    assert parser.message("", "[DONE]") == [BlockEnd("text-2"), Finish("stop", raw="stop")]


def test_a_new_top_level_field_stays_on_the_fast_path_and_is_kept() -> None:
    extra_top = chunk({"content": "a"}, future="x")
    with pytest.raises(msgspec.ValidationError, match="unknown field `future"):
        hot_decoder().decoder.decode(extra_top[1])
    Counting.hits = 0
    later = [chunk({"content": c}, future="x") for c in "bcd"]
    changed = chunk({"content": "e"}, future="y")
    seen = compare([FIRST, extra_top, *later, changed, chunk({}, "stop"), ("", "[DONE]")])
    # The first chunk with the field takes the dict path; every later one is typed.
    assert Counting.hits == 5
    assert "'type': 'openai_chat.response_field', 'field': 'future', 'value': 'y'" in seen[-2]


def choice_chunk(delta: dict[str, Any], **fields: Any) -> tuple[str, str]:
    return "", json.dumps({**HEAD, "choices": [{"index": 0, "delta": delta, **fields}]})


def test_a_choice_field_nobody_listed_stays_on_the_fast_path_and_is_kept() -> None:
    data = choice_chunk({"content": "a"}, x_route=None)
    with pytest.raises(msgspec.ValidationError, match="unknown field `x_route"):
        hot_decoder().decoder.decode(data[1])
    valued = choice_chunk({"content": "b"}, x_route={"via": "eu"})
    Counting.hits = 0
    seen = compare([FIRST, data, data, valued, valued, data, chunk({}, "stop"), ("", "[DONE]")])
    # The first chunk with the field takes the dict path; then it is learnt.
    assert Counting.hits == 5
    assert "'field': 'x_route', 'value': [{'via': 'eu'}]" in seen[-2]


def test_choice_fields_with_values_are_kept_merged_and_never_replayed() -> None:
    from elelem.shapes.openai_chat import assistant_wire
    from elelem.stream import Assembler
    from elelem.vocabulary import UnknownBlock
    from elelem.vocabulary.drop import UNREPLAYABLE, Drop

    token = {"token": "a", "logprob": -0.5, "bytes": [97], "top_logprobs": []}
    other = {"token": "b", "logprob": -1.25, "bytes": [98], "top_logprobs": []}
    safe = {"hate": {"filtered": False, "severity": "safe"}}
    frames = [
        FIRST,
        choice_chunk({"content": "a"}, logprobs={"content": [token]}, content_filter_results=safe),
        choice_chunk({"content": "b"}, logprobs={"content": [other]}, content_filter_results=safe),
        choice_chunk({"content": "c"}, logprobs=None, native_finish_reason=None),
        choice_chunk({}, finish_reason="stop", native_finish_reason="completed"),
        ("", "[DONE]"),
    ]
    Counting.hits = 0
    compare(frames)
    assert Counting.hits == 4  # every chunk of the started response
    parser, assembler = ChatParser(OPENAI), Assembler(OPENAI)
    for event, data in frames:
        for piece in parser.message(event, data):
            assembler.feed(piece)
    result = assembler.result()
    kept = [p.raw for p in result.content if isinstance(p, UnknownBlock)]
    # Each value that differs from the last one kept, in order.
    assert kept == [
        {
            "type": "openai_chat.choice_field",
            "field": "logprobs",
            "value": [{"content": [token]}, {"content": [other]}],
        },
        {"type": "openai_chat.choice_field", "field": "content_filter_results", "value": [safe]},
        {
            "type": "openai_chat.choice_field",
            "field": "native_finish_reason",
            "value": ["completed"],
        },
    ]
    wire, dropped = assistant_wire(result.to_message(), OPENAI)
    # Never sent back, and said so, as a response field or a stream event is.
    detail = "a choice field, not part of the message"
    assert (wire, dropped) == (
        {"role": "assistant", "content": "abc"},
        [
            Drop("content[1]", "logprobs", UNREPLAYABLE, detail),
            Drop("content[2]", "content_filter_results", UNREPLAYABLE, detail),
            Drop("content[3]", "native_finish_reason", UNREPLAYABLE, detail),
        ],
    )


def test_a_list_repeated_on_every_chunk_is_applied_once_and_changes_are_not_missed() -> None:
    cites = ["https://a.example", "https://b.example"]
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    more = {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}
    frames = [
        FIRST,
        chunk({"content": "a"}, citations=cites, usage=usage),
        chunk({"content": "b"}, citations=cites, usage=usage),
        chunk({"content": "c"}, citations=cites, usage=more),
        chunk({"content": "d"}, citations=[*cites, "https://c.example"], usage=more),
        chunk({}, "stop", citations=[*cites, "https://c.example"], usage=more),
        ("", "[DONE]"),
    ]
    Counting.hits = 0
    seen = compare(frames)
    assert Counting.hits == 5
    assert seen[2] == "[TextDelta(index='text-1', text='b')]"  # nothing re-applied
    assert "UsageUpdate" in seen[3] and "https://c.example" in seen[-2]


def test_errors_stay_those_of_the_dict_path() -> None:
    second = {"index": -1, "delta": {"content": "x"}}
    cases = [
        ("", json.dumps({**HEAD, "choices": [second]})),  # not a choice number
        ("error", json.dumps({**HEAD, "choices": [{"index": 0, "delta": {"content": "x"}}]})),
        ("", json.dumps({**HEAD, "choices": [{"index": 0, "delta": {"content": 5}}]})),
    ]
    for case in cases:
        seen = compare([FIRST, case])
        assert seen[-1].startswith("(<class 'elelem.errors."), seen[-1]


_HOT_KEYS = ["content", "reasoning_content", "reasoning", "refusal", "role", "channel"]
_ODD_VALUES = st.one_of(st.none(), st.integers(), st.just([{"type": "text"}]))
_TOP = {
    "usage": st.just({"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}),
    "citations": st.just(["https://a.example"]),
    "obfuscation": st.text(max_size=4),
    "future": st.text(max_size=4),
    "error": st.just({"message": "boom"}),
}


def rarely(draw: st.DrawFn) -> bool:
    return draw(st.integers(0, 3)) == 0


@st.composite
def chat_frames(draw: st.DrawFn) -> tuple[str, str]:
    """Mostly chunks that fit the typed chunk, some with one thing that does not."""
    keys = draw(st.lists(st.sampled_from(_HOT_KEYS), max_size=3, unique=True))
    delta: dict[str, Any] = {key: draw(st.text(max_size=6)) for key in keys}
    if rarely(draw):
        delta[draw(st.sampled_from([*_HOT_KEYS, "extra"]))] = draw(_ODD_VALUES)
    choice: dict[str, Any] = {"delta": delta}
    if draw(st.booleans()):
        choice["index"] = draw(st.sampled_from([0, 0, 0, 1, True, 0.0]))
    if rarely(draw):
        choice["finish_reason"] = draw(st.sampled_from([None, "stop", "length", 3]))
    if rarely(draw):
        choice["logprobs"] = draw(st.sampled_from([None, {"content": []}]))
    choices = [choice]
    if rarely(draw):
        choices = draw(st.sampled_from([[], [choice, choice]]))
    top: dict[str, Any] = {**HEAD, "choices": choices}
    if rarely(draw):
        key = draw(st.sampled_from(sorted(_TOP)))
        top[key] = draw(_TOP[key])
    event = "error" if rarely(draw) and rarely(draw) else ""
    return event, json.dumps(top)


@settings(max_examples=300, deadline=None)
@given(st.lists(chat_frames(), max_size=10), st.booleans())
def test_generated_frames_give_the_same_outcome(frames: list[tuple[str, str]], done: bool) -> None:
    compare([FIRST, *frames, *([("", "[DONE]")] if done else [])])


def corpus_streams(corpus: Path) -> list[list[tuple[str, str]]]:
    rows = [ln.split("\t") for ln in (corpus / "INDEX.tsv").read_text().splitlines()[1:]]
    streams = []
    for row in rows:
        if row[5] != "chat_completions":
            continue
        for interaction in load(corpus / row[0]).interactions:
            if interaction.response.streamed:
                body = interaction.response.body
                streams.append([(f.event, f.data) for f in sse_frames(body)])
    return streams


def test_every_corpus_frame_gives_the_same_chunks(corpus: Path) -> None:
    Counting.hits = 0
    frames = 0
    for stream in corpus_streams(corpus):
        compare(stream)
        frames += len(stream)
    # Most recorded chunks are plain text or reasoning: the fast path ran.
    assert Counting.hits > frames // 2 > 0
