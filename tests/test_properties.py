"""Hypothesis properties: the codec round-trips every vocabulary value; the
assembler never fails with anything but ProtocolViolation, is indifferent to
how deltas are split, and keeps every citation on interruption."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elelem.codec import dumps, loads
from elelem.errors import ProtocolViolation
from elelem.stream import (
    AssembledResponse,
    Assembler,
    BlockEnd,
    BlockStart,
    Chunk,
    Citation,
    Finish,
    Hosted,
    Payload,
    ReasoningDelta,
    ResponseStart,
    TextDelta,
    ToolCallDelta,
    UsageUpdate,
)
from elelem.vocabulary import (
    ActivityId,
    Attribution,
    Block,
    CallId,
    CodeExecution,
    Drop,
    GenerationOptions,
    HostedActivity,
    HostedTool,
    Message,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    ReasoningOptions,
    Source,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolSpec,
    UnknownBlock,
    Usage,
    UserLocation,
    WebFetch,
    WebSearch,
)
from elelem.vocabulary.registry import is_reserved_tag

FAST = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# -- vocabulary strategies ----------------------------------------------------------------

# Any text, non-ASCII and control characters included (lone surrogates are not text).
texts = st.text(max_size=12)
names = st.text(min_size=1, max_size=8)
big_ints = st.integers() | st.integers(min_value=-(2**200), max_value=2**200)
json_scalars = (
    st.none() | st.booleans() | big_ints | st.floats(allow_nan=False, allow_infinity=False) | texts
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)
json_objects = st.dictionaries(texts, json_values, max_size=4)

payloads = st.builds(
    ProviderPayload,
    names.map(ProviderId),
    names,
    st.none() | texts,
    json_values,
)
sources = st.builds(Source, st.none() | texts, st.none() | texts)


@st.composite
def attributions(draw: st.DrawFn, length: int) -> Attribution:
    span = None
    if draw(st.booleans()):
        start = draw(st.integers(0, length))
        span = (start, draw(st.integers(start, length)))
    return Attribution(
        draw(sources),
        draw(st.none() | texts),
        span,
        draw(st.none() | payloads),
        draw(st.booleans()),
    )


@st.composite
def text_blocks(draw: st.DrawFn) -> TextBlock:
    text = draw(texts)
    return TextBlock(
        text,
        tuple(draw(st.lists(attributions(len(text)), max_size=3))),
        tuple(draw(st.lists(payloads, max_size=2))),
        draw(st.booleans()),
    )


unknown_tags = names.filter(lambda tag: not is_reserved_tag(tag))


@st.composite
def unknown_blocks(draw: st.DrawFn) -> UnknownBlock:
    raw = draw(json_objects)
    raw["type"] = draw(unknown_tags)
    return UnknownBlock(raw)


blocks = st.one_of(
    text_blocks(),
    st.builds(ReasoningBlock, texts, st.lists(payloads, max_size=2).map(tuple), st.booleans()),
    st.builds(
        ToolCallBlock,
        names.map(CallId),
        names,
        texts,
        st.lists(payloads, max_size=2).map(tuple),
    ),
    st.builds(
        ToolResultBlock,
        names.map(CallId),
        texts,
        st.booleans(),
        st.none() | names,
        st.lists(payloads, max_size=1).map(tuple),
    ),
    unknown_blocks(),
)
activities = st.builds(
    HostedActivity,
    names.map(ActivityId),
    names,
    st.sampled_from(["started", "completed", "failed"]),
    json_values,
    texts,
    st.none() | payloads,
)
counts = st.integers(min_value=0, max_value=2**70)
usages = st.builds(
    Usage,
    counts,
    counts,
    counts,
    counts,
    counts,
    st.dictionaries(names, counts, max_size=3),
    json_values,
)
messages = st.builds(
    Message,
    st.sampled_from(["system", "user", "assistant"]),
    st.lists(blocks | activities, max_size=4).map(tuple),
    texts,
    st.none() | names.map(ProviderId),
    st.none() | texts,
)
finishes = st.builds(
    Finish, names, st.none() | texts, st.none() | texts, st.lists(payloads, max_size=1).map(tuple)
)
locations = st.builds(UserLocation, st.none() | texts, st.none() | texts, st.none() | texts)
floats = st.none() | st.floats(allow_nan=False, allow_infinity=False)
hosted_tools = st.one_of(
    st.builds(
        WebSearch,
        st.none() | counts,
        st.lists(texts, max_size=2).map(tuple),
        st.lists(texts, max_size=2).map(tuple),
        st.none() | locations,
        st.none() | texts,
    ),
    st.builds(WebFetch, st.none() | counts, citations=st.booleans(), version=st.none() | texts),
    st.builds(CodeExecution, st.none() | texts),
)
options = st.builds(
    GenerationOptions,
    st.none() | counts,
    floats,
    floats,
    st.lists(texts, max_size=2).map(tuple),
    st.none() | st.builds(ReasoningOptions, st.none() | texts, st.none() | counts),
    st.none() | texts,
    json_objects,
)
responses = st.builds(
    AssembledResponse,
    st.none() | names.map(ProviderId),
    st.none() | texts,
    st.none() | texts,
    st.lists(blocks | activities, max_size=3).map(tuple),
    st.none() | usages,
    st.none() | finishes,
    st.booleans(),
    st.lists(st.builds(Drop, texts, texts, texts, texts), max_size=2).map(tuple),
)

# Every vocabulary type, with the type to decode it as.
typed_values: st.SearchStrategy[tuple[Any, object]] = st.one_of(
    blocks.map(lambda b: (Block, b)),
    payloads.map(lambda p: (ProviderPayload, p)),
    sources.map(lambda s: (Source, s)),
    texts.map(len).flatmap(attributions).map(lambda a: (Attribution, a)),
    activities.map(lambda a: (HostedActivity, a)),
    usages.map(lambda u: (Usage, u)),
    messages.map(lambda m: (Message, m)),
    finishes.map(lambda f: (Finish, f)),
    hosted_tools.map(lambda t: (HostedTool, t)),
    options.map(lambda o: (GenerationOptions, o)),
    st.builds(ToolSpec, names, texts, json_objects).map(lambda t: (ToolSpec, t)),
    responses.map(lambda r: (AssembledResponse, r)),
    st.builds(Drop, texts, texts, texts, texts).map(lambda d: (Drop, d)),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(typed_values)
def test_codec_round_trips_every_vocabulary_value(typed: tuple[Any, object]) -> None:
    typ, value = typed
    data = dumps(value)
    back = loads(data, typ)
    assert back == value
    assert type(back) is type(value)
    assert dumps(back) == data


@FAST
@given(unknown_blocks(), st.lists(text_blocks(), max_size=2))
def test_unknown_blocks_reencode_byte_identical_at_their_position(
    unknown: UnknownBlock, before: list[TextBlock]
) -> None:
    message = Message("assistant", (*before, unknown, *before))
    data = dumps(message)
    back = loads(data, Message)
    decoded = back.content[len(before)]
    assert isinstance(decoded, UnknownBlock)
    assert decoded.position == len(before)
    assert dumps(decoded) == dumps(unknown.raw)
    assert dumps(back) == data


# -- assembler: arbitrary chunk sequences ---------------------------------------------------

keys = st.sampled_from([0, 1, "a"])
small_ranges = st.none() | st.tuples(st.integers(0, 4), st.integers(0, 4)).map(
    lambda t: (min(t), max(t))
)
small_payloads = st.builds(
    ProviderPayload,
    st.sampled_from(["anthropic", "openai"]).map(ProviderId),
    st.sampled_from(["signature", "item-id"]),
    st.none(),
    st.sampled_from(["s1", "s2", 3]),
)
raws = st.sampled_from(
    [
        None,
        {"type": "server_tool_use", "id": "x"},
        {"type": "text", "text": "core tag"},
        {"no": "type"},
        {"type": "hosted"},
        {"type": "bad", "v": float("nan")},
    ]
)
chunks: st.SearchStrategy[Chunk] = st.one_of(
    st.builds(ResponseStart, st.none() | texts, st.none() | texts),
    st.builds(
        BlockStart,
        keys,
        st.sampled_from(["text", "reasoning", "tool-call", "unknown", "server_tool_use"]),
        st.none() | st.sampled_from(["", "call_1"]),
        st.none() | st.sampled_from(["", "f"]),
        raws,
    ),
    st.builds(TextDelta, keys, texts),
    st.builds(ReasoningDelta, keys, texts),
    st.builds(ToolCallDelta, keys, st.sampled_from(["", "{", '"a": 1', "}", "[1]", "x"])),
    st.builds(Citation, keys, st.builds(Attribution, sources, st.none(), small_ranges)),
    st.builds(Payload, keys, small_payloads),
    st.builds(BlockEnd, keys),
    st.builds(
        Hosted,
        st.builds(
            HostedActivity,
            st.sampled_from(["h1", "h2"]).map(ActivityId),
            st.just("web_search"),
            st.sampled_from(["started", "completed", "failed"]),
        ),
    ),
    st.builds(UsageUpdate, st.builds(Usage, st.integers(0, 9), st.integers(0, 9))),
    st.builds(Finish, st.sampled_from(["stop", "max-tokens", "tool-calls", "", "new-reason"])),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(chunks, max_size=14))
def test_assembler_on_any_chunk_sequence_returns_results_or_raises_protocol_violation(
    sequence: list[Chunk],
) -> None:
    assembler = Assembler()
    for position, chunk in enumerate(sequence):
        try:
            committed = assembler.feed(chunk)
        except ProtocolViolation as violation:
            assert violation.position == position
            break
        assert isinstance(committed, tuple)
        partial = assembler.partial()
        assert isinstance(partial, AssembledResponse)
        # Whatever it keeps can be stored and read back.
        assert loads(dumps(partial), AssembledResponse) == partial
    if assembler.finished:
        result = assembler.result()
        assert result.complete is True
        assert loads(dumps(result), AssembledResponse) == result
    else:
        assert assembler.partial().complete is False


# -- assembler: valid streams ----------------------------------------------------------------


@st.composite
def splits(draw: st.DrawFn, text: str) -> list[str]:
    """``text`` cut at arbitrary points (empty pieces included)."""
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=4)))
    pieces, last = [], 0
    for cut in cuts:
        pieces.append(text[last:cut])
        last = cut
    pieces.append(text[last:])
    return pieces


@st.composite
def valid_streams(draw: st.DrawFn) -> tuple[list[Chunk], list[Chunk]]:
    """One valid stream twice: with every delta whole, and with deltas split arbitrarily."""
    whole: list[Chunk] = [ResponseStart("resp_1", "m", ProviderId("p"))]
    split: list[Chunk] = list(whole)

    def both(*items: Chunk) -> None:
        whole.extend(items)
        split.extend(items)

    activity = 0
    for index in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["text", "reasoning", "tool-call", "unknown", "hosted"]))
        if kind == "hosted":
            started = HostedActivity(ActivityId(f"h{activity}"), "web_search", "started")
            activity += 1
            both(Hosted(started))
            if draw(st.booleans()):
                both(Hosted(started.transition(draw(st.sampled_from(["completed", "failed"])))))
            continue
        key = draw(st.sampled_from([index, str(index)]))
        if kind == "unknown":
            both(
                BlockStart(key, "unknown", raw={"type": "server_tool_use", "n": index}),
                BlockEnd(key),
            )
            continue
        if kind == "tool-call":
            both(BlockStart(key, "tool-call", id=f"call_{index}", name="f"))
            text = dumps(draw(json_objects)).decode()
            delta: type[Any] = ToolCallDelta
        else:
            both(BlockStart(key, kind))
            text = draw(texts)
            delta = TextDelta if kind == "text" else ReasoningDelta
        whole.append(delta(key, text))
        pieces: list[Chunk] = [delta(key, piece) for piece in draw(splits(text))]
        if kind == "text":
            # Citations may arrive anywhere in the block (OpenAI annotations
            # come mid-text, Anthropic's at the end): in the split stream they
            # are scattered among the deltas, keeping their order.
            cites: list[Chunk] = [
                Citation(key, msgspec.structs.replace(a, complete=True))
                for a in draw(st.lists(attributions(len(text)), max_size=3))
            ]
            whole.extend(cites)
            # Citation i goes before piece slots[i] (or after the last piece).
            slots = sorted(
                draw(
                    st.lists(st.integers(0, len(pieces)), min_size=len(cites), max_size=len(cites))
                )
            )
            mixed: list[Chunk] = []
            placed = 0
            for at in range(len(pieces) + 1):
                while placed < len(cites) and slots[placed] == at:
                    mixed.append(cites[placed])
                    placed += 1
                if at < len(pieces):
                    mixed.append(pieces[at])
            pieces = mixed
        split.extend(pieces)
        if kind != "tool-call" or draw(st.booleans()):
            for payload in draw(st.lists(small_payloads, max_size=2)):
                both(Payload(key, payload))
        both(BlockEnd(key))
    both(
        UsageUpdate(Usage(3, 4)),
        Finish(draw(st.sampled_from(["stop", "tool-calls", "max-tokens"]))),
    )
    return whole, split


def run(chunks: list[Chunk]) -> tuple[AssembledResponse, list[object]]:
    assembler = Assembler()
    committed = assembler.feed_all(chunks)
    return assembler.result(), committed


@FAST
@given(valid_streams())
def test_a_valid_stream_commits_the_same_however_its_deltas_are_split(
    streams: tuple[list[Chunk], list[Chunk]],
) -> None:
    whole, split = streams
    expected, committed_whole = run(whole)
    result, committed_split = run(split)
    assert result == expected
    assert dumps(result) == dumps(expected)
    # What feed() returned, in order, is exactly the committed content.
    assert tuple(committed_whole) == expected.content
    assert tuple(committed_split) == expected.content


def _citations(response: AssembledResponse) -> list[Attribution]:
    return [
        a for part in response.content if isinstance(part, TextBlock) for a in part.attributions
    ]


@FAST
@given(valid_streams(), st.data())
def test_partial_after_any_prefix_keeps_every_citation_received(
    streams: tuple[list[Chunk], list[Chunk]], data: st.DataObject
) -> None:
    _, split = streams
    cut = data.draw(st.integers(0, len(split)))
    assembler = Assembler()
    assembler.feed_all(split[:cut])
    partial = assembler.partial()
    received = [c.attribution for c in split[:cut] if isinstance(c, Citation)]
    kept = _citations(partial)
    assert [(a.source, a.excerpt, a.replay) for a in kept] == [
        (a.source, a.excerpt, a.replay) for a in received
    ]
    for part in partial.content:
        if isinstance(part, TextBlock):
            for attribution in part.attributions:
                # A range is kept exactly when it fits the text received.
                assert attribution.complete is part.complete
                assert attribution.range is None or attribution.range[1] <= len(part.text)
    for original, attribution in zip(received, kept, strict=True):
        assert attribution.range in (original.range, None)
