"""The embedded SQLite store (WAL), the default backend.

The shared SQL lives in :mod:`elelem.conversation.sqlbase`.  Here: the file,
WAL with ``synchronous=NORMAL`` (every committed append survives a crash of
the process; ``synchronous=FULL`` also survives power loss), and writes as
``BEGIN IMMEDIATE`` transactions so writers of several processes queue on
SQLite's lock (each waits up to ``timeout`` seconds).
"""

from __future__ import annotations

import sqlite3
import stat
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from elelem.conversation.errors import StoreError
from elelem.conversation.events import Event
from elelem.conversation.files import create_file_table
from elelem.conversation.fulltext import SQLITE_FULLTEXT
from elelem.conversation.loaded import pack_event
from elelem.conversation.sqlbase import SQLStore
from elelem.conversation.sqlschema import (
    Dialect,
    Migration,
    create_blob_table,
    create_fulltext,
    create_tables,
)
from elelem.conversation.store import Clock, utc_now
from elelem.conversation.writers import always, file_lock
from elelem.vocabulary import EventId


class _Row:
    """One row's values, each let go as sqlite3 reads it to bind it."""

    __slots__ = ("_values",)

    def __init__(self, values: Sequence[Any]) -> None:
        self._values: list[Any] = list(values)

    def __len__(self) -> int:
        return len(self._values)

    def __getitem__(self, index: int) -> Any:
        value, self._values[index] = self._values[index], None
        return value


def _given_away(rows: list[tuple[Any, ...]]) -> Iterator[_Row]:
    """The ``rows`` (reversed) popped one by one: none is held here once
    sqlite3 took it."""
    while rows:
        yield _Row(rows.pop())


BIG_EVENT = 1024 * 1024
"""An event this big (its JSON bytes) is stored as a body beside its row
(:meth:`SQLiteStore._insert_events`)."""

PIECE = 1024 * 1024
"""How much of a big event's bytes one incremental blob write carries."""


def _v1(store: SQLiteStore) -> None:
    # WITHOUT ROWID: the events are stored in primary-key order, one B-tree.
    create_tables(store, key="INTEGER", big="INTEGER", blob="BLOB", suffix=" WITHOUT ROWID")


def _v3(store: SQLiteStore) -> None:
    create_blob_table(store, big="INTEGER", blob="BLOB")


def _v5(store: SQLiteStore) -> None:
    # A big event's bytes, its row in events left empty: a rowid table, which
    # SQLite's incremental blob I/O can write in pieces (events is WITHOUT
    # ROWID: a value bound into it is copied twice inside SQLite, #41).
    # Columns named apart from events' so that the dialect's data expression
    # reads events' own columns unqualified.
    store._exec(
        """CREATE TABLE event_bodies (
            body_conv INTEGER NOT NULL,
            body_seq INTEGER NOT NULL,
            body BLOB NOT NULL,
            PRIMARY KEY (body_conv, body_seq)
        )"""
    )


def _v6(store: SQLiteStore) -> None:
    # An event's row is packed (conversation/loaded.py: its envelope in
    # MessagePack, its canonical JSON the row's end, ``head`` bytes in), so
    # a load never scans the JSON; rows written before stay JSON (head 0) and
    # load as they did.
    store._exec("ALTER TABLE events ADD COLUMN head INTEGER NOT NULL DEFAULT 0")


MIGRATIONS: tuple[Migration, ...] = (_v1, create_fulltext, _v3, create_file_table, _v5, _v6)
"""Schema migrations, oldest first; the schema version is how many were applied.
A change of schema appends a function here and never edits an earlier one."""

SCHEMA_VERSION = len(MIGRATIONS)
"""The schema version this module writes."""

_DATA = (
    "CASE WHEN length(data) THEN substr(data, head + 1)"
    " ELSE (SELECT body FROM event_bodies WHERE body_conv = conv AND body_seq = seq) END"
)
"""An event's canonical JSON: its row's (after its packed envelope, if
any), or a big event's body, whose row is empty."""

SQLITE = Dialect(
    data=_DATA,
    as_text=f"CAST({_DATA} AS TEXT)",
    find="instr(lower({as_text}), lower(?))",
    prefix="substr(data, head + 1, ?) = ?",  # a big event's: _find_kept
    at_of=f"json_extract(CAST({_DATA} AS TEXT), '$.at')",
    greatest="max",
    is_distinct="IS NOT",
    lock_row="",  # BEGIN IMMEDIATE already holds the write lock
)


