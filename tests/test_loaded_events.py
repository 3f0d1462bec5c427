"""Events a store loads decode their bodies on first read
(conversation/loaded.py): the values, bytes, equality and errors are the
eagerly decoded event's, on SQLite and on a real PostgreSQL."""

from __future__ import annotations

import copy
import pickle
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import msgspec
import pytest

from elelem.codec import dumps
from elelem.conversation import (
    CorruptEventError,
    Draft,
    Event,
    HostedBody,
    MessageBody,
    ResponseRecord,
    TurnStart,
    decode_event,
    encode_event,
)
from elelem.conversation.loaded import LoadedEvent, decode_rows
from elelem.conversation.sqlite import SQLiteStore
from elelem.conversation.store import Store
from elelem.errors import DecodeError
from elelem.vocabulary import (
    ActivityId,
    CallId,
    ConversationId,
    HostedActivity,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    Usage,
)
from test_store import Ticker, pg_url

__all__ = ["pg_url"]  # the fixture, imported for this module's tests

Corrupt = Callable[[int, bytes], None]


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Store, Corrupt]]:
    """A store, and a function overwriting the stored bytes of one seq of
    its only conversation behind its back."""
    if request.param == "sqlite":
        path = tmp_path / "s.db"
        store: Store = SQLiteStore(path, clock=Ticker())

        def corrupt(seq: int, data: bytes) -> None:
            with sqlite3.connect(path) as raw:  # a JSON row, as PostgreSQL's
                raw.execute("UPDATE events SET data = ?, head = 0 WHERE seq = ?", (data, seq))

    else:
        import psycopg

        from elelem.conversation.postgres import PostgresStore

        url = request.getfixturevalue("pg_url")
        schema = f"t_{uuid.uuid4().hex[:16]}"
        store = PostgresStore(url, schema=schema, clock=Ticker())

        def corrupt(seq: int, data: bytes) -> None:
            with psycopg.connect(url, autocommit=True, options=f"-c search_path={schema}") as c:
                c.execute("UPDATE events SET data = %s WHERE seq = %s", (data, seq))

    yield store, corrupt
    store.close()


def _drafts() -> list[Draft]:
    provider = ProviderId("anthropic")
    act = ActivityId("srvtoolu_01")
    signature = ProviderPayload("anthropic", "signature", "", "c2ln")
    return [
        Draft.of(TurnStart("user", "anthropic:claude-sonnet-4-5", "Be brief."), turn=1),
        Draft.of(MessageBody("user", (TextBlock("What is 2+2?"),), "user"), turn=1),
        Draft.of(
            HostedBody(HostedActivity(act, "web_search", "started", {"query": "2+2"}), provider),
            turn=1,
            response=1,
        ),
        Draft.of(
            MessageBody(
                "assistant",
                (ReasoningBlock("Add them.", (signature,)),),
                "",
                provider,
                "claude-sonnet-4-5",
            ),
            turn=1,
            response=1,
        ),
        Draft.of(
            MessageBody(
                "assistant",
                (ToolCallBlock(CallId("toolu_1"), "calc", '{"expr": "2+2", "n": [1, 2.5]}'),),
                "",
                provider,
            ),
            turn=1,
            response=1,
        ),
        Draft.of(
            MessageBody("assistant", (TextBlock("4"),), "", provider, "claude-sonnet-4-5"),
            turn=1,
            response=1,
        ),
        Draft.of(
            ResponseRecord(
                provider, "claude-sonnet-4-5", "msg_1", finish="stop", usage=Usage(12, 3)
            ),
            turn=1,
            response=1,
        ),
        Draft("a-plugin-kind", msgspec.Raw(b'{"z":[1,{"y":"\\u00e9"}],"a":true}'), 1),
    ]


