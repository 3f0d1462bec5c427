"""A read's frames parsed in one call (``ParserSkeleton.messages``) give what
one call per frame (``message``) gives: the same chunks in the same order, the
same error after the same chunks, and nothing read past the finish.  The one
difference is the skeleton's usage rule: usage is a snapshot, so a read emits
only the last of the usage objects a fast path held, and at every read's end
the usage so far is the same either way.

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
from hypothesis import given, settings
from hypothesis import strategies as st

from elelem.errors import ElelemError, MalformedStreamError
from elelem.providers import load_shape
from elelem.shapes.openai_chat.parser import ChatParser
from elelem.shapes.skeleton import ParserSkeleton
from elelem.stream import (
    BlockEnd,
    BlockStart,
    Chunk,
    Finish,
    ResponseStart,
    TextDelta,
    UsageUpdate,
)
from elelem.vocabulary import ProviderId, Usage
from test_unknown_field_property import corpus_streams

P = ProviderId("openai")


Reads = tuple[list[list[Chunk]], Any]


def one_by_one(parser: Any, frames: Sequence[tuple[str, str]], size: int) -> Reads:
    """Each read's chunks, its frames fed one ``message`` call at a time."""
    reads: list[list[Chunk]] = []
    try:
        for start in range(0, len(frames), size):
            if parser.finished:
                break
            reads.append([])
            for event, data in frames[start : start + size]:
                if parser.finished:
                    return reads, None
                reads[-1].extend(parser.message(event, data))
    except ElelemError as exc:
        return reads, (type(exc), str(exc))
    return reads, None


def in_reads(parser: Any, frames: Sequence[tuple[str, str]], size: int) -> Reads:
    """Each read's chunks, its frames fed in one ``messages`` call."""
    reads: list[list[Chunk]] = []
    try:
        for start in range(0, len(frames), size):
            reads.append([])
            parser.messages(frames[start : start + size], reads[-1])
            if parser.finished:
                break
    except ElelemError as exc:
        return reads, (type(exc), str(exc))
    return reads, None


def _no_usage(reads: list[list[Chunk]]) -> list[Chunk]:
    return [c for read in reads for c in read if not isinstance(c, UsageUpdate)]


def _usage_at_each_end(reads: list[list[Chunk]]) -> list[Any]:
    usage, ends = None, []
    for read in reads:
        for c in read:
            if isinstance(c, UsageUpdate):
                usage = c.usage
        ends.append(usage)
    return ends


def _subsequence(part: list[Any], whole: list[Any]) -> bool:
    rest = iter(whole)
    return all(any(item == other for other in rest) for item in part)


def _ids() -> list[Any]:
    return [pytest.param(i, id=s[2]) for i, s in enumerate(corpus_streams())]


@pytest.mark.parametrize("index", _ids())
def test_every_corpus_stream_parses_alike_in_reads_of_any_size(corpus: Path, index: int) -> None:
    shape, provider, _, frames = corpus_streams()[index]
    make = load_shape(shape).new_parser
    for size in (1, 2, 7, len(frames) or 1):
        want, want_error = one_by_one(make(ProviderId(provider)), frames, size)
        got, got_error = in_reads(make(ProviderId(provider)), frames, size)
        assert got_error == want_error
        if size == 1:
            assert got == want  # a read of one frame is one message() call
        assert _no_usage(got) == _no_usage(want)
        assert _usage_at_each_end(got) == _usage_at_each_end(want)
        usage = [c for read in got for c in read if isinstance(c, UsageUpdate)]
        assert _subsequence(usage, [c for read in want for c in read if isinstance(c, UsageUpdate)])


