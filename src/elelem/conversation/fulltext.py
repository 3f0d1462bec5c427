"""The full-text index behind ``Store.search`` (SQLite FTS5, PostgreSQL tsvector).

The index is built **at search time, not at append time**: an append stays
the one insert of canonical bytes that the storage benchmark measures, and
``search`` first brings the index up to date.  Events are append-only, so
each conversation needs only a watermark (``fts_progress``: the last ``seq``
indexed); catching up reads just the events after it.  A deleted
conversation takes its index rows with it; a fork or an import starts with
no watermark and is indexed by the next search.

A query is its words (``\\w+``, case-folded), each matched as a word
prefix, all of them required: ``quick bro`` finds "The Quick brown fox".
SQLite folds diacritics too (``unicode61 remove_diacritics 2``);
PostgreSQL's ``simple`` configuration folds case only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from elelem.conversation.events import decode_event, event_text

WORD = re.compile(r"\w+")
MAX_WORDS = 32
"""Words of a query past this many are ignored (a query is typed, not pasted)."""


def query_words(text: str) -> list[str]:
    """The words a query matches on, case-folded, at most :data:`MAX_WORDS`."""
    return WORD.findall(text.casefold())[:MAX_WORDS]


@dataclass(frozen=True)
class FullTextSQL:
    """One backend's index statements (``?`` placeholders)."""

    create: tuple[str, ...]
    """The index's tables, created by the schema migration."""
    insert: str
    """Insert one indexed text: parameters from :meth:`row`."""
    delete: str
    """Delete a conversation's rows: parameters from :meth:`delete_params`."""
    match: str
    """Select ``(conv, seq)`` of the events matching :meth:`query`'s parameter."""
    rowid: bool
    """True when rows are keyed by one rowid (``conv << 32 | seq``, SQLite's FTS5)."""
    nul_free: bool
    """True when indexed text must hold no NUL (PostgreSQL text)."""

    def row(self, conv: int, seq: int, text: str) -> tuple[Any, ...]:
        """The insert parameters for one event's text."""
        if self.nul_free:
            text = text.replace("\x00", " ")
        return ((conv << 32) | seq, text) if self.rowid else (conv, seq, text)

    def delete_params(self, conv: int) -> tuple[int, ...]:
        """The delete parameters for conversation key ``conv``."""
        return (conv << 32, (conv << 32) | 0xFFFFFFFF) if self.rowid else (conv,)

    def query(self, words: Sequence[str]) -> str:
        """The backend's query string for ``words`` (every word, as a prefix)."""
        if self.rowid:
            return " ".join('"' + w.replace('"', '""') + '"*' for w in words)
        return " & ".join(f"{w}:*" for w in words)


SQLITE_FULLTEXT = FullTextSQL(
    create=(
        "CREATE VIRTUAL TABLE event_fts USING fts5(text, tokenize = 'unicode61 remove_diacritics 2')",
        "CREATE TABLE fts_progress (conv INTEGER PRIMARY KEY, seq INTEGER NOT NULL)",
    ),
    insert="INSERT INTO event_fts (rowid, text) VALUES (?, ?)",
    delete="DELETE FROM event_fts WHERE rowid BETWEEN ? AND ?",
    match="SELECT rowid >> 32, rowid & 4294967295 FROM event_fts WHERE event_fts MATCH ?",
    rowid=True,
    nul_free=False,
)

POSTGRES_FULLTEXT = FullTextSQL(
    create=(
        "CREATE TABLE event_fts (conv BIGINT NOT NULL, seq BIGINT NOT NULL,"
        " tsv tsvector NOT NULL, PRIMARY KEY (conv, seq))",
        "CREATE INDEX event_fts_tsv ON event_fts USING GIN (tsv)",
        "CREATE TABLE fts_progress (conv BIGINT PRIMARY KEY, seq BIGINT NOT NULL)",
    ),
    insert="INSERT INTO event_fts (conv, seq, tsv) VALUES (?, ?, to_tsvector('simple', ?))",
    delete="DELETE FROM event_fts WHERE conv = ?",
    match="SELECT conv, seq FROM event_fts WHERE tsv @@ to_tsquery('simple', ?)",
    rowid=False,
    nul_free=True,
)

STALE = (
    "SELECT c.key, coalesce(p.seq, 0) FROM conversations c"
    " LEFT JOIN fts_progress p ON p.conv = c.key"
    " WHERE coalesce((SELECT max(seq) FROM events WHERE conv = c.key), 0) > coalesce(p.seq, 0)"
)
"""Conversations with events the index has not seen, and their watermark."""

INDEXED = "SELECT (SELECT count(*) FROM events), (SELECT coalesce(sum(seq), 0) FROM fts_progress)"
"""How many events there are, and how many the watermarks say are indexed."""

PROGRESS = (
    "INSERT INTO fts_progress (conv, seq) VALUES (?, ?)"
    " ON CONFLICT (conv) DO UPDATE SET seq = excluded.seq"
)


def index_rows(
    sql: FullTextSQL, conv: int, rows: Iterable[Sequence[Any]]
) -> tuple[list[tuple[Any, ...]], int]:
    """The insert parameters for the ``(seq, data)`` rows of one conversation
    that hold text, and the highest seq seen."""
    out = []
    last = 0
    for seq, data in rows:
        last = max(last, int(seq))
        event = decode_event(bytes(data))
        text = event_text(event.kind, event.body)
        if text:
            out.append(sql.row(conv, int(seq), text))
    return out, last


__all__ = [
    "INDEXED",
    "MAX_WORDS",
    "POSTGRES_FULLTEXT",
    "PROGRESS",
    "SQLITE_FULLTEXT",
    "STALE",
    "WORD",
    "FullTextSQL",
    "index_rows",
    "query_words",
]