class SQLiteStore(SQLStore):
    """A :class:`~elelem.conversation.store.Store` in one SQLite file."""

    dialect = SQLITE
    fulltext = SQLITE_FULLTEXT
    _delete_bodies = ("DELETE FROM event_bodies WHERE body_conv = ?",)
    _event_columns = "data, head"
    _stored_json = "substr(data, head + 1)"
    _kept_apart = "length(data) = 0"
    db_errors = (sqlite3.Error,)
    integrity_errors = (sqlite3.IntegrityError,)

    def __init__(
        self,
        path: str | Path,
        *,
        clock: Clock = utc_now,
        ids: Callable[[], EventId] | None = None,
        synchronous: str = "NORMAL",
        timeout: float = 30.0,
    ) -> None:
        if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise StoreError(f"unknown synchronous mode {synchronous!r}")
        super().__init__(clock=clock, ids=ids)
        self.path = self.where = str(path)
        if self.path != ":memory:":
            self._private_file()
        try:
            self._db = sqlite3.connect(
                self.path, timeout=timeout, isolation_level=None, check_same_thread=False
            )
            self._enter_wal(timeout)
            self._db.execute(f"PRAGMA synchronous={synchronous.upper()}")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open SQLite store {self.path}: {exc}") from exc
        self._migrate()

    def _private_file(self) -> None:
        """The store's file, created 0600 (SQLite gives its -wal and -shm
        files the same mode) in a folder made private when it is elelem's
        home; anything but a regular file is refused before SQLite sees it."""
        from elelem.home import create_private, private_parent  # only for a file store
        from elelem.reading import file_kind

        path = Path(self.path)
        private_parent(path)
        create_private(path)
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):
            raise StoreError(
                f"cannot open SQLite store {self.path}: not a regular file ({file_kind(mode)})"
            )

    def _enter_wal(self, timeout: float) -> None:
        # Switching a fresh file to WAL needs an exclusive lock, and SQLite
        # answers SQLITE_BUSY at once, without its busy handler, while another
        # opener holds the file (migrating it): wait here instead, up to the
        # same timeout every other lock wait has.
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                busy = getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_BUSY
                if not busy or time.monotonic() >= deadline:
                    raise
                time.sleep(0.005)

    def _exec(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        return self._db.execute(sql, params)

    def _many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self._db.executemany(sql, rows)

    def _row(self, key: int, event: Event, data: bytes) -> tuple[Any, ...]:
        # A big event stays JSON: its bytes go beside its row, in pieces.
        if len(data) >= BIG_EVENT:
            return (key, event.seq, data, 0)
        packed, head = pack_event(event, data)
        return (key, event.seq, packed, head)

    def _insert_events(self, rows: list[tuple[Any, ...]]) -> None:
        # SQLite copies a bound blob, then copies it again into the row it
        # writes: a 100 MB answer cost 200 MB inside SQLite beside the text
        # it came from.  Each row is let go as its values are bound, and a
        # big event's bytes are never bound: its row is empty and its body,
        # beside it, is written in pieces (#41).
        # A packed row (head > 0) is smaller than BIG_EVENT by construction.
        rows.reverse()
        if all(head or len(data) < BIG_EVENT for _, _, data, head in rows):
            self._db.executemany(self._sql_insert, _given_away(rows))
            return
        while rows:
            key, seq, data, head = rows.pop()
            if head or len(data) < BIG_EVENT:
                self._db.execute(self._sql_insert, (key, seq, data, head))
            else:
                self._db.execute(self._sql_insert, (key, seq, b"", 0))
                self._write_body(key, seq, data)
            del data

    def _write_body(self, key: int, seq: int, data: bytes) -> None:
        rowid = self._db.execute(
            "INSERT INTO event_bodies (body_conv, body_seq, body) VALUES (?, ?, zeroblob(?))"
            " RETURNING rowid",
            (key, seq, len(data)),
        ).fetchone()[0]
        with memoryview(data) as view, self._db.blobopen("event_bodies", "body", rowid) as blob:
            for at in range(0, len(data), PIECE):
                blob.write(view[at : at + PIECE])

    def _whole_rows(self, key: int, rows: list[Any], first: int) -> list[Any]:
        # Read through blob I/O, a big event is held once; selected, SQLite's
        # copy of it (twice over, through the dialect's data expression) is
        # held beside Python's.
        if all(row[0] for row in rows):
            return rows
        return [
            row if row[0] else (self._read_body(key, seq),)
            for seq, row in enumerate(rows, start=first)
        ]

    def _event_json(self, key: int, seq: int, stored: Any) -> bytes:
        return bytes(stored) if stored else self._read_body(key, seq)

    def _find_kept(self, key: int, prefix: bytes) -> int | None:
        for rowid, seq in self._db.execute(
            "SELECT rowid, body_seq FROM event_bodies WHERE body_conv = ?", (key,)
        ).fetchall():
            with self._db.blobopen("event_bodies", "body", rowid, readonly=True) as blob:
                if blob.read(len(prefix)) == prefix:
                    return int(seq)
        return None

    def _copy_kept(self, new: int, key: int, upto: int) -> None:
        # Piece by piece through blob I/O: an INSERT ... SELECT would hold
        # each body whole inside SQLite.
        for rowid, seq, size in self._db.execute(
            "SELECT rowid, body_seq, length(body) FROM event_bodies"
            " WHERE body_conv = ? AND body_seq <= ?",
            (key, upto),
        ).fetchall():
            copy = self._db.execute(
                "INSERT INTO event_bodies (body_conv, body_seq, body) VALUES (?, ?, zeroblob(?))"
                " RETURNING rowid",
                (new, seq, size),
            ).fetchone()[0]
            with (
                self._db.blobopen("event_bodies", "body", rowid, readonly=True) as source,
                self._db.blobopen("event_bodies", "body", copy) as target,
            ):
                while piece := source.read(PIECE):
                    target.write(piece)

    def _read_body(self, key: int, seq: int) -> bytes:
        """The body of event ``seq``; empty when there is none (an empty row
        without its body is no event, which the caller's decoding names)."""
        found = self._db.execute(
            "SELECT rowid FROM event_bodies WHERE body_conv = ? AND body_seq = ?", (key, seq)
        ).fetchone()
        if found is None:
            return b""
        with self._db.blobopen("event_bodies", "body", found[0], readonly=True) as blob:
            return blob.read()

    def _begin(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def _end(self, commit: bool) -> None:
        self._db.execute("COMMIT" if commit else "ROLLBACK")

    def _migrations(self) -> Sequence[Migration]:
        return MIGRATIONS

    def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` verdict (``ok`` when sound)."""
        with self._lock:
            return str(self._db.execute("PRAGMA integrity_check").fetchone()[0])

    def _writer_lock(self, conversation: str) -> tuple[Callable[[], bool], Callable[[], None]]:
        if self.path == ":memory:":
            return always()
        return file_lock(Path(self.path + "-writers"), conversation)

    def _close(self) -> None:
        self._db.close()

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"


__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "SQLITE", "SQLiteStore"]
