"""The embedded SQLite store (WAL), the default backend.

Events live in one ``WITHOUT ROWID`` table keyed by ``(conversation, seq)``
holding nothing but each event's canonical bytes, so an append writes what a
raw insert of those bytes would.  An append is one ``BEGIN IMMEDIATE``
transaction: the next sequence number comes from ``max(seq)`` (one descent of
the primary key, never a read of earlier events), one ``executemany`` inserts
the rows, and the conversation row is written only when its title, model or
turn count changes.  The listing's event count and update time are read from
the last event.  WAL with ``synchronous=NORMAL`` keeps every committed append
across a crash of the process; ``synchronous=FULL`` also survives power loss.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from elelem import codec
from elelem.conversation.errors import (
    ConversationNotFound,
    SchemaVersionError,
    StoreError,
)
from elelem.conversation.events import (
    Draft,
    Event,
    check_body,
    decode_event,
    decode_fast,
    encode_event,
    event_text,
)
from elelem.conversation.store import (
    Clock,
    ConversationInfo,
    EventIds,
    SearchHit,
    format_time,
    new_conversation_id,
    snippet,
    summarize,
    utc_now,
)
from elelem.vocabulary import ConversationId, EventId


def _v1(db: sqlite3.Connection) -> None:
    db.execute(
        """CREATE TABLE conversations (
            key INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            title TEXT,
            model TEXT,
            turns INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            parent TEXT,
            forked_at TEXT
        )"""
    )
    db.execute(
        """CREATE TABLE events (
            conv INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            data BLOB NOT NULL,
            PRIMARY KEY (conv, seq)
        ) WITHOUT ROWID"""
    )


MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (_v1,)
"""Schema migrations, oldest first; the schema version is how many were applied.
A change of schema appends a function here and never edits an earlier one."""

SCHEMA_VERSION = len(MIGRATIONS)
"""The schema version this module writes."""

_INSERT = "INSERT INTO events (conv, seq, data) VALUES (?, ?, ?)"
_NEXT = (
    "SELECT (SELECT 1 FROM conversations WHERE key = ?1),"
    " (SELECT max(seq) FROM events WHERE conv = ?1)"
)
# Writes the conversation row only when something in it changes.
_NOTE = (
    "UPDATE conversations SET turns = max(turns, ?1), model = coalesce(?2, model),"
    " title = coalesce(title, ?3) WHERE key = ?4 AND (turns < ?1"
    " OR (?2 IS NOT NULL AND model IS NOT ?2) OR (title IS NULL AND ?3 IS NOT NULL))"
)
_LAST = "FROM events WHERE conv = c.key ORDER BY seq DESC LIMIT 1"
_UPDATED = f"coalesce((SELECT json_extract(CAST(data AS TEXT), '$.at') {_LAST}), c.created_at)"
_INFO = (
    "SELECT c.id, c.title, c.model, c.turns,"
    " coalesce((SELECT max(seq) FROM events WHERE conv = c.key), 0),"
    f" c.created_at, {_UPDATED} AS updated, c.parent, c.forked_at FROM conversations c"
)


def _id_prefix(event: EventId) -> bytes:
    # Canonical event bytes begin with the id, so a prefix finds an event by id.
    return b'{"id":' + codec.dumps(event) + b","


def _insert_info(db: sqlite3.Connection, info: ConversationInfo) -> int:
    """Insert a conversation row from its listing entry; return its key."""
    try:
        cur = db.execute(
            "INSERT INTO conversations (id, title, model, turns, created_at, parent, forked_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                info.id,
                info.title,
                info.model,
                info.turns,
                info.created_at,
                info.parent,
                info.forked_at,
            ),
        )
    except sqlite3.IntegrityError:
        raise StoreError(f"conversation {info.id!r} already exists") from None
    assert cur.lastrowid is not None
    return cur.lastrowid


def _info(row: Sequence[Any]) -> ConversationInfo:
    return ConversationInfo(
        id=row[0],
        title=row[1],
        model=row[2],
        turns=row[3],
        events=row[4],
        created_at=row[5],
        updated_at=row[6],
        parent=row[7],
        forked_at=row[8],
    )


class SQLiteStore:
    """A :class:`~elelem.conversation.store.Store` in one SQLite file.

    Safe to share between threads of one process (calls are serialized) and
    between processes (SQLite's locking; writers wait up to ``timeout``
    seconds for each other).
    """

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
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._clock = clock
        self._ids = ids or EventIds()
        self._lock = threading.Lock()
        self._keys: dict[str, int] = {}
        try:
            self._db = sqlite3.connect(
                self.path, timeout=timeout, isolation_level=None, check_same_thread=False
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={synchronous.upper()}")
            self._migrate()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open SQLite store {self.path}: {exc}") from exc

    # -- schema ---------------------------------------------------------------

    def _migrate(self) -> None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            row = db.execute("SELECT version FROM schema_version").fetchone()
            version = 0 if row is None else int(row[0])
            latest = len(MIGRATIONS)
            if version > latest:
                raise SchemaVersionError(
                    f"store {self.path} has schema version {version}; this elelem"
                    f" understands versions up to {latest}: upgrade elelem"
                )
            for number, migration in enumerate(MIGRATIONS[version:], start=version + 1):
                try:
                    migration(db)
                except Exception as exc:
                    raise StoreError(
                        f"migrating store {self.path} to schema version {number} failed: {exc}"
                    ) from exc
            if row is None:
                db.execute("INSERT INTO schema_version VALUES (?)", (latest,))
            elif version != latest:
                db.execute("UPDATE schema_version SET version = ?", (latest,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    @property
    def schema_version(self) -> int:
        """The schema version of the open file."""
        with self._lock:
            return int(self._db.execute("SELECT version FROM schema_version").fetchone()[0])

    # -- helpers ------------------------------------------------------------

    def _key(self, conversation: str) -> int:
        key = self._keys.get(conversation)
        if key is None:
            row = self._db.execute(
                "SELECT key FROM conversations WHERE id = ?", (conversation,)
            ).fetchone()
            if row is None:
                raise ConversationNotFound(conversation)
            key = int(row[0])
            self._keys[conversation] = key
        return key

    def _now(self) -> str:
        return format_time(self._clock())

    def _write(self, work: Callable[[sqlite3.Connection], Any]) -> Any:
        db = self._db
        with self._lock:
            db.execute("BEGIN IMMEDIATE")
            try:
                result = work(db)
            except sqlite3.Error as exc:
                db.execute("ROLLBACK")
                raise StoreError(f"{self.path}: {exc}") from exc
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return result

    # -- Store ----------------------------------------------------------------

    def create(
        self, *, title: str | None = None, id: ConversationId | None = None
    ) -> ConversationInfo:
        """A new, empty conversation (an id of your own must be unused)."""
        now = self._now()
        info = ConversationInfo(id or new_conversation_id(), title, None, 0, 0, now, now)
        self._write(lambda db: _insert_info(db, info))
        return info

    def append(self, conversation: ConversationId, drafts: Sequence[Draft]) -> tuple[Event, ...]:
        """Append ``drafts`` as one transaction; return them as stored."""
        if not drafts:
            return ()
        for d in drafts:
            check_body(d.kind, d.body)
        summary = summarize(drafts)
        explicit = [d.id for d in drafts if d.id is not None]
        now = self._now()
        ids = self._ids
        db = self._db
        encode = encode_event
        with self._lock:
            key = self._key(conversation)
            db.execute("BEGIN IMMEDIATE")
            try:
                exists, last = db.execute(_NEXT, (key,)).fetchone()
                if exists is None:
                    self._keys.pop(conversation, None)
                    raise ConversationNotFound(conversation)
                seq = last or 0
                if explicit:
                    self._check_ids(key, explicit)
                events = []
                rows = []
                # The hot path of every append: one pass, nothing but the
                # event's construction and its encoding.
                for d in drafts:
                    seq += 1
                    event = Event(d.id or ids(), seq, now, d.turn, d.response, d.kind, d.body)
                    events.append(event)
                    rows.append((key, seq, encode(event)))
                db.executemany(_INSERT, rows)
                if summary.turns or summary.model or summary.title:
                    db.execute(_NOTE, (summary.turns, summary.model, summary.title, key))
            except sqlite3.Error as exc:
                db.execute("ROLLBACK")
                raise StoreError(f"append to {conversation!r} failed: {exc}") from exc
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        return tuple(events)

    def _check_ids(self, key: int, ids: list[EventId]) -> None:
        # Only drafts that bring their own id pay for this lookup.
        if len(set(ids)) != len(ids):
            raise StoreError(f"event ids repeat within one append: {sorted(ids)!r}")
        for event in ids:
            prefix = _id_prefix(event)
            row = self._db.execute(
                "SELECT seq FROM events WHERE conv = ? AND substr(data, 1, ?) = ?",
                (key, len(prefix), prefix),
            ).fetchone()
            if row is not None:
                raise StoreError(f"event id {event!r} is already in the conversation")

    def load(self, conversation: ConversationId, *, after: int = 0) -> tuple[Event, ...]:
        """The events with ``seq > after``, in order."""
        with self._lock:
            key = self._key(conversation)
            rows = self._db.execute(
                "SELECT data FROM events WHERE conv = ? AND seq > ? ORDER BY seq", (key, after)
            ).fetchall()
        fast = decode_fast
        return tuple([fast(r[0]) or decode_event(r[0]) for r in rows])

    def load_bytes(self, conversation: ConversationId) -> list[bytes]:
        """The canonical bytes of every event, in order, exactly as stored."""
        with self._lock:
            key = self._key(conversation)
            rows = self._db.execute(
                "SELECT data FROM events WHERE conv = ? ORDER BY seq", (key,)
            ).fetchall()
        return [bytes(r[0]) for r in rows]

    def info(self, conversation: ConversationId) -> ConversationInfo:
        """The listing entry of one conversation."""
        with self._lock:
            row = self._db.execute(_INFO + " WHERE c.id = ?", (conversation,)).fetchone()
        if row is None:
            raise ConversationNotFound(conversation)
        return _info(row)

    def list_conversations(self, *, limit: int | None = None) -> list[ConversationInfo]:
        """Conversations, most recently updated first."""
        with self._lock:
            rows = self._db.execute(
                _INFO + " ORDER BY updated DESC, c.key DESC LIMIT ?",
                (-1 if limit is None else limit,),
            ).fetchall()
        return [_info(r) for r in rows]

    def search(self, text: str, *, limit: int = 50) -> list[SearchHit]:
        """Events whose text contains ``text`` (case-insensitive for ASCII),
        newest conversation first, in log order within one."""
        if not text:
            return []
        # The bytes hold the text JSON-escaped; SQLite narrows by that, the
        # decoded text decides (keys and other fields can match the bytes).
        needle = codec.dumps(text)[1:-1]
        hits: list[SearchHit] = []
        with self._lock:
            rows = self._db.execute(
                "SELECT c.id, e.data FROM events e JOIN conversations c ON c.key = e.conv"
                " WHERE instr(lower(CAST(e.data AS TEXT)), lower(CAST(? AS TEXT))) > 0"
                f" ORDER BY {_UPDATED} DESC, c.key DESC, e.seq",
                (needle,),
            )
            for cid, data in rows:
                event = decode_event(data)
                found = event_text(event.kind, event.body)
                if found is not None and text.lower() in found.lower():
                    hits.append(
                        SearchHit(cid, event.id, event.seq, event.turn, snippet(found, text))
                    )
                    if len(hits) >= limit:
                        break
        return hits

    def fork(
        self, conversation: ConversationId, at: EventId, *, title: str | None = None
    ) -> ConversationInfo:
        """A new conversation holding the events up to and including ``at``
        (same ids, same bytes)."""
        cid = new_conversation_id()
        now = self._now()

        def work(db: sqlite3.Connection) -> ConversationInfo:
            src = db.execute(
                "SELECT key, title, model FROM conversations WHERE id = ?", (conversation,)
            ).fetchone()
            if src is None:
                raise ConversationNotFound(conversation)
            prefix = _id_prefix(at)
            hit = db.execute(
                "SELECT seq FROM events WHERE conv = ? AND substr(data, 1, ?) = ?",
                (src[0], len(prefix), prefix),
            ).fetchone()
            if hit is None:
                raise StoreError(f"conversation {conversation!r} has no event {at!r}")
            seq = int(hit[0])
            copied = db.execute(
                "SELECT data FROM events WHERE conv = ? AND seq <= ?", (src[0], seq)
            ).fetchall()
            turns = summarize(decode_event(r[0]) for r in copied).turns
            new_title = title if title is not None else src[1]
            info = ConversationInfo(cid, new_title, src[2], turns, seq, now, now, conversation, at)
            key = _insert_info(db, info)
            db.execute(
                "INSERT INTO events (conv, seq, data) SELECT ?, seq, data FROM events"
                " WHERE conv = ? AND seq <= ?",
                (key, src[0], seq),
            )
            return info

        info: ConversationInfo = self._write(work)
        return info

    def delete(self, conversation: ConversationId) -> None:
        """Remove a conversation and its events."""

        def work(db: sqlite3.Connection) -> None:
            row = db.execute(
                "SELECT key FROM conversations WHERE id = ?", (conversation,)
            ).fetchone()
            if row is None:
                raise ConversationNotFound(conversation)
            db.execute("DELETE FROM events WHERE conv = ?", (row[0],))
            db.execute("DELETE FROM conversations WHERE key = ?", (row[0],))

        self._write(work)
        self._keys.pop(conversation, None)

    def set_title(self, conversation: ConversationId, title: str | None) -> None:
        """Rename a conversation."""

        def work(db: sqlite3.Connection) -> None:
            cur = db.execute(
                "UPDATE conversations SET title = ? WHERE id = ?", (title, conversation)
            )
            if cur.rowcount == 0:
                raise ConversationNotFound(conversation)

        self._write(work)

    def import_events(self, info: ConversationInfo, data: Sequence[bytes]) -> ConversationInfo:
        """Store a whole conversation from validated canonical event bytes."""
        events = [decode_event(d) for d in data]
        summary = summarize(events)
        now = self._now()
        stored = msgspec.structs.replace(
            info,
            title=info.title if info.title is not None else summary.title,
            model=summary.model,
            turns=summary.turns,
            events=len(events),
            updated_at=now,
        )

        def work(db: sqlite3.Connection) -> None:
            key = _insert_info(db, stored)
            db.executemany(_INSERT, [(key, e.seq, d) for e, d in zip(events, data, strict=True)])

        self._write(work)
        return stored

    def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` verdict (``ok`` when sound)."""
        with self._lock:
            return str(self._db.execute("PRAGMA integrity_check").fetchone()[0])

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"


__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "SQLiteStore"]
