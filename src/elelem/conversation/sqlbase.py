"""The SQL store both backends share (SQLite embedded, PostgreSQL served).

Events live in one table keyed by ``(conversation, seq)`` holding nothing but
each event's canonical bytes (SQLite: after the event's envelope, packed for
loads: :mod:`elelem.conversation.loaded`), so an append writes what a raw
insert of those bytes would.  An append is one write transaction: the conversation row is
locked (SQLite: ``BEGIN IMMEDIATE``; PostgreSQL: ``FOR UPDATE``), the next
sequence number comes from ``max(seq)`` (one descent of the primary key,
never a read of earlier events), one ``executemany`` inserts the rows, and
the conversation row is written only when its title, model or turn count
changes.  The listing's event count and update time come from the last event.

A backend supplies the connection, its transaction verbs and the few SQL
expressions that differ (:class:`Dialect`); statements are written with
``?`` placeholders.
"""

from __future__ import annotations

import functools
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Self

import msgspec

from elelem import codec
from elelem.conversation.blobs import event_blobs
from elelem.conversation.errors import (
    ConversationExists,
    ConversationNotFound,
    SchemaVersionError,
    StoreError,
    typed_store_errors,
)
from elelem.conversation.events import (
    Draft,
    Event,
    check_body,
    decode_event,
    encode_event,
)
from elelem.conversation.fulltext import FullTextSQL
from elelem.conversation.loaded import decode_rows
from elelem.conversation.sqlblobs import SQLBlobs
from elelem.conversation.sqlschema import (
    Dialect,
    Migration,
    create_blob_table,
    create_fulltext,
    create_tables,
)
from elelem.conversation.sqlsearch import search_events
from elelem.conversation.store import (
    WRITER_WAIT,
    Clock,
    ConversationInfo,
    EventIds,
    SearchHit,
    Writer,
    format_time,
    new_conversation_id,
    summarize,
)
from elelem.conversation.writers import LocalLocks, PollingWriter
from elelem.vocabulary import Blob, ConversationId, EventId
from elelem.vocabulary.blob import check_bytes

if TYPE_CHECKING:
    from elelem.redaction import Redactor  # set by the caller: loading the log loads none


def id_prefix(event: EventId) -> bytes:
    """The bytes every canonical encoding of event ``event`` begins with."""
    return b'{"id":' + codec.dumps(event) + b","


LOAD_BATCH = 256
"""Rows fetched per round trip while loading a conversation."""


