"""Collections of embeddings, kept in the conversation store's database.

A collection is a named set of ``(id, vector, content, metadata)`` rows
made with one model at one dimension; :meth:`Collection.similar` ranks its
rows by cosine similarity to a vector.  The tables live beside the
conversation log in the same database (SQLite or PostgreSQL, in the same
schema), made on first use with ``CREATE TABLE IF NOT EXISTS``: they are no
part of the log's schema version, which they neither read nor change.

Vectors are stored as little-endian float32 bytes whatever the machine, so a
database moves between machines as it is.  Each row also keeps the SHA-256
of its content, so re-embedding a corpus skips what did not change
(:meth:`Collection.unchanged`).

Where the PostgreSQL server has pgvector (installed in the database, or
available to ``CREATE EXTENSION``), the table gains a ``vector`` column and
similarity is ranked in SQL with an HNSW index (:mod:`.pgvector`); an
existing table is migrated in place, its rows copied into the column.
Elsewhere (SQLite, a server without the extension) similarity is computed
in Python over the stored vectors, reading every row of the collection.
:attr:`Collections.backend` says which, :attr:`Collections.backend_note` why.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Sequence
from functools import partial
from typing import Any

import msgspec

from elelem import codec
from elelem.conversation.errors import StoreError
from elelem.conversation.postgres import PostgresStore
from elelem.conversation.sqlbase import SQLStore
from elelem.conversation.sqlite import SQLiteStore
from elelem.conversation.store import Store
from elelem.embeddings.pgstore import find_pgvector, index_collection, migrate_to_pgvector
from elelem.embeddings.pgvector import (
    HNSW_FROM,
    MAX_STORED,
    PGVECTOR,
    PYTHON,
    PgVector,
    VectorValue,
    binary,
    index_name,
    search_kind,
)
from elelem.embeddings.pgvector import search_params as pg_search_params
from elelem.embeddings.vectors import content_hash, cosine, from_bytes, to_bytes
from elelem.errors import ConfigError
from elelem.vocabulary.json import JSONValue
from elelem.wire.embeddings import Vector


class CollectionInfo(msgspec.Struct, frozen=True):
    """One collection: its name, model address, dimensions, row count, and
    how it is searched (``python``, ``pgvector``, ``pgvector+hnsw``)."""

    name: str
    model: str
    dimensions: int
    count: int
    created_at: str
    search: str = PYTHON


class Item(msgspec.Struct, frozen=True):
    """One row to store: its id, vector, and optionally its content and metadata."""

    id: str
    vector: Vector
    content: str | None = None
    metadata: JSONValue = None


class Hit(msgspec.Struct, frozen=True):
    """One row of a similarity search, best first: id, cosine score, content, metadata."""

    id: str
    score: float
    content: str | None
    metadata: JSONValue


def _tables(store: SQLStore) -> tuple[str, ...]:
    blob = "BLOB" if isinstance(store, SQLiteStore) else "BYTEA"
    return (
        """CREATE TABLE IF NOT EXISTS embedding_collections (
            name TEXT PRIMARY KEY,
            model TEXT NOT NULL,
            dimensions INTEGER NOT NULL,
            created_at TEXT NOT NULL
        )""",
        f"""CREATE TABLE IF NOT EXISTS embeddings (
            collection TEXT NOT NULL,
            id TEXT NOT NULL,
            vector {blob} NOT NULL,
            content TEXT,
            metadata TEXT,
            content_sha256 TEXT,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (collection, id)
        )""",
    )


def _sql_store(store: Store) -> SQLStore:
    if not isinstance(store, SQLStore):
        raise ConfigError(f"collections need a SQL store (SQLite or PostgreSQL), not {store!r}")
    return store


class Collections:
    """The collections of one store (SQLite or PostgreSQL).

    The store's own connection and lock serve every call, so a collection
    write is one transaction like an append to the log.
    """

    def __init__(self, store: Store, *, hnsw_from: int = HNSW_FROM) -> None:
        if isinstance(hnsw_from, bool) or not isinstance(hnsw_from, int) or hnsw_from < 0:
            raise ConfigError(f"hnsw_from must be a row count (0 or more), not {hnsw_from!r}")
        self._store = _sql_store(store)
        self.hnsw_from = hnsw_from
        """How many rows a collection holds before it gets its HNSW index
        (where pgvector ranks; see :data:`~elelem.embeddings.pgvector.HNSW_FROM`)."""
        self._ready = False
        self._pgvector: PgVector | None = None
        self._note = ""

    def _sql(self, sql: str) -> str:
        return self._store._sql(sql)

    @property
    def backend(self) -> str:
        """``pgvector`` where similarity is ranked in SQL by the PostgreSQL
        server's vector extension, else ``python``."""
        self._made()
        return PYTHON if self._pgvector is None else PGVECTOR

    @property
    def backend_note(self) -> str:
        """Why similarity is ranked in Python ("" where pgvector ranks it or
        the store is SQLite)."""
        self._made()
        return self._note

    def _made(self) -> None:
        if self._ready:
            return
        store = self._store
        tables = _tables(store)

        def create() -> None:
            for statement in tables:
                store._exec(statement)

        store._write(create, "creating the embedding tables of")
        if isinstance(store, PostgresStore):
            pgvector, self._note = find_pgvector(store)
            if pgvector is not None:
                with store._lock:
                    store._send_as(VectorValue, pgvector.type())
                migrate = partial(migrate_to_pgvector, store, pgvector, self.hnsw_from)
                store._write(migrate, "adding pgvector to the embeddings of")
            self._pgvector = pgvector
        self._ready = True

    def _write(self, work: Any, what: str) -> Any:
        self._made()
        return self._store._write(work, what)

    def _text(self, value: str) -> str:
        """``value`` with the store's redactor's secrets removed, as the log keeps text."""
        redactor = self._store.redactor
        return redactor.redact(value) if redactor is not None else value

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        self._made()
        store = self._store
        # Read like the log's own reads: under the store's lock, no write
        # transaction (SQLite would take its write lock for one).
        with store._lock:
            try:
                return list(store._exec(self._sql(sql), params).fetchall())
            except store.db_errors as exc:
                raise StoreError(f"reading collections from {store.where} failed: {exc}") from exc

    def list(self) -> list[CollectionInfo]:
        """Every collection, by name."""
        rows = self._read(
            "SELECT c.name, c.model, c.dimensions,"
            " (SELECT count(*) FROM embeddings e WHERE e.collection = c.name), c.created_at"
            " FROM embedding_collections c ORDER BY c.name"
        )
        indexed: set[str] = set()
        if self._pgvector is not None:
            indexed = {
                r[0]
                for r in self._read(
                    "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
                )
            }
        return [
            CollectionInfo(
                r[0],
                r[1],
                int(r[2]),
                int(r[3]),
                r[4],
                PYTHON
                if self._pgvector is None
                else search_kind(int(r[2]), index_name(r[0]) in indexed),
            )
            for r in rows
        ]

    def get(self, name: str) -> Collection:
        """The collection ``name``; :class:`~elelem.errors.ConfigError` when there is none."""
        rows = self._read(
            "SELECT model, dimensions FROM embedding_collections WHERE name = ?", (name,)
        )
        if not rows:
            raise ConfigError(f"no collection named {name!r}")
        return Collection(self, name, rows[0][0], int(rows[0][1]))

    def open(self, name: str, model: str, dimensions: int) -> Collection:
        """The collection ``name``, made for ``model`` at ``dimensions`` if it
        is new; an existing one made with another model or dimension is a
        :class:`~elelem.errors.ConfigError` (its vectors would not compare)."""
        if not name or len(name) > 200:
            raise ConfigError("a collection name is 1 to 200 characters")
        store = self._store
        now = store._now()

        def work() -> tuple[str, int]:
            store._exec(
                self._sql(
                    "INSERT INTO embedding_collections (name, model, dimensions, created_at)"
                    " VALUES (?, ?, ?, ?) ON CONFLICT (name) DO NOTHING"
                ),
                (name, model, dimensions, now),
            )
            row = store._exec(
                self._sql("SELECT model, dimensions FROM embedding_collections WHERE name = ?"),
                (name,),
            ).fetchone()
            return row[0], int(row[1])

        have_model, have_dims = self._write(work, "opening a collection in")
        if (have_model, have_dims) != (model, dimensions):
            raise ConfigError(
                f"collection {name!r} holds {have_dims}-dimension vectors of {have_model};"
                f" these are {dimensions}-dimension vectors of {model}"
            )
        return Collection(self, name, model, dimensions)

    def delete(self, name: str) -> None:
        """Remove collection ``name`` and its rows."""
        self.get(name)
        store = self._store
        pgvector = self._pgvector

        def work() -> None:
            store._exec(self._sql("DELETE FROM embeddings WHERE collection = ?"), (name,))
            store._exec(self._sql("DELETE FROM embedding_collections WHERE name = ?"), (name,))
            if pgvector is not None and isinstance(store, PostgresStore):
                store._ddl(pgvector.drop_index(name))

        self._write(work, "deleting a collection from")


