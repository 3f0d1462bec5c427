"""SQLite's packed rows (conversation/loaded.py): the envelope in
MessagePack before the event's canonical JSON, so a load never scans the
JSON; stores an older elelem wrote (JSON rows) migrate, load and mix."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from elelem.codec import STORED_EVENT, dumps, to_builtins
from elelem.conversation import (
    CorruptEventError,
    Draft,
    MessageBody,
    SQLiteStore,
    decode_event,
    encode_event,
)
from elelem.conversation.sqlite import MIGRATIONS
from elelem.errors import DecodeError
from elelem.vocabulary import TextBlock
from store_helpers import write_as_version
from test_loaded_events import _drafts
from test_store import Ticker


def _rows(path: Path) -> list[tuple[int, bytes, int]]:
    with sqlite3.connect(path) as db:
        return db.execute(
            "SELECT seq, data, head FROM events WHERE conv = 1 ORDER BY seq"
        ).fetchall()


def test_a_row_is_the_envelope_packed_then_the_events_canonical_json(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SQLiteStore(path, clock=Ticker()) as store:
        cid = store.create(title="t").id
        appended = store.append(cid, _drafts())
        loaded = store.load(cid)
        stored = store.load_bytes(cid)
        # Untouched, a loaded event keeps the row's JSON and encodes to it.
        assert [dumps(e) for e in loaded] == stored == [encode_event(e) for e in appended]
        assert list(loaded) == list(appended)
    rows = _rows(path)
    assert [seq for seq, _, _ in rows] == list(range(1, 9))
    for (seq, data, head), event in zip(rows, appended, strict=True):
        assert data[head:] == encode_event(event)
        envelope = msgspec.msgpack.decode(data)
        body = envelope.pop("body")
        assert (body.code, body.data) == (STORED_EVENT, encode_event(event))
        assert envelope == {
            "id": event.id,
            "seq": seq,
            "at": event.at,
            "turn": event.turn,
            "response": event.response,
            "kind": event.kind,
        }


def test_a_store_an_older_elelem_wrote_migrates_and_loads_both_forms(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "old.db"
    write_as_version(monkeypatch, 5)
    with SQLiteStore(path, clock=Ticker()) as old:
        cid = old.create(title="old").id
        before = old.append(cid, _drafts())
    monkeypatch.undo()
    with sqlite3.connect(path) as db:  # JSON rows, no head column
        written = [bytes(r[0]) for r in db.execute("SELECT data FROM events ORDER BY seq")]
    assert written == [encode_event(e) for e in before]
    with SQLiteStore(path, clock=Ticker()) as store:
        assert store.schema_version == len(MIGRATIONS) == 6
        reply = MessageBody("assistant", (TextBlock("zebraquagga after"),), "")
        after = store.append(cid, [Draft.of(reply, turn=2)] * 300)
        everything = [encode_event(e) for e in (*before, *after)]
        assert store.load_bytes(cid) == everything
        # Both forms in one batch of rows, and batches of packed rows alone.
        for start in (0, 5, 8, 200):
            loaded = store.load(cid, after=start)
            assert [dumps(e) for e in loaded] == everything[start:]
            assert list(loaded) == [decode_event(b) for b in everything[start:]]
        assert [h.seq for h in store.search("zebraquagga")][:2] == [9, 10]
        assert [h.seq for h in store.search("2+2")] == [2]
        fork = store.fork(cid, after[0].id)
        assert store.load_bytes(fork.id) == everything[:9]
        assert store.info(fork.id).updated_at == after[0].at
    heads = [head for _, _, head in _rows(path)]
    assert heads[:8] == [0] * 8 and all(heads[8:])


def _rewritten(path: Path, index: int, rewrite: Callable[[bytes, int], bytes]) -> str:
    """A store of :func:`_drafts` whose row ``index`` is rewritten behind its
    back; its conversation."""
    with SQLiteStore(path, clock=Ticker()) as store:
        cid = store.create(title="t").id
        store.append(cid, _drafts())
    seq, data, head = _rows(path)[index]
    with sqlite3.connect(path) as db:
        db.execute("UPDATE events SET data = ? WHERE seq = ?", (rewrite(data, head), seq))
    return cid


def test_a_packed_row_that_is_no_event_fails_the_load_naming_its_seq(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    cid = _rewritten(path, 2, lambda data, head: data[: head - 3])
    with SQLiteStore(path) as store, pytest.raises(CorruptEventError) as caught:
        store.load(cid)
    assert (caught.value.conversation, caught.value.seq) == (cid, 3)
    assert str(caught.value) == (
        f"conversation {cid}: stored event seq 3 is corrupt: malformed row: "
        "Input data was truncated"
    )


def test_a_packed_rows_body_that_does_not_fit_fails_when_read(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    seen = []

    def retyped(data: bytes, head: int) -> bytes:
        bad = data.replace(b'"role":"user"', b'"role":123456')  # the same length
        seen.append(bad[head:])
        return bad

    cid = _rewritten(path, 1, retyped)
    assert b'"role":123456' in seen[0]
    with pytest.raises(DecodeError) as eager:
        decode_event(seen[0])
    with SQLiteStore(path) as store:
        loaded = store.load(cid)  # the envelope is sound: the load succeeds
        for _ in range(2):
            with pytest.raises(CorruptEventError) as caught:
                loaded[1].body  # noqa: B018 - the read is what fails
            assert caught.value.seq == 2
            assert str(caught.value) == (
                f"conversation {cid}: stored event seq 2 is corrupt: {eager.value}"
            )
        assert loaded[2].body.activity.input == {"query": "2+2"}


def test_a_loaded_event_unread_encodes_through_the_codec_as_stored(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db", clock=Ticker()) as store:
        cid = store.create(title="t").id
        appended = store.append(cid, _drafts())
        loaded = store.load(cid)
    # Before any body is read: the canonical bytes, and their builtin form.
    assert [dumps(e) for e in loaded] == [encode_event(e) for e in appended]
    assert to_builtins(list(loaded)) == [msgspec.json.decode(encode_event(e)) for e in appended]
    # An encoder without elelem's codec refuses the kept JSON, loudly: it
    # never writes another form of it.
    with pytest.raises(TypeError, match="Ext"):
        msgspec.json.encode(loaded[0])