class SQLStore(SQLBlobs, ABC):
    """A :class:`~elelem.conversation.store.Store` over a SQL database.

    Calls are serialized on one connection (safe across threads); processes
    coordinate through the database's own locks.
    """

    dialect: Dialect
    fulltext: FullTextSQL
    """The backend's full-text index statements."""
    where: str
    """Where the store is, for messages (a path or a URL without password)."""

    redactor: Redactor | None = None
    """Applied to every event and title before it is stored (None: nothing
    is redacted).  The command line sets the secrets in force: a key a
    provider echoes, in any channel or encoding, never reaches the disk."""

    def __init__(self, *, clock: Clock, ids: Callable[[], EventId] | None) -> None:
        self._clock = clock
        self._ids = ids or EventIds()
        self._lock = threading.Lock()
        self._writers = LocalLocks()
        self._keys: dict[str, int] = {}
        d = self.dialect
        self._sql_note = self._sql(
            f"UPDATE conversations SET turns = {d.greatest}(turns, ?), model = coalesce(?, model),"
            " title = coalesce(title, ?) WHERE key = ? AND (turns < ?"
            f" OR (CAST(? AS TEXT) IS NOT NULL AND model {d.is_distinct} ?)"
            " OR (title IS NULL AND CAST(? AS TEXT) IS NOT NULL))"
        )
        last = "FROM events WHERE conv = c.key ORDER BY seq DESC LIMIT 1"
        self._sql_updated = f"coalesce((SELECT {d.at_of} {last}), c.created_at)"
        self._sql_lock = self._sql("SELECT key FROM conversations WHERE key = ?" + d.lock_row)
        self._sql_max = self._sql("SELECT max(seq) FROM events WHERE conv = ?")
        self._sql_put_blob = self._sql(
            "INSERT INTO blobs (sha256, size, data) VALUES (?, ?, ?)"
            " ON CONFLICT (sha256) DO NOTHING"
        )
        self._sql_has_blob = self._sql("SELECT 1 FROM blobs WHERE sha256 = ?")
        self._sql_get_blob = self._sql("SELECT size, data FROM blobs WHERE sha256 = ?")
        columns = self._event_columns
        marks = ", ".join("?" * (columns.count(",") + 1))
        self._sql_insert = self._sql(
            f"INSERT INTO events (conv, seq, {columns}) VALUES (?, ?, {marks})"
        )
        self._sql_info = (
            "SELECT c.id, c.title, c.model, c.turns,"
            " coalesce((SELECT max(seq) FROM events WHERE conv = c.key), 0),"
            f" c.created_at, {self._sql_updated} AS updated, c.parent, c.forked_at"
            " FROM conversations c"
        )

    # -- what a backend provides ---------------------------------------------------

    @abstractmethod
    def _exec(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """Run one statement; return a cursor."""

    @abstractmethod
    def _many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement for many rows."""

    @abstractmethod
    def _begin(self) -> None:
        """Start a write transaction."""

    @abstractmethod
    def _end(self, commit: bool) -> None:
        """Commit or roll back the transaction."""

    @abstractmethod
    def _migrations(self) -> Sequence[Migration]:
        """The backend's schema migrations, oldest first."""

    @abstractmethod
    def _close(self) -> None:
        """Close the connection."""

    def close(self) -> None:
        """Close the connection; the store is unusable afterwards."""
        with self._lock:
            self._close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    _event_columns = "data"
    """The columns of ``events`` beside ``conv`` and ``seq``, as
    :meth:`_row` fills them."""
    _stored_json = "data"
    """An event's canonical JSON, from its row of ``events`` (a big event's
    row may be empty: :meth:`_event_json` and :meth:`_whole_rows` fill it)."""
    _kept_apart = "false"
    """True of a row of ``events`` whose event is kept beside it (SQL)."""

    def _event_json(self, key: int, seq: int, stored: Any) -> bytes:
        """The canonical JSON of event ``seq`` of conversation ``key``, from
        its row's :attr:`_stored_json`: a backend keeping big events beside
        their rows reads those apart (never through SQL that would copy
        them whole: #41)."""
        return bytes(stored)

    def _find_kept(self, key: int, prefix: bytes) -> int | None:
        """The seq of the event kept apart whose JSON begins with ``prefix``."""
        return None

    def _row(self, key: int, event: Event, data: bytes) -> tuple[Any, ...]:
        """The row of ``events`` storing ``event``, whose canonical bytes are
        ``data``: ``(key, seq, *columns)``."""
        return (key, event.seq, data)

    def _copy_kept(self, new: int, key: int, upto: int) -> None:
        """Copy the events of conversation ``key`` up to seq ``upto`` kept
        beside their rows to conversation ``new``: what :meth:`fork` does
        after the rows."""
        return

    _delete_bodies: tuple[str, ...] = ()
    """Statements deleting a conversation's events kept beside their rows
    (``key``): what :meth:`delete` runs after the rows."""

    db_errors: tuple[type[BaseException], ...] = ()
    integrity_errors: tuple[type[BaseException], ...] = ()

    def writer(self, conversation: ConversationId, *, timeout: float = WRITER_WAIT) -> Writer:
        """The turn lock of ``conversation`` (see :mod:`elelem.conversation.writers`)."""
        try_lock, unlock = self._writer_lock(conversation)
        return PollingWriter(conversation, timeout, self._writers(conversation), try_lock, unlock)

    @abstractmethod
    def _writer_lock(self, conversation: str) -> tuple[Callable[[], bool], Callable[[], None]]:
        """The backend's non-blocking ``try_lock`` and ``unlock`` for one conversation."""

    def _sql(self, sql: str) -> str:
        """``sql`` in the backend's placeholder style."""
        return sql

    def _text_in(self, value: str | None) -> str | None:
        """A title or model name as the backend's text column stores it."""
        return value

    def _text_out(self, value: str | None) -> str | None:
        """A title or model name read back from the backend's text column."""
        return value

    def _info(self, row: Sequence[Any]) -> ConversationInfo:
        info = ConversationInfo(*row)
        title, model = self._text_out(info.title), self._text_out(info.model)
        if title is info.title and model is info.model:
            return info
        return msgspec.structs.replace(info, title=title, model=model)

    # -- schema -------------------------------------------------------------------

    def _prepare_schema(self) -> None:
        """Run first in the migration's transaction (a backend's locks, namespaces)."""
        return  # by default the write transaction is all the isolation needed

    def _migrate(self) -> None:
        def work() -> None:
            self._prepare_schema()
            self._exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            row = self._exec("SELECT version FROM schema_version").fetchone()
            version = 0 if row is None else int(row[0])
            migrations = self._migrations()
            latest = len(migrations)
            if version > latest:
                raise SchemaVersionError(
                    f"store {self.where} has schema version {version}; this elelem"
                    f" understands versions up to {latest}: upgrade elelem"
                )
            for number, migration in enumerate(migrations[version:], start=version + 1):
                try:
                    migration(self)
                except Exception as exc:
                    raise StoreError(
                        f"migrating store {self.where} to schema version {number} failed: {exc}"
                    ) from exc
            if row is None:
                self._exec(self._sql("INSERT INTO schema_version VALUES (?)"), (latest,))
            elif version != latest:
                self._exec(self._sql("UPDATE schema_version SET version = ?"), (latest,))

        self._write(work)

    @property
    def schema_version(self) -> int:
        """The schema version of the open database."""
        with self._lock:
            return int(self._exec("SELECT version FROM schema_version").fetchone()[0])

    # -- helpers -------------------------------------------------------------------

    def _key(self, conversation: str) -> int:
        key = self._keys.get(conversation)
        if key is None:
            key = self._keys[conversation] = self._stored_key(conversation)
        return key

    def _stored_key(self, conversation: str) -> int:
        """The conversation's row key as the database holds it now (not the
        cache); :class:`ConversationNotFound` when there is none."""
        row = self._exec(
            self._sql("SELECT key FROM conversations WHERE id = ?"), (conversation,)
        ).fetchone()
        if row is None:
            raise ConversationNotFound(conversation)
        return int(row[0])

    def _now(self) -> str:
        return format_time(self._clock())

    def _write(self, work: Callable[[], Any], what: str = "") -> Any:
        with self._lock:
            try:
                self._begin()  # where a lock held too long by another writer shows
            except self.db_errors as exc:
                raise StoreError(f"{what or 'write to'} {self.where} failed: {exc}") from exc
            try:
                result = work()
            except self.db_errors as exc:
                self._end(commit=False)
                raise StoreError(f"{what or 'write to'} {self.where} failed: {exc}") from exc
            except BaseException:
                self._end(commit=False)
                raise
            self._end(commit=True)
            return result

    def _insert_info(self, info: ConversationInfo) -> int:
        """Insert a conversation row from its listing entry; return its key."""
        try:
            row = self._exec(
                self._sql(
                    "INSERT INTO conversations (id, title, model, turns, created_at, parent,"
                    " forked_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING key"
                ),
                (
                    info.id,
                    self._text_in(info.title),
                    self._text_in(info.model),
                    info.turns,
                    info.created_at,
                    info.parent,
                    info.forked_at,
                ),
            ).fetchone()
        except self.integrity_errors:
            raise ConversationExists(info.id) from None
        return int(row[0])

    def _find(self, key: int, event: EventId) -> int | None:
        prefix = id_prefix(event)
        row = self._exec(
            self._sql(f"SELECT seq FROM events WHERE conv = ? AND {self.dialect.prefix}"),
            (key, len(prefix), prefix),
        ).fetchone()
        return self._find_kept(key, prefix) if row is None else int(row[0])

    # -- Store ---------------------------------------------------------------------

    def create(
        self, *, title: str | None = None, id: ConversationId | None = None
    ) -> ConversationInfo:
        """A new, empty conversation (an id of your own must be unused)."""
        now = self._now()
        info = ConversationInfo(id or new_conversation_id(), title, None, 0, 0, now, now)
        self._write(lambda: self._insert_info(info))
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
        key = self._key(conversation)
        redact = self.redactor.redact_bytes if self.redactor else None
        title = summary.title
        if self.redactor and title is not None:
            title = self.redactor.redact(title)

        def work() -> list[Event]:
            if self._exec(self._sql_lock, (key,)).fetchone() is None:
                self._keys.pop(conversation, None)
                raise ConversationNotFound(conversation)
            seq = self._exec(self._sql_max, (key,)).fetchone()[0] or 0
            if explicit:
                self._check_ids(key, explicit)
            ids = self._ids
            events = []
            rows = []
            # The hot path of every append: one pass, nothing but the event's
            # construction and its encoding (which notes the blobs it meets).
            with codec.collect_blobs() as blobs:
                for d in drafts:
                    seq += 1
                    event = Event(d.id or ids(), seq, now, d.turn, d.response, d.kind, d.body)
                    data = encode_event(event)
                    if redact is not None:
                        clean = redact(data)
                        if clean is not data:
                            data, event = clean, decode_event(clean)
                    events.append(event)
                    rows.append(self._row(key, event, data))
            if blobs:
                self._put_blobs(blobs)
            data = clean = b""  # the rows hold the events' bytes alone now
            self._insert_events(rows)
            if summary.turns or summary.model or summary.title:
                t, m, named = (
                    summary.turns,
                    self._text_in(summary.model),
                    self._text_in(title),
                )
                self._exec(self._sql_note, (t, m, named, key, t, m, m, named))
            return events

        events: list[Event] = self._write(work, f"append to {conversation!r} in")
        return tuple(events)

    def _insert_events(self, rows: list[tuple[Any, ...]]) -> None:
        """Insert the events' ``rows`` (:meth:`_row`), given away: a
        backend may empty the list as it goes."""
        self._many(self._sql_insert, rows)

    def _check_ids(self, key: int, ids: list[EventId]) -> None:
        # Only drafts that bring their own id pay for this lookup.
        if len(set(ids)) != len(ids):
            raise StoreError(f"event ids repeat within one append: {sorted(ids)!r}")
        for event in ids:
            if self._find(key, event) is not None:
                raise StoreError(f"event id {event!r} is already in the conversation")

    def load(self, conversation: ConversationId, *, after: int = 0) -> tuple[Event, ...]:
        """The events with ``seq > after``, in order."""
        events: list[Event] = []
        with self._lock:
            key = self._key(conversation)
            cursor = self._exec(
                self._sql("SELECT data FROM events WHERE conv = ? AND seq > ? ORDER BY seq"),
                (key, after),
            )
            # A few hundred rows at a time: each is decoded while its bytes
            # are still in the CPU's cache (measured ~10% cheaper than
            # fetchall, which holds every row before the first is decoded).
            # Bodies are decoded on first read (conversation/loaded.py).
            while rows := cursor.fetchmany(LOAD_BATCH):
                before = after + len(events)
                events += decode_rows(
                    conversation,
                    rows,
                    before,
                    functools.partial(self._whole_rows, key, first=before + 1),
                )
        return tuple(events)

    def load_bytes(self, conversation: ConversationId) -> list[bytes]:
        """The canonical bytes of every event, in order, exactly as stored."""
        with self._lock:
            key = self._key(conversation)
            rows = self._exec(
                self._sql(f"SELECT {self._stored_json} FROM events WHERE conv = ? ORDER BY seq"),
                (key,),
            ).fetchall()
            rows = self._whole_rows(key, rows, 1)
        return [bytes(r[0]) for r in rows]

    def _whole_rows(self, key: int, rows: list[Any], first: int) -> list[Any]:
        """``rows`` of ``SELECT data FROM events`` (seqs from ``first``, in
        order), each holding its event's row whole: a backend keeping big
        events beside their rows fills those in (with their canonical
        JSON)."""
        return rows

    def info(self, conversation: ConversationId) -> ConversationInfo:
        """The listing entry of one conversation."""
        with self._lock:
            row = self._exec(self._sql(self._sql_info + " WHERE c.id = ?"), (conversation,))
            found = row.fetchone()
        if found is None:
            raise ConversationNotFound(conversation)
        return self._info(found)

    def list_conversations(self, *, limit: int | None = None) -> list[ConversationInfo]:
        """Conversations, most recently updated first."""
        sql = self._sql_info + " ORDER BY updated DESC, c.key DESC"
        with self._lock:
            if limit is None:
                rows = self._exec(sql).fetchall()
            else:
                rows = self._exec(self._sql(sql + " LIMIT ?"), (limit,)).fetchall()
        return [self._info(r) for r in rows]

    def search(self, text: str, *, limit: int = 50) -> list[SearchHit]:
        """Events whose text holds every word of ``text`` (each as a word
        prefix, ignoring case; :mod:`~elelem.conversation.fulltext`), newest
        conversation first, in log order within one.  A query without words
        (only punctuation) matches the events that contain it verbatim."""
        return search_events(self, text, limit)

    def fork(
        self, conversation: ConversationId, at: EventId, *, title: str | None = None
    ) -> ConversationInfo:
        """A new conversation holding the events up to and including ``at``
        (same ids, same bytes)."""
        cid = new_conversation_id()
        now = self._now()

        def work() -> ConversationInfo:
            src = self._exec(
                self._sql("SELECT key, title, model FROM conversations WHERE id = ?"),
                (conversation,),
            ).fetchone()
            if src is None:
                raise ConversationNotFound(conversation)
            seq = self._find(src[0], at)
            if seq is None:
                raise StoreError(f"conversation {conversation!r} has no event {at!r}")
            copied = self._exec(
                self._sql(
                    f"SELECT seq, {self._stored_json} FROM events WHERE conv = ? AND seq <= ?"
                ),
                (src[0], seq),
            ).fetchall()
            # The envelopes alone: a big event is read apart, its body left.
            turns = max(
                (
                    decode_rows(conversation, [(self._event_json(src[0], s, d),)], s - 1)[0].turn
                    for s, d in copied
                ),
                default=0,
            )
            new_title = title if title is not None else self._text_out(src[1])
            model = self._text_out(src[2])
            info = ConversationInfo(cid, new_title, model, turns, seq, now, now, conversation, at)
            key = self._insert_info(info)
            columns = self._event_columns
            self._exec(
                self._sql(
                    f"INSERT INTO events (conv, seq, {columns}) SELECT ?, seq, {columns}"
                    " FROM events WHERE conv = ? AND seq <= ?"
                ),
                (key, src[0], seq),
            )
            self._copy_kept(key, src[0], seq)
            return info

        info: ConversationInfo = self._write(work)
        return info

    def delete(self, conversation: ConversationId) -> None:
        """Remove a conversation and its events."""

        def work() -> None:
            key = self._stored_key(conversation)
            self._exec(self._sql(self.fulltext.delete), self.fulltext.delete_params(key))
            self._exec(self._sql("DELETE FROM fts_progress WHERE conv = ?"), (key,))
            self._exec(self._sql("DELETE FROM events WHERE conv = ?"), (key,))
            for remove in self._delete_bodies:
                self._exec(self._sql(remove), (key,))
            self._exec(self._sql("DELETE FROM conversations WHERE key = ?"), (key,))

        self._write(work)
        self._keys.pop(conversation, None)

    def set_title(self, conversation: ConversationId, title: str | None) -> None:
        """Rename a conversation."""

        def work() -> None:
            cur = self._exec(
                self._sql("UPDATE conversations SET title = ? WHERE id = ?"),
                (self._text_in(title), conversation),
            )
            if cur.rowcount == 0:
                raise ConversationNotFound(conversation)

        self._write(work)

    def import_events(
        self, info: ConversationInfo, data: Sequence[bytes], blobs: Sequence[Blob] = ()
    ) -> ConversationInfo:
        """Store a whole conversation from validated canonical event bytes, with
        the bytes of the blobs they reference (each checked against its hash
        before anything is written; a referenced blob neither given nor
        already stored is a :class:`~elelem.errors.BlobMissingError`)."""
        events = [decode_event(d) for d in data]
        summary = summarize(events)
        stored = msgspec.structs.replace(
            info,
            title=info.title if info.title is not None else summary.title,
            model=summary.model,
            turns=summary.turns,
            events=len(events),
            updated_at=events[-1].at if events else info.created_at,
        )

        referenced = {b.sha256: b for e in events for b in event_blobs(e)}
        given = {b.sha256: b for b in blobs}
        for sha, blob in given.items():
            check_bytes(sha, blob.size, blob.data)

        def work() -> None:
            self._put_blobs(list(given.values()))
            self._put_blobs([b for sha, b in referenced.items() if sha not in given])
            key = self._insert_info(stored)
            self._insert_events([self._row(key, e, d) for e, d in zip(events, data, strict=True)])

        self._write(work)
        return stored


typed_store_errors(SQLStore)

__all__ = [
    "Dialect",
    "Migration",
    "SQLStore",
    "create_blob_table",
    "create_fulltext",
    "create_tables",
    "id_prefix",
]
