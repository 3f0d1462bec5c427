"""The PostgreSQL store, for deployments that outgrow one machine.

The same tables and statements as SQLite (:mod:`elelem.conversation.sqlbase`)
in a schema of their own (``elelem`` by default) so they can share a
database.  Appends to one conversation serialize on its row (``SELECT … FOR
UPDATE``); appends to different conversations run in parallel.  Migrations
run under a transaction-scoped advisory lock, so several processes may open a
fresh database at once.

Needs the ``postgres`` extra (``psycopg``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from elelem.conversation.errors import StoreError
from elelem.conversation.files import create_file_table
from elelem.conversation.fulltext import POSTGRES_FULLTEXT
from elelem.conversation.sqlbase import SQLStore
from elelem.conversation.sqlschema import (
    Dialect,
    Migration,
    create_blob_table,
    create_fulltext,
    create_tables,
)
from elelem.conversation.store import Clock, utc_now
from elelem.errors import install_line
from elelem.vocabulary import EventId

_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_MIGRATION_LOCK = 0x656C656C656D  # "elelem": one advisory lock for schema changes


def _v1(store: PostgresStore) -> None:
    create_tables(store, key="BIGSERIAL", big="BIGINT", blob="BYTEA")


def _v3(store: PostgresStore) -> None:
    create_blob_table(store, big="BIGINT", blob="BYTEA")


MIGRATIONS: tuple[Migration, ...] = (_v1, create_fulltext, _v3, create_file_table)
"""Schema migrations, oldest first (see :data:`elelem.conversation.sqlite.MIGRATIONS`)."""

POSTGRES = Dialect(
    data="data",
    as_text="convert_from(data, 'UTF8')",
    find="strpos(lower({as_text}), lower(CAST(? AS TEXT)))",
    prefix="substring(data from 1 for ?) = ?",
    # Not ::json: PostgreSQL's JSON cannot hold \u0000, which a body may.
    # The first "at":" of canonical bytes is the field (inside a string
    # the quotes would be escaped).
    at_of="""substring(convert_from(data, 'UTF8') from '"at":"([^"]*)"')""",
    greatest="greatest",
    is_distinct="IS DISTINCT FROM",
    lock_row=" FOR UPDATE",
)


def redact(url: str) -> str:
    """``url`` without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    user = f"{parts.username}:***@" if parts.username else ""
    return urlunsplit(parts._replace(netloc=user + host))


_UNESCAPE = re.compile(r"\\(0|\\)")


class PostgresStore(SQLStore):
    """A :class:`~elelem.conversation.store.Store` in a PostgreSQL database."""

    dialect = POSTGRES
    fulltext = POSTGRES_FULLTEXT

    def __init__(
        self,
        url: str,
        *,
        schema: str = "elelem",
        clock: Clock = utc_now,
        ids: Callable[[], EventId] | None = None,
    ) -> None:
        try:
            import psycopg
        except ImportError as exc:
            raise StoreError(
                f"the PostgreSQL store needs psycopg: {install_line('postgres')}"
            ) from exc
        if not _SCHEMA_NAME.match(schema):
            raise StoreError(f"invalid PostgreSQL schema name {schema!r}")
        self.db_errors = (psycopg.Error,)
        self.integrity_errors = (psycopg.errors.UniqueViolation,)
        super().__init__(clock=clock, ids=ids)
        self.url = url
        self.where = redact(url)
        self.schema = schema
        try:
            self._conn = psycopg.connect(url, autocommit=True, options=f"-c search_path={schema}")
        except psycopg.Error as exc:
            # psycopg's message names host and user, never the password.
            raise StoreError(f"cannot open PostgreSQL store {self.where}: {exc}") from None
        self._migrate()

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s")

    def _writer_lock(self, conversation: str) -> tuple[Callable[[], bool], Callable[[], None]]:
        # A session advisory lock: held by this connection, released by the
        # server if the connection dies.
        key = f"elelem.writer:{self.schema}:{conversation}"

        def try_lock() -> bool:
            with self._lock:
                row = self._conn.execute(
                    "SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (key,)
                ).fetchone()
            return bool(row and row[0])

        def unlock() -> None:
            with self._lock:
                self._conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (key,))

        return try_lock, unlock

    # PostgreSQL text cannot hold NUL, but a title is anyone's text and a model
    # name comes from the provider's response: both are stored escaped
    # (backslash doubled, NUL as backslash-0) so every string round-trips.
    def _text_in(self, value: str | None) -> str | None:
        if value is None or ("\\" not in value and "\x00" not in value):
            return value
        return value.replace("\\", "\\\\").replace("\x00", "\\0")

    def _text_out(self, value: str | None) -> str | None:
        if value is None or "\\" not in value:
            return value
        return _UNESCAPE.sub(lambda m: "\x00" if m.group(1) == "0" else "\\", value)

    def _exec(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self._conn.execute(sql.replace("?", "%s") if "?" in sql else sql, params)

    def _ddl(self, statement: str) -> None:
        """Run ``statement`` as written, with no parameters: a ``?`` or ``%``
        in a quoted literal of it (a partial index's predicate) is text."""
        self._conn.execute(statement)

    def _send_as(self, kind: type[bytes], type_name: str) -> None:
        """Send parameters of ``kind`` (bytes already in the binary form of
        the SQL type ``type_name``) as that type, in binary."""
        from psycopg.adapt import Dumper
        from psycopg.pq import Format

        row = self._conn.execute("SELECT to_regtype(%s)::oid", (type_name,)).fetchone()
        if row is None or row[0] is None:
            raise StoreError(f"{self.where} has no type {type_name}")
        type_oid = int(row[0])

        class Binary(Dumper):
            format = Format.BINARY
            oid = type_oid

            def dump(self, obj: Any) -> bytes:
                return bytes(obj)

        self._conn.adapters.register_dumper(kind, Binary)

    def _many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with self._conn.cursor() as cur:
            cur.executemany(self._sql(sql), rows)

    def _begin(self) -> None:
        self._conn.execute("BEGIN")

    def _end(self, commit: bool) -> None:
        self._conn.execute("COMMIT" if commit else "ROLLBACK")

    def _prepare_schema(self) -> None:
        # Held to the end of the migration's transaction: concurrent openers
        # of a fresh database migrate one after the other.
        self._exec("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        self._exec(f"CREATE SCHEMA IF NOT EXISTS {self.schema}")

    def _migrations(self) -> Sequence[Migration]:
        return MIGRATIONS

    def _close(self) -> None:
        self._conn.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self.where!r}, schema={self.schema!r})"


__all__ = ["MIGRATIONS", "POSTGRES", "PostgresStore", "redact"]