class Collection:
    """One collection (see :class:`Collections`)."""

    def __init__(self, owner: Collections, name: str, model: str, dimensions: int) -> None:
        self._owner = owner
        self.name = name
        """The collection's name."""
        self.model = model
        """The model address its vectors were made with."""
        self.dimensions = dimensions
        """The length of its vectors."""

    def __repr__(self) -> str:
        return f"Collection({self.name!r}, model={self.model!r}, dimensions={self.dimensions})"

    def upsert(self, items: Iterable[Item]) -> int:
        """Store ``items`` (a row with an id already there replaces it), in
        one transaction; return how many.  A vector of another length is a
        :class:`~elelem.errors.ConfigError` and nothing is stored."""
        owner = self._owner
        store = owner._store
        owner._made()
        pgvector = owner._pgvector
        now = store._now()
        rows = []
        for item in items:
            if len(item.vector) != self.dimensions:
                raise ConfigError(
                    f"item {item.id!r} has {len(item.vector)} dimensions;"
                    f" collection {self.name!r} holds {self.dimensions}"
                )
            if not math.isfinite(sum(item.vector)):
                raise ConfigError(f"item {item.id!r} holds a value that is not a finite number")
            _check_text(item)
            ranked = () if pgvector is None else (binary(item.vector),)
            rows.append(
                (
                    self.name,
                    store._text_in(owner._text(item.id)),
                    to_bytes(item.vector),
                    *ranked,
                    None if item.content is None else store._text_in(owner._text(item.content)),
                    None
                    if item.metadata is None
                    else owner._text(codec.dumps(item.metadata).decode()),
                    None if item.content is None else content_hash(item.content),
                    now,
                )
            )
        column, value, update = "", "", ""
        if pgvector is not None:
            column, value = ", embedding", f", {pgvector.upsert_value()}"
            update = " embedding = excluded.embedding,"
        sql = owner._sql(
            f"INSERT INTO embeddings (collection, id, vector{column}, content, metadata,"
            f" content_sha256, updated_at) VALUES (?, ?, ?{value}, ?, ?, ?, ?)"
            " ON CONFLICT (collection, id) DO UPDATE SET"
            f" vector = excluded.vector,{update} content = excluded.content,"
            " metadata = excluded.metadata, content_sha256 = excluded.content_sha256,"
            " updated_at = excluded.updated_at"
        )

        def work() -> None:
            store._many(sql, rows)
            if pgvector is not None and isinstance(store, PostgresStore):
                index_collection(store, pgvector, self.name, self.dimensions, owner.hnsw_from)

        owner._write(work, "storing embeddings in")
        return len(rows)

    def unchanged(self, items: Iterable[tuple[str, str]]) -> set[str]:
        """The ids of ``(id, content)`` pairs stored with that same content."""
        owner = self._owner
        # Rows are found by their id as stored (redacted), the content by the
        # hash of what was given.
        wanted = {owner._text(i): (i, content_hash(c)) for i, c in items}
        if not wanted:
            return set()
        store = owner._store
        rows = owner._read(
            "SELECT id, content_sha256 FROM embeddings WHERE collection = ?", (self.name,)
        )
        found = set()
        for key, digest in ((store._text_out(r[0]), r[1]) for r in rows):
            given = wanted.get(key) if key is not None else None
            if given is not None and given[1] == digest:
                found.add(given[0])
        return found

    def count(self) -> int:
        """How many rows the collection holds."""
        rows = self._owner._read(
            "SELECT count(*) FROM embeddings WHERE collection = ?", (self.name,)
        )
        return int(rows[0][0])

    def vector(self, id: str) -> Vector:
        """The stored vector of row ``id``; :class:`~elelem.errors.ConfigError` when absent."""
        store = self._owner._store
        rows = self._owner._read(
            "SELECT vector FROM embeddings WHERE collection = ? AND id = ?",
            (self.name, store._text_in(self._owner._text(id))),
        )
        if not rows:
            raise ConfigError(f"collection {self.name!r} has no item {id!r}")
        return from_bytes(rows[0][0])

    def similar(self, vector: Vector, *, number: int = 10, skip: str | None = None) -> list[Hit]:
        """The ``number`` rows most similar to ``vector`` (cosine), best
        first, ties by id; ``skip`` leaves out one id (the query's own row).
        Ranked by pgvector in SQL where :attr:`Collections.backend` is
        ``pgvector``, else in Python: the same rows and scores either way
        (to float32 rounding)."""
        if len(vector) != self.dimensions:
            raise ConfigError(
                f"the query has {len(vector)} dimensions; collection {self.name!r}"
                f" holds {self.dimensions}"
            )
        if number < 1:
            return []
        owner = self._owner
        owner._made()
        if skip is not None:
            skip = owner._text(skip)  # as the row's id is stored
        query = binary(vector)
        pgvector, store = owner._pgvector, owner._store
        if pgvector is None or query is None or self.dimensions > MAX_STORED:
            rows = owner._read(
                "SELECT id, vector, content, metadata FROM embeddings WHERE collection = ?",
                (self.name,),
            )
            ranked: list[tuple[float, str, str | None, str | None]] = []
        else:
            ranked, rows = owner._write(
                partial(self._rank, pgvector, query, number, skip), "searching a collection in"
            )
        scored = list(ranked)
        for key, data, content, metadata in rows:
            name = store._text_out(key)
            if name is None or name == skip:
                continue
            scored.append((cosine(vector, from_bytes(data)), name, content, metadata))
        best = heapq.nsmallest(number, scored, key=lambda s: (-s[0], s[1]))
        return [
            Hit(name, score, store._text_out(content), _metadata(metadata))
            for score, name, content, metadata in best
        ]

    def _rank(
        self, pgvector: PgVector, query: VectorValue, number: int, skip: str | None
    ) -> tuple[list[tuple[float, str, str | None, str | None]], list[Any]]:
        """In one transaction: the ``number`` nearest rows pgvector ranks, and
        the rows it cannot rank (their column NULL), for Python to score."""
        store = self._owner._store
        for setting, value in pgvector.settings(number):
            store._exec(self._owner._sql("SELECT set_config(?, ?, true)"), (setting, value))
        kept = None if skip is None else store._text_in(skip)
        found = store._exec(
            self._owner._sql(pgvector.search(self.dimensions, kept is not None)),
            pg_search_params(self.name, query, kept, number),
        ).fetchall()
        ranked = []
        for key, content, metadata, distance in found:
            name = store._text_out(key)
            if name is not None:
                ranked.append((1.0 - float(distance), name, content, metadata))
        unranked = store._exec(
            self._owner._sql(
                "SELECT id, vector, content, metadata FROM embeddings"
                " WHERE collection = ? AND embedding IS NULL"
            ),
            (self.name,),
        ).fetchall()
        return ranked, list(unranked)


