"""pgvector in a PostgreSQL store: finding the extension (installing it
when the server has it), moving an existing embeddings table onto it, and
indexing a collection once it is large enough (the SQL itself is
:mod:`~elelem.embeddings.pgvector`'s)."""

from __future__ import annotations

import re
from typing import Any

from elelem.conversation.errors import StoreError
from elelem.conversation.postgres import PostgresStore
from elelem.embeddings.pgvector import PgVector, binary, index_name
from elelem.embeddings.vectors import from_bytes

_SAFE_SCHEMA = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _one(store: PostgresStore, sql: str) -> Any:
    """The first row of ``sql``, read outside a transaction."""
    with store._lock:
        try:
            return store._exec(sql).fetchone()
        except store.db_errors as exc:
            raise StoreError(f"reading the extensions of {store.where} failed: {exc}") from exc


def _installed(store: PostgresStore) -> tuple[str, str] | None:
    row = _one(
        store,
        "SELECT n.nspname, e.extversion FROM pg_extension e"
        " JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'",
    )
    return None if row is None else (str(row[0]), str(row[1]))


def find_pgvector(store: PostgresStore) -> tuple[PgVector | None, str]:
    """The vector extension of ``store``'s database, installed here if the
    server has it and it is not yet; else None and why."""
    found = _installed(store)
    if found is None:
        if _one(store, "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'") is None:
            return None, "the PostgreSQL server has no vector extension (pgvector)"
        try:
            store._write(
                lambda: store._exec("CREATE EXTENSION IF NOT EXISTS vector"),
                "installing pgvector in",
            )
        except StoreError as exc:
            # Another opener may have installed it meanwhile; else it is the
            # user's to install (it needs a superuser), and the note says so.
            if _installed(store) is None:
                return None, f"the server has pgvector but it could not be installed: {exc}"
        found = _installed(store)
        if found is None:
            return None, "CREATE EXTENSION vector left no vector extension"
    schema, version = found
    if not _SAFE_SCHEMA.fullmatch(schema):
        return None, f"pgvector is in schema {schema!r}, a name elelem does not put in SQL"
    return PgVector(schema, version), ""


def migrate_to_pgvector(store: PostgresStore, pgvector: PgVector, hnsw_from: int) -> None:
    """Give the embeddings table its vector column if it has none yet, copy
    every stored vector into it and index each collection (one transaction:
    a failure leaves the table as it was)."""
    have = store._exec(
        "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()"
        " AND table_name = 'embeddings' AND column_name = 'embedding'"
    ).fetchone()
    if have is not None:
        return
    store._ddl(pgvector.add_column())
    store._ddl(pgvector.null_index())
    update = store._sql(
        f"UPDATE embeddings SET embedding = {pgvector.upsert_value()}"
        " WHERE collection = ? AND id = ?"
    )
    after: tuple[str, str] = ("", "")
    while True:
        # Keyset pages: a large table is copied without holding it in memory.
        page = store._exec(
            store._sql(
                "SELECT collection, id, vector FROM embeddings WHERE embedding IS NULL"
                " AND (collection, id) > (?, ?) ORDER BY collection, id LIMIT 500"
            ),
            after,
        ).fetchall()
        if not page:
            break
        filled = [(q, c, k) for c, k, data in page if (q := binary(from_bytes(data))) is not None]
        if filled:
            store._many(update, filled)
        after = (page[-1][0], page[-1][1])
    for name, dimensions in store._exec("SELECT name, dimensions FROM embedding_collections"):
        index_collection(store, pgvector, name, int(dimensions), hnsw_from)


def index_collection(
    store: PostgresStore, pgvector: PgVector, name: str, dimensions: int, hnsw_from: int
) -> None:
    """Make collection ``name``'s HNSW index if it has none, its dimension
    allows one and it holds ``hnsw_from`` rows (built over the rows there:
    far quicker than growing it row by row)."""
    statement = pgvector.hnsw_index(name, dimensions)
    if statement is None:
        return
    have = store._exec(
        store._sql(
            "SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = ?"
        ),
        (index_name(name),),
    ).fetchone()
    if have is not None:
        return
    rows = store._exec(
        store._sql(
            "SELECT count(*) FROM (SELECT 1 FROM embeddings WHERE collection = ? LIMIT ?) r"
        ),
        (name, hnsw_from),
    ).fetchone()
    if int(rows[0]) >= hnsw_from:
        store._ddl(statement)


__all__ = ["find_pgvector", "index_collection", "migrate_to_pgvector"]
