"""A big event in the SQLite store: its bytes stored beside its row, written
in pieces (issue #41: SQLite copied a bound 100 MB event twice, beside the
answer's text, and the first ``batch results`` read peaked at 2.9x its size).

An event of :data:`~elelem.conversation.sqlite.BIG_EVENT` bytes or more
keeps an empty row in ``events`` (its place, its seq) and its bytes in
``event_bodies``, a rowid table SQLite's incremental blob I/O writes piece
by piece.  Every reader sees the event's bytes as before: load, the bytes,
fork, delete, both searches, the blob sweep, the listing's update time, the
id check.  A store an earlier elelem wrote (schema 4, every event in its
row) loads, gains the table, and takes big events the new way.  A secret
echoed across the end of a written piece is redacted before any is written.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from elelem.conversation import Draft, MessageBody, SQLiteStore
from elelem.conversation.errors import CorruptEventError, StoreError
from elelem.conversation.events import encode_event
from elelem.conversation.sqlite import BIG_EVENT, MIGRATIONS, PIECE
from elelem.vocabulary import Blob, BytesSource, EventId, ImageBlock, TextBlock
from store_helpers import write_as_version

BIG_ID = EventId("evt_big")
BIG_TEXT = "é" + "word " * (BIG_EVENT // 5) + "zebraquagga ~~~ " + "x" * (PIECE + 7)


def _message(text: str, turn: int = 1) -> Draft:
    return Draft("message", MessageBody("assistant", (TextBlock(text),)), turn, 1)


def _rows(path: Path) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
    # Each event row: the length of the JSON it holds (after its packed envelope).
    with sqlite3.connect(path) as db:
        events = db.execute("SELECT conv, seq, length(data) - head FROM events ORDER BY conv, seq")
        bodies = db.execute(
            "SELECT body_conv, body_seq, length(body) FROM event_bodies ORDER BY 1, 2"
        )
        return events.fetchall(), bodies.fetchall()


def test_a_big_event_is_stored_beside_its_row_and_read_back_exactly(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    store = SQLiteStore(path)
    conversation = store.create(title="big").id
    events = store.append(conversation, [_message("before"), _message(BIG_TEXT), _message("after")])
    store.close()
    big = len(encode_event(events[1]))
    assert big > BIG_EVENT + PIECE  # written in more than one piece
    small = [len(encode_event(e)) for e in (events[0], events[2])]
    assert _rows(path) == ([(1, 1, small[0]), (1, 2, 0), (1, 3, small[1])], [(1, 2, big)])
    with SQLiteStore(path) as reopened:
        assert reopened.load_bytes(conversation) == [encode_event(e) for e in events]
        loaded = reopened.load(conversation)
        assert [e.body.content[0].text for e in loaded] == ["before", BIG_TEXT, "after"]
        assert reopened.load(conversation, after=1) == loaded[1:]
        assert reopened.info(conversation).updated_at == events[-1].at
        assert reopened.integrity_check() == "ok"


def test_every_reader_sees_a_big_event(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "store.db")
    conversation = store.create(title="big").id
    image = Blob(b"\x89PNG only the big event holds this")
    body = MessageBody(
        "assistant", (TextBlock(BIG_TEXT), ImageBlock(BytesSource(image), "image/png"))
    )
    first = store.append(conversation, [_message("hello there")])
    (big,) = store.append(conversation, [Draft("message", body, 1, 1, id=BIG_ID)])
    # The listing's update time is the last event's: the big one.
    assert store.info(conversation).updated_at == big.at
    # The id check reads the big event's bytes.
    with pytest.raises(StoreError, match="already in the conversation"):
        store.append(conversation, [Draft("message", body, 2, None, id=BIG_ID)])
    # Both searches: the index and the scan of a query without words.
    assert [(h.event, h.seq) for h in store.search("zebraquagga")] == [("evt_big", 2)]
    assert [h.seq for h in store.search("é")] == [2]
    assert [h.seq for h in store.search("~~~")] == [2]
    # The sweep keeps the blob only the big event references.
    assert store.prune_blobs() == (0, 0)
    assert store.get_blob(image.sha256) == image.data
    # A fork holds the big event's bytes of its own.
    fork = store.fork(conversation, BIG_ID, title="fork")
    store.delete(conversation)
    assert store.load_bytes(fork.id) == [encode_event(first[0]), encode_event(big)]
    store.delete(fork.id)
    store.close()
    assert _rows(tmp_path / "store.db") == ([], [])


def test_an_append_that_fails_keeps_no_body(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "store.db")
    conversation = store.create(title="big").id
    (first,) = store.append(conversation, [_message("first")])
    # The statement after the insert fails: the append rolls back whole.
    store._sql_note = "SELECT no_such_function(?, ?, ?, ?, ?, ?, ?, ?)"
    with pytest.raises(StoreError, match="append to"):
        store.append(conversation, [_message(BIG_TEXT, turn=2)])
    assert [e.seq for e in store.load(conversation)] == [1]
    store.close()
    assert _rows(tmp_path / "store.db") == ([(1, 1, len(encode_event(first)))], [])


def test_a_store_an_earlier_elelem_wrote_loads_and_takes_big_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "old.db"
    # Schema 4, every event bound into its row: what elelem wrote before.
    write_as_version(monkeypatch, 4)
    with SQLiteStore(path) as old:
        assert old.schema_version == 4
        conversation = old.create(title="old").id
        before = old.append(conversation, [_message("small"), _message(BIG_TEXT)])
    monkeypatch.undo()
    with sqlite3.connect(path) as db:
        assert "event_bodies" not in {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    with SQLiteStore(path) as store:
        assert store.schema_version == len(MIGRATIONS) == 6
        assert store.load_bytes(conversation) == [encode_event(e) for e in before]
        assert [h.seq for h in store.search("zebraquagga")] == [2]
        after = store.append(conversation, [_message(BIG_TEXT, turn=2)])
        everything = [encode_event(e) for e in (*before, *after)]
        assert store.load_bytes(conversation) == everything
        assert [e.seq for e in store.load(conversation)] == [1, 2, 3]
    stored = [(1, 1, len(everything[0])), (1, 2, len(everything[1])), (1, 3, 0)]
    assert _rows(path) == (stored, [(1, 3, len(everything[2]))])


def test_an_empty_row_without_its_body_is_a_corrupt_event_naming_its_seq(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    with SQLiteStore(path) as store:
        conversation = store.create(title="big").id
        store.append(conversation, [_message("small"), _message(BIG_TEXT)])
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM event_bodies")
    with SQLiteStore(path) as store, pytest.raises(CorruptEventError, match="seq 2"):
        store.load(conversation)


def test_a_secret_echoed_across_a_piece_boundary_never_reaches_the_store(tmp_path: Path) -> None:
    from elelem.redaction import REDACTED, Redactor

    secret = "sk-ant-api03-echoed-0123456789"
    path = tmp_path / "store.db"
    store = SQLiteStore(path)
    store.redactor = Redactor([secret])
    conversation = store.create(title="big").id
    # The encoded event starts with its envelope: place the echo so that it
    # spans the first piece's end in the stored bytes, JSON-escaped once.
    probe = encode_event(store.append(conversation, [_message("x" * BIG_EVENT)])[0])
    lead = probe.index(b"x" * 64)
    start = PIECE - lead - 10
    text = "y" * start + secret.replace("-", "\\u002d") + "y" * BIG_EVENT
    (event,) = store.append(conversation, [_message(text, turn=2)])
    stored = store.load_bytes(conversation)[1]
    store.close()
    assert stored == encode_event(event)
    assert secret[:8].encode() not in stored
    assert stored.count(REDACTED.encode()) == 1
    at = stored.index(REDACTED.encode())
    assert at < PIECE < at + len(secret)
    assert event.body.content[0].text == "y" * start + REDACTED + "y" * BIG_EVENT
