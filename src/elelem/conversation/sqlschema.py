"""The SQL schema both store backends share, in each backend's column
types (:class:`Dialect` holds the few expressions that differ), version by
version."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from elelem.conversation.fulltext import FullTextSQL

Migration = Callable[[Any], None]
"""One schema step: a function of the backend's connection."""


@dataclass(frozen=True)
class Dialect:
    """The SQL that differs between backends."""

    data: str
    """An event's bytes, from a row of ``events`` (an expression over its
    columns, unqualified: valid where ``events`` is aliased too)."""
    as_text: str
    """The event bytes as text: an expression over ``data``."""
    find: str
    """The position of ``?`` in ``{as_text}`` (0 when absent)."""
    prefix: str
    """True when an event's JSON begins with ``?`` of length ``?``:
    ``(length, bytes)`` (an event kept beside its row excepted)."""
    at_of: str
    """The ``at`` field of the event in ``data``."""
    greatest: str
    is_distinct: str
    lock_row: str
    """Appended to the query that locks a conversation row for an append."""


class SQLOps(Protocol):
    """What schema steps and searches use of a store
    (:class:`~elelem.conversation.sqlbase.SQLStore`): its statement verbs,
    named here so that those modules need not import the store."""

    dialect: Dialect
    fulltext: FullTextSQL
    _sql_updated: str
    _stored_json: str
    _kept_apart: str

    def _event_json(self, key: int, seq: int, stored: Any) -> bytes: ...

    @property
    def _lock(self) -> threading.Lock: ...

    def _exec(self, sql: str, params: Sequence[Any] = ()) -> Any: ...

    def _many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None: ...

    def _sql(self, sql: str) -> str: ...

    def _write(self, work: Callable[[], Any], what: str = "") -> Any: ...


def create_tables(store: SQLOps, *, key: str, big: str, blob: str, suffix: str = "") -> None:
    """Schema version 1 in a backend's column types: ``key`` the conversation
    key column's type, ``big`` a 64-bit integer, ``blob`` a byte string."""
    store._exec(
        f"""CREATE TABLE conversations (
            key {key} PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            title TEXT,
            model TEXT,
            turns INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            parent TEXT,
            forked_at TEXT
        )"""
    )
    store._exec(
        f"""CREATE TABLE events (
            conv {big} NOT NULL,
            seq {big} NOT NULL,
            data {blob} NOT NULL,
            PRIMARY KEY (conv, seq)
        ){suffix}"""
    )


def create_fulltext(store: SQLOps) -> None:
    """Schema version 2: the full-text index and its per-conversation watermark."""
    for statement in store.fulltext.create:
        store._exec(statement)


def create_blob_table(store: SQLOps, *, big: str, blob: str) -> None:
    """Schema version 3: the content-addressed blob table (bytes of images and
    documents, keyed by their SHA-256; events hold references)."""
    store._exec(
        f"""CREATE TABLE blobs (
            sha256 TEXT PRIMARY KEY,
            size {big} NOT NULL,
            data {blob} NOT NULL
        )"""
    )


__all__ = [
    "Dialect",
    "Migration",
    "SQLOps",
    "create_blob_table",
    "create_fulltext",
    "create_tables",
]