def test_a_read_of_growing_usage_emits_its_last_usage_after_its_text() -> None:
    def counted(text: str, tokens: int) -> tuple[str, str]:
        usage = {"prompt_tokens": 3, "completion_tokens": tokens, "total_tokens": 3 + tokens}
        choice = {"index": 0, "delta": {"content": text}, "finish_reason": None}
        return "", json.dumps({"id": "c1", "model": "m", "choices": [choice], "usage": usage})

    parser = ChatParser(P)
    first: list[Chunk] = []
    parser.messages([counted("a", 1)], first)
    out: list[Chunk] = []
    parser.messages([counted("b", 2), counted("c", 3), counted("d", 4)], out)
    assert [type(c).__name__ for c in first] == [
        "ResponseStart",
        "BlockStart",
        "TextDelta",
        "UsageUpdate",
    ]
    last = {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}
    assert out == [
        TextDelta("text-1", "b"),
        TextDelta("text-1", "c"),
        TextDelta("text-1", "d"),
        UsageUpdate(Usage(input=3, output=4, raw=last)),
    ]
    # Frame by frame, each snapshot is emitted with its frame.
    parser = ChatParser(P)
    parser.message(*counted("a", 1))
    assert list(parser.message(*counted("b", 2))) == [
        TextDelta("text-1", "b"),
        UsageUpdate(
            Usage(
                input=3,
                output=2,
                raw={"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
            )
        ),
    ]


def test_a_held_usage_comes_before_the_next_frame_the_dict_path_takes() -> None:
    usage = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    grown = {"id": "c1", "model": "m", "usage": usage}
    parser = ChatParser(P)
    out: list[Chunk] = []
    frames = [
        chunk("a"),
        ("", json.dumps({**grown, "choices": [{"index": 0, "delta": {"content": "b"}}]})),
        (
            "",
            json.dumps(
                {"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
            ),
        ),
        ("", "[DONE]"),
    ]
    parser.messages(frames, out)
    assert out[3:] == [
        TextDelta("text-1", "b"),
        UsageUpdate(Usage(input=3, output=2, raw=usage)),
        BlockEnd("text-1"),
        Finish("stop", raw="stop"),
    ]


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


_CHAT_DELTAS = [
    {"content": "a"},
    {"content": "b"},
    {"content": ""},
    {"content": None, "reasoning_content": "r"},
    {"reasoning": "s"},
    {"reasoning_content": "r", "reasoning": "s"},
    {"content": [{"type": "text", "text": "p"}]},
    {"content": [{"type": "text", "text": "p"}, {"type": "text", "text": "q"}]},
    {"role": "assistant", "content": "c"},
    {"refusal": "no"},
    {"tool_calls": [{"index": 0, "id": "t1", "function": {"name": "f", "arguments": "{}"}}]},
    {
        "tool_calls": [
            {"index": 1, "id": "k1", "type": "custom", "custom": {"name": "g", "input": ""}}
        ]
    },
    {"tool_calls": [{"index": 1, "custom": {"input": 'x = "1"\n'}}]},
    {"function_call": {"name": "h", "arguments": '{"a"'}},
    {},
]


@settings(max_examples=300, deadline=None)
@given(
    steps=st.lists(
        st.tuples(
            st.integers(0, len(_CHAT_DELTAS) - 1),
            st.sampled_from([None, None, None, "stop"]),
            st.sampled_from(["none", "none", "same", "grow", "null"]),
            st.sampled_from([None, None, "null", "x"]),
            st.sampled_from([None, "p", "p", "q"]),
            st.sampled_from([0, 0, 0, 1, 2]),
        ),
        max_size=25,
    ),
    size=st.integers(1, 30),
)
def test_any_chat_stream_parses_alike_in_reads(
    steps: list[tuple[int, str | None, str, str | None, str | None, int]], size: int
) -> None:
    # Chat's fast_run takes the commonest chunk inline; on any mix of text,
    # reasoning, parts, refusals, tool calls (function, custom, the
    # deprecated function_call), finish reasons, usage (absent, repeated,
    # growing, null), a choice field and a field nobody listed (in turns,
    # changing), over the choices of an n>1 request, read in any size, it
    # must give what message() gives frame by frame (up to the usage rule).
    frames = []
    for n, (which, finish, usage, logprobs, probe, number) in enumerate(steps):
        choice: dict[str, Any] = {"index": number, "delta": _CHAT_DELTAS[which]}
        if finish is not None:
            choice["finish_reason"] = finish
        if logprobs is not None:
            choice["logprobs"] = None if logprobs == "null" else {"content": [logprobs]}
        chunk_obj: dict[str, Any] = {"id": "c1", "model": "m", "choices": [choice]}
        if probe is not None:  # a top-level field nobody listed, learnt by the fast path
            chunk_obj["x_probe"] = probe
        if usage != "none":
            tokens = n if usage == "grow" else 1
            chunk_obj["usage"] = (
                None
                if usage == "null"
                else {"prompt_tokens": 2, "completion_tokens": tokens, "total_tokens": 2 + tokens}
            )
        frames.append(("", json.dumps(chunk_obj)))
    frames.append(("", "[DONE]"))
    want, want_error = one_by_one(ChatParser(P), frames, size)
    got, got_error = in_reads(ChatParser(P), frames, size)
    assert got_error == want_error
    assert _no_usage(got) == _no_usage(want)
    assert _usage_at_each_end(got) == _usage_at_each_end(want)


_GEMINI_PARTS = [
    [{"text": "a"}],
    [{"text": "b"}],
    [{"text": "t", "thought": True}],
    [{"text": "s", "thoughtSignature": "c2ln"}],
    [{"text": ""}],
    [{"text": "a"}, {"text": "t", "thought": True}],
    [{"functionCall": {"name": "f", "args": {"x": 1}}}],
]


@settings(max_examples=300, deadline=None)
@given(
    steps=st.lists(
        st.tuples(
            st.integers(0, len(_GEMINI_PARTS) - 1),
            st.sampled_from([None, None, None, "STOP"]),
            st.sampled_from(["same", "same", "grow", "none"]),
            st.sampled_from([0, 0, 0, 1]),
            st.sampled_from([None, "p", "p", "q"]),
        ),
        max_size=25,
    ),
    size=st.integers(1, 30),
)
def test_any_gemini_stream_parses_alike_in_reads(
    steps: list[tuple[int, str | None, str, int, str | None]], size: int
) -> None:
    # Gemini's fast_run takes one text or thought part inline and holds a
    # changed usageMetadata; on any mix of parts, finish reasons, candidates
    # usage and a field nobody modelled, read in any size, it gives what
    # message() gives.
    make = load_shape("gemini").new_parser
    frames = []
    for n, (which, finish, usage, index, probe) in enumerate(steps):
        candidate: dict[str, Any] = {
            "content": {"parts": _GEMINI_PARTS[which], "role": "model"},
            "index": index,
        }
        if finish is not None:
            candidate["finishReason"] = finish
        obj: dict[str, Any] = {"candidates": [candidate], "modelVersion": "m", "responseId": "r"}
        if probe is not None:  # an envelope field nobody modelled, learnt by the fast path
            obj["x_probe"] = probe
        if usage != "none":
            tokens = n if usage == "grow" else 1
            obj["usageMetadata"] = {"promptTokenCount": 2, "candidatesTokenCount": tokens}
        frames.append(("", json.dumps(obj)))
    want, want_error = one_by_one(make(P), frames, size)
    got, got_error = in_reads(make(P), frames, size)
    assert got_error == want_error
    assert _no_usage(got) == _no_usage(want)
    assert _usage_at_each_end(got) == _usage_at_each_end(want)


def test_a_learnt_gemini_field_that_changes_on_a_hot_chunk_is_kept_in_a_read() -> None:
    def frame(text: str, probe: str | None, finish: str | None = None) -> tuple[str, str]:
        candidate: dict[str, Any] = {"content": {"parts": [{"text": text}]}, "index": 0}
        if finish is not None:
            candidate["finishReason"] = finish
        obj: dict[str, Any] = {
            "candidates": [candidate],
            "usageMetadata": {"promptTokenCount": 2},  # the hot chunk has one
            "modelVersion": "m",
            "responseId": "r",
        }
        if probe is not None:
            obj["x_probe"] = probe
        return "", json.dumps(obj)

    frames = [frame("a", "p"), frame("b", "p"), frame("c", "q"), frame("d", None, "STOP")]
    make = load_shape("gemini").new_parser
    for reads in (one_by_one(make(P), frames, 4), in_reads(make(P), frames, 4)):
        finish = reads[0][-1][-1]
        assert isinstance(finish, Finish)
        assert finish.payloads[0].value == {"modelVersion": "m", "responseId": "r", "x_probe": "q"}


def test_chunks_that_take_turns_with_a_field_still_see_it_change() -> None:
    # Chunks with and without usage take turns (each carrying a field nobody
    # listed): the ones without change nothing and are passed over, but a
    # usage that goes back to an earlier value is still a change.
    def frame(text: str, tokens: int | None) -> tuple[str, str]:
        obj: dict[str, Any] = {
            "id": "c1",
            "model": "m",
            "x_probe": 1,
            "choices": [{"index": 0, "delta": {"content": text}}],
        }
        if tokens is not None:
            obj["usage"] = {
                "prompt_tokens": 1,
                "completion_tokens": tokens,
                "total_tokens": 1 + tokens,
            }
        return "", json.dumps(obj)

    cited = '{"id": "c1", "model": "m", "citations": ["u"], "usage": %s, "x_probe": 1, '
    cited += '"choices": [{"index": 0, "delta": {"content": "z"}}]}'
    one = '{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}'
    two = '{"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}'
    frames = [frame("a", 1), frame("b", None), frame("c", 1), frame("d", 2), frame("e", None)]
    frames += [frame("f", 1), frame("g", None), ("", cited % one), frame("h", 1)]
    frames += [("", cited % two), frame("i", 1)]
    for size in (1, 3, len(frames)):
        want = one_by_one(ChatParser(P), frames, size)[0]
        got = in_reads(ChatParser(P), frames, size)[0]
        assert _usage_at_each_end(got) == _usage_at_each_end(want)
        assert _usage_at_each_end(got)[-1] == Usage(
            input=1, output=1, raw={"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        )


class Counting(ParserSkeleton):
    """A shape whose fast path raises on a frame naming the frame it counts."""

    def __init__(self) -> None:
        super().__init__(P)
        self.started = True

    def fast(self, event: str, data: str) -> list[Chunk] | None:
        if data == "bad":
            raise MalformedStreamError(f"frame {self.frames} is bad", retryable=False)
        return [] if data == "hot" else None

    def event(self, obj: dict[str, Any], event: str) -> list[Chunk]:
        return []


def test_an_error_in_a_run_names_the_frame_message_would_name() -> None:
    frames = [("", "hot"), ("", "{}"), ("", "hot"), ("", "hot"), ("", "bad"), ("", "hot")]
    for size in (1, 2, len(frames)):
        for feed in (one_by_one, in_reads):
            assert feed(Counting(), frames, size)[1] == (MalformedStreamError, "frame 5 is bad")
    parser = Counting()
    parser.messages(frames[:4], [])
    assert parser.frames == 4


def test_a_finish_reason_sent_again_stays_inline_and_changes_nothing() -> None:
    """Some servers repeat the finish reason on later text chunks: the read's
    inline loop takes them (the general rule runs only for the first), and
    the chunks are those of one call per frame."""
    frames = [chunk("a"), chunk("b", "stop"), chunk("c", "stop"), chunk("d", "stop"), chunk("e")]
    frames += [chunk("f", "length"), ("", "[DONE]")]

    class Applying(ChatParser):
        applied = 0

        def _apply_hot(self, hot: Any) -> list[Chunk] | None:
            Applying.applied += 1
            return super()._apply_hot(hot)

    parser = Applying(P)
    out: list[Chunk] = []
    parser.messages(frames, out)
    want: list[Chunk] = []
    one = ChatParser(P)
    for frame in frames:
        want.extend(one.message(*frame))
    assert out == want
    assert [c.text for c in out if isinstance(c, TextDelta)] == ["a", "b", "c", "d", "e", "f"]
    assert out[-1] == Finish("max-tokens", raw="length")
    # "b" brings the finish reason, "f" changes it; "c", "d" and "e" are inline.
    assert Applying.applied == 2


def _sse_body(frames: Sequence[tuple[str, str]]) -> bytes:
    out = []
    for event, data in frames:
        head = f"event: {event}\n" if event else ""
        lines = "".join(f"data: {line}\n" for line in data.split("\n"))
        out.append(f"{head}{lines}\n")
    return "".join(out).encode()


def _decoded_reads(parser: Any, body: bytes, size: int, runs: bool) -> Reads:
    from elelem.transport.framing import SSEDecoder

    decoder = SSEDecoder()
    feed = decoder.feed_runs if runs else decoder.feed
    reads: list[list[Chunk]] = []
    try:
        for start in range(0, len(body), size):
            reads.append([])
            parser.messages(feed(body[start : start + size]), reads[-1])
            if parser.finished:
                break
        reads.append(list(parser.eof()))
    except ElelemError as exc:
        return reads, (type(exc), str(exc))
    return reads, None


def _run_ids() -> list[Any]:
    return [
        pytest.param(i, id=s[2])
        for i, s in enumerate(corpus_streams())
        if load_shape(s[0]).new_parser(P).takes_runs  # type: ignore[attr-defined]
    ]


def test_every_event_stream_shape_takes_runs() -> None:
    from test_shapes_common import ALL_SHAPES

    taking = {
        name
        for name in ALL_SHAPES
        if load_shape(name).new_parser(P).takes_runs  # type: ignore[attr-defined]
    }
    # Bedrock's binary event stream and Ollama's NDJSON have no SSE runs.
    assert taking == {"anthropic_messages", "openai_responses", "openai_chat", "gemini"}


@pytest.mark.parametrize("index", _run_ids())
def test_runs_of_data_only_events_parse_as_their_frames(corpus: Path, index: int) -> None:
    """The driver hands a parser that takes runs each read's data-only events
    as their bytes (``SSEDecoder.feed_runs``): every corpus stream of such
    a shape, in reads of any size, gives what its events give."""
    shape, provider, _, frames = corpus_streams()[index]
    make = load_shape(shape).new_parser
    body = _sse_body(frames)
    for size in (7, 100, 1000, len(body) or 1):
        want, want_error = _decoded_reads(make(ProviderId(provider)), body, size, False)
        got, got_error = _decoded_reads(make(ProviderId(provider)), body, size, True)
        assert got_error == want_error
        assert _no_usage(got) == _no_usage(want)
        assert _usage_at_each_end(got) == _usage_at_each_end(want)


@settings(max_examples=150, deadline=None)
@given(
    parts=st.lists(
        st.sampled_from(
            [
                chunk("a"),
                chunk("b\u00e9"),
                chunk("c", "stop"),
                ("", '{"choices": 7}'),
                ("", "not json"),
                ("", "[DONE]"),
                ("error", '{"error": {"message": "boom"}}'),
                ("", json.dumps({"id": "c1", "choices": [], "usage": {"prompt_tokens": 1}})),
                ("", json.dumps({"choices": [{"index": 0, "delta": {"tool_calls": 1}}]})),
            ]
        ),
        max_size=12,
    ),
    size=st.integers(1, 200),
)
def test_runs_and_frames_agree_on_any_stream_and_split(
    parts: list[tuple[str, str]], size: int
) -> None:
    body = _sse_body([chunk("hi"), *parts])
    want, want_error = _decoded_reads(ChatParser(P), body, size, False)
    got, got_error = _decoded_reads(ChatParser(P), body, size, True)
    assert got_error == want_error
    assert _no_usage(got) == _no_usage(want)
    assert _usage_at_each_end(got) == _usage_at_each_end(want)


def _named(frames: Sequence[tuple[str, str]], every: int, other: str) -> list[tuple[str, str]]:
    """The frames named by their JSON type, as servers name them, but every
    ``every``-th one named ``other`` (``""``: left unnamed)."""
    named = []
    for number, (_, data) in enumerate(frames, 1):
        try:
            kind = json.loads(data).get("type", "")
        except (ValueError, AttributeError):
            kind = ""  # not an object: named nothing, as a server would
        named.append((other if number % every == 0 else str(kind), data))
    return named


def _named_ids() -> list[Any]:
    return [
        pytest.param(i, id=s[2])
        for i, s in enumerate(corpus_streams())
        if s[0] in ("anthropic_messages", "openai_responses")
    ]


@pytest.mark.parametrize("index", _named_ids())
def test_runs_of_named_events_parse_as_their_frames(corpus: Path, index: int) -> None:
    """Runs of ``event:`` + ``data:`` blocks (Anthropic, Responses) give what
    their frames give: named by type, some named otherwise (another event,
    ``error``, none), in reads of any size."""
    shape, provider, _, frames = corpus_streams()[index]
    make = load_shape(shape).new_parser
    for every, other in (
        (10**9, ""),
        (3, "ping"),
        (4, "error"),
        (2, ""),
        (5, "response.output_text.delta"),
    ):
        body = _sse_body(_named(frames, every, other))
        for size in (64, 900, len(body) or 1):
            want, want_error = _decoded_reads(make(ProviderId(provider)), body, size, False)
            got, got_error = _decoded_reads(make(ProviderId(provider)), body, size, True)
            assert got_error == want_error, (every, other, size)
            assert _no_usage(got) == _no_usage(want), (every, other, size)
            assert _usage_at_each_end(got) == _usage_at_each_end(want)
