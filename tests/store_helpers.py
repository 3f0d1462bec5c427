"""A SQLite store as an earlier elelem wrote it, for the migration tests."""

from __future__ import annotations

import pytest

from elelem.conversation import sqlite as sqlite_module
from elelem.conversation.sqlbase import SQLStore
from elelem.conversation.sqlite import MIGRATIONS, SQLiteStore

PACKED_SINCE = 6
"""The schema version whose rows are packed (``conversation/loaded.py``)."""

BIG_BODIES_SINCE = 5
"""The schema version keeping big events beside their rows."""


def _json_rows(store: SQLiteStore, rows: list[tuple[int, int, bytes]]) -> None:
    # Version 5's insert: every row its event's JSON, a big one beside it.
    for key, seq, data in rows:
        if len(data) < sqlite_module.BIG_EVENT:
            store._exec(store._sql_insert, (key, seq, data))
        else:
            store._exec(store._sql_insert, (key, seq, b""))
            store._write_body(key, seq, data)
    rows.clear()


def write_as_version(monkeypatch: pytest.MonkeyPatch, version: int) -> None:
    """Until ``monkeypatch.undo()``, a new :class:`SQLiteStore` migrates to
    ``version`` only and writes events as the elelem of that version did:
    every row its event's JSON before version 6, every event bound into its
    row before version 5."""
    monkeypatch.setattr(sqlite_module, "MIGRATIONS", MIGRATIONS[:version])
    if version < PACKED_SINCE:
        monkeypatch.setattr(SQLiteStore, "_event_columns", "data")
        monkeypatch.setattr(SQLiteStore, "_stored_json", "data")
        monkeypatch.setattr(SQLiteStore, "_row", SQLStore._row)
        old = sqlite_module.SQLITE
        data = old.data.replace("substr(data, head + 1)", "data")
        monkeypatch.setattr(
            SQLiteStore,
            "dialect",
            type(old)(**{k: str(v).replace(old.data, data) for k, v in vars(old).items()}),
        )
        monkeypatch.setattr(SQLiteStore, "_insert_events", _json_rows)
    if version < BIG_BODIES_SINCE:
        monkeypatch.setattr(SQLiteStore, "_insert_events", SQLStore._insert_events)