def test_a_loaded_event_is_the_eager_event_in_value_bytes_hash_repr_and_pickle(
    backend: tuple[Store, Corrupt],
) -> None:
    store, _ = backend
    cid = store.create(title="t").id
    appended = store.append(cid, _drafts())
    stored = store.load_bytes(cid)
    loaded = store.load(cid)
    assert all(isinstance(e, LoadedEvent) and isinstance(e, Event) for e in loaded)
    # Untouched, each re-encodes to the bytes stored (its body is them).
    assert [encode_event(e) for e in loaded] == stored
    eager = [decode_event(b) for b in stored]
    assert [type(e) for e in eager] == [Event] * 8
    for lazy, want, made in zip(loaded, eager, appended, strict=True):
        assert lazy == want and want == lazy
        assert (lazy != want, want != lazy) == (False, False)
        assert lazy == made
        try:
            want_hash = hash(want)
        except TypeError:  # a body holding a dict hashes neither way
            with pytest.raises(TypeError):
                hash(lazy)
        else:
            assert hash(lazy) == want_hash
        if want.known:  # (a raw body's repr names its address)
            assert repr(lazy) == repr(want)
        assert encode_event(lazy) == encode_event(want)  # read now, the same bytes
        back = pickle.loads(pickle.dumps(lazy))
        assert type(back) is Event and back == want
        assert copy.copy(lazy) == want
    bodies = [e.body for e in loaded]
    assert bodies[0] == TurnStart("user", "anthropic:claude-sonnet-4-5", "Be brief.")
    assert bodies[1].content == (TextBlock("What is 2+2?"),)
    assert bodies[2].activity.input == {"query": "2+2"}
    assert bodies[3].content[0].payloads[0].value == "c2ln"
    assert bodies[4].content[0].input == {"expr": "2+2", "n": [1, 2.5]}
    assert bodies[6].usage == Usage(12, 3)
    # A kind nobody registered keeps its raw JSON, byte for byte.
    assert not loaded[7].known and bytes(bodies[7]) == b'{"z":[1,{"y":"\\u00e9"}],"a":true}'
    assert [e.known for e in loaded] == [True] * 7 + [False]
    # Read once, kept: the same object on every read.
    assert all(e.body is b for e, b in zip(loaded, bodies, strict=True))
    assert msgspec.structs.replace(loaded[5], turn=2).body is bodies[5]


def test_a_body_that_does_not_fit_its_kind_fails_when_read_naming_its_row(
    backend: tuple[Store, Corrupt],
) -> None:
    store, corrupt = backend
    cid = store.create(title="t").id
    store.append(cid, _drafts())
    row = store.load_bytes(cid)[5].replace(b'"role":"assistant"', b'"role":5')
    corrupt(6, row)
    loaded = store.load(cid)  # the envelope is sound: the load succeeds
    assert [e.seq for e in loaded] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert loaded[4].body.content[0].name == "calc"
    with pytest.raises(DecodeError) as eager:  # what a load decoding every body said
        decode_event(row)
    for _ in range(2):  # every read fails the same way; nothing is kept
        with pytest.raises(CorruptEventError) as caught:
            loaded[5].body  # noqa: B018 - the read is what fails
        assert (caught.value.conversation, caught.value.seq) == (cid, 6)
        assert (
            str(caught.value) == f"conversation {cid}: stored event seq 6 is corrupt: {eager.value}"
        )
        assert str(eager.value) == (
            f"event {loaded[5].id} (message): Expected `str`, got `int` (at $.body.role)"
        )
    # The other events are untouched by it.
    assert loaded[6].body.response_id == "msg_1"


def test_a_row_that_is_no_event_fails_the_load_naming_its_seq(
    backend: tuple[Store, Corrupt],
) -> None:
    store, corrupt = backend
    cid = store.create(title="t").id
    store.append(cid, [Draft.of(TurnStart(), turn=n) for n in range(1, 301)])
    # Past the first batch of rows, so the seq is counted across batches.
    corrupt(290, b'{"id":"e","seq":"290"}')
    with pytest.raises(CorruptEventError) as caught:
        store.load(cid)
    assert (caught.value.conversation, caught.value.seq) == (cid, 290)
    assert str(caught.value) == (
        f"conversation {cid}: stored event seq 290 is corrupt: malformed event: "
        "Expected `int`, got `str` - at `$.seq` (at $)"
    )
    corrupt(290, b"{not json")
    with pytest.raises(CorruptEventError) as caught:
        store.load(cid, after=250)
    assert caught.value.seq == 290
    assert str(caught.value).startswith(
        f"conversation {cid}: stored event seq 290 is corrupt: malformed JSON: "
    )


def test_each_conversation_names_itself_in_its_events_errors(tmp_path: Path) -> None:
    data = dumps(Event("e1", 1, "t", 1, None, "turn-start", msgspec.Raw(b'{"trigger":1}')))
    first, second = (decode_rows(ConversationId(c), [(data,)], 0)[0] for c in ("c-1", "c-2"))
    assert type(first) is not type(second) and type(first).__name__ == "Event"
    for event, name in ((first, "c-1"), (second, "c-2")):
        with pytest.raises(CorruptEventError) as caught:
            event.body  # noqa: B018 - the read is what fails
        assert caught.value.conversation == name
