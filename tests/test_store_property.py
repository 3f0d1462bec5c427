"""Property: any conversation (every event kind, unknown kinds, payloads,
attributions) stored and loaded is equal, and export/import round-trips
byte-identically."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elelem import codec
from elelem.conversation import (
    Compaction,
    Draft,
    HostedBody,
    MessageBody,
    Repair,
    ResponseRecord,
    StripReasoning,
    StripSignature,
    TurnStart,
    decode_event,
    encode_event,
    export_conversation,
    import_conversation,
    raw_body,
)
from elelem.vocabulary import (
    ActivityId,
    Attribution,
    CallId,
    Drop,
    EventId,
    HostedActivity,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    Source,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    UnknownBlock,
    Usage,
)
from test_store import BACKENDS, opener, pg_url

# The PostgreSQL server fixture, shared with the store tests.
pg_url = pg_url

text = st.text(max_size=30)
small = st.integers(min_value=0, max_value=10**6)
json_scalar = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | text
)
json_value = st.recursive(
    json_scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
providers = st.sampled_from([ProviderId("anthropic"), ProviderId("openai"), ProviderId("google")])
payload = st.builds(
    ProviderPayload,
    providers,
    st.sampled_from(["signature", "encrypted_content", "raw-block"]),
    st.none() | st.sampled_from(["web_search_20250305", "v9"]),
    json_value,
)
payloads = st.lists(payload, max_size=2).map(tuple)


@st.composite
def text_blocks(draw: st.DrawFn) -> TextBlock:
    body = draw(text)
    n = len(body)
    attributions = []
    for _ in range(draw(st.integers(0, 2))):
        span = None
        if n and draw(st.booleans()):
            a = draw(st.integers(0, n))
            span = (a, draw(st.integers(a, n)))
        attributions.append(
            Attribution(
                Source(draw(st.none() | text), draw(st.none() | text)),
                draw(st.none() | text),
                span,
                draw(st.none() | payload),
                draw(st.booleans()),
            )
        )
    return TextBlock(body, tuple(attributions), draw(payloads), draw(st.booleans()))


unknown_blocks = st.builds(
    lambda tag, extra: UnknownBlock({"type": tag, **extra}),
    st.sampled_from(["x_image", "x_future", "server_thing"]),
    st.dictionaries(st.sampled_from(["a", "b", "data"]), json_value, max_size=2),
)
blocks = st.one_of(
    text_blocks(),
    st.builds(ReasoningBlock, text, payloads, st.booleans()),
    st.builds(ToolCallBlock, text.map(CallId), text, text, payloads),
    st.builds(ToolResultBlock, text.map(CallId), text, st.booleans(), st.none() | text, payloads),
    unknown_blocks,
)
activity = st.builds(
    HostedActivity,
    text.map(ActivityId),
    st.sampled_from(["web_search", "web_fetch", "code_execution"]),
    st.sampled_from(["started", "completed", "failed"]),
    json_value,
    text,
    st.none() | payload,
)
usage = st.builds(
    Usage,
    small,
    small,
    small,
    small,
    small,
    st.dictionaries(st.sampled_from(["web_search", "web_fetch"]), small, max_size=2),
    json_value,
)
event_ids = st.text("abcdef0123456789", min_size=1, max_size=8).map(lambda s: EventId("ev_" + s))
# Overlays: drawn directly (not filtered from bodies) where a test needs them.
overlay_bodies = st.one_of(
    st.builds(Compaction, st.integers(0, 5), st.integers(0, 5), text),
    st.builds(
        StripReasoning,
        st.integers(0, 5),
        st.none() | st.integers(0, 5),
        st.none() | providers,
        text,
    ),
    st.builds(StripSignature, event_ids, st.integers(0, 3), st.just("signature"), text),
    st.builds(Repair, event_ids, st.lists(blocks, max_size=2).map(tuple), text),
)

bodies = st.one_of(
    st.builds(
        TurnStart,
        st.sampled_from(["user", "continuation", "x-new"]),
        st.none() | text,
        st.none() | text,
    ),
    st.builds(
        MessageBody,
        st.sampled_from(["user", "assistant", "system"]),
        st.lists(blocks, max_size=3).map(tuple),
        st.sampled_from(["user", "assistant", "tool", "context:reminder"]),
        st.none() | providers,
        st.none() | text,
    ),
    st.builds(HostedBody, activity, st.none() | providers, st.none() | text),
    st.builds(
        ResponseRecord,
        st.none() | providers,
        st.none() | text,
        st.none() | text,
        st.none() | text,
        st.none() | st.sampled_from(["stop", "paused", "aborted", "new-reason"]),
        st.none() | text,
        st.none() | text,
        st.none() | usage,
        st.booleans(),
        st.lists(st.builds(Drop, text, text, text, text), max_size=2).map(tuple),
        st.integers(0, 3),
        st.none() | text,
        st.none() | event_ids,
    ),
    overlay_bodies,
)


@st.composite
def drafts(draw: st.DrawFn) -> Draft:
    turn = draw(st.integers(0, 5))
    response = draw(st.none() | st.integers(1, 5))
    if draw(st.integers(0, 5)) == 0:
        kind = draw(st.sampled_from(["future-kind", "note", "x:y"]))
        # Raw bodies keep their exact bytes, spacing included.
        raw = draw(st.sampled_from([b'{"a": [1, 2]}', b"[]", b"42", b'"s"', b'{"\\u00e9":null}']))
        return Draft(kind, raw_body(raw), turn, response)
    body = draw(bodies)
    return Draft.of(body, turn=turn, response=response)


@pytest.mark.parametrize("backend", BACKENDS)
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(batches=st.lists(st.lists(drafts(), min_size=1, max_size=4), min_size=1, max_size=5))
def test_any_conversation_round_trips_through_store_and_export(
    backend: str, request: pytest.FixtureRequest, batches: list[list[Draft]]
) -> None:
    ticks = itertools.count()
    base = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)

    def clock() -> datetime:
        return base + timedelta(microseconds=next(ticks))

    store = opener(backend, request)(clock=clock)
    try:
        info = store.create(title="prop")
        appended = []
        for batch in batches:
            appended.extend(store.append(info.id, batch))
        loaded = store.load(info.id)
        # The one-pass decoder (bytes) and the general one (str) agree.
        data = store.load_bytes(info.id)
        assert [decode_event(b.decode()) for b in data] == [decode_event(b) for b in data]
        # Equal event by event; unknown kinds keep their raw bytes.
        assert [encode_event(e) for e in loaded] == [encode_event(e) for e in appended]
        assert [e for e in loaded if e.known] == [e for e in appended if e.known]
        flat = [d for b in batches for d in b]
        assert [e.seq for e in loaded] == list(range(1, len(flat) + 1))
        for d, e in zip(flat, loaded, strict=True):
            assert (e.kind, e.turn, e.response) == (d.kind, d.turn, d.response)
            if isinstance(d.body, msgspec.Raw):
                assert bytes(e.body) == bytes(d.body)
            else:
                assert e.body == d.body
                assert codec.dumps(e.body) == codec.dumps(d.body)
        exported = export_conversation(store, info.id)
    finally:
        store.close()

    # Into a fresh SQLite store (from PostgreSQL: across backends) and back
    # out: the same bytes.
    other = opener("sqlite", request)(clock=clock)
    try:
        imported = import_conversation(other, exported)
        assert imported.id == info.id
        assert export_conversation(other, info.id) == exported
        assert other.load_bytes(info.id) == [encode_event(e) for e in appended]
    finally:
        other.close()