def _check_text(item: Item) -> None:
    """A :class:`ConfigError` when ``item``'s id, content or metadata hold a
    lone surrogate (a ``\\ud800`` escape decodes to one): no store keeps it."""
    for what, value in (("id", item.id), ("content", item.content)):
        if value is not None and not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ConfigError(
                    f"item {item.id!r}: its {what} holds a lone surrogate "
                    f"(U+{ord(value[exc.start]):04X}), which is not text"
                ) from None
    if item.metadata is not None:
        try:
            codec.dumps(item.metadata)
        except UnicodeEncodeError as exc:
            unit = exc.object[exc.start] if isinstance(exc.object, str) else "?"
            raise ConfigError(
                f"item {item.id!r}: its metadata holds a lone surrogate "
                f"(U+{ord(unit[0]):04X}), which is not text"
            ) from None


def _metadata(text: str | None) -> JSONValue:
    if text is None:
        return None
    try:
        value: JSONValue = msgspec.json.decode(text)
    except msgspec.DecodeError as exc:
        raise StoreError(f"a stored embedding's metadata is not JSON: {exc}") from None
    return value


__all__ = [
    "Collection",
    "CollectionInfo",
    "Collections",
    "Hit",
    "Item",
    "content_hash",
    "cosine",
    "from_bytes",
    "to_bytes",
]
