"""Loads of a stored conversation, for an instruction counter:
``python -m benchmarks.load_reads build DB EVENTS`` once, then
``python -m benchmarks.load_reads {elelem,bodies,eager,floor} DB AFTER``.

``build`` writes the storage benchmark's conversation (``benchmarks.storage``:
turns of 20 events of real corpus text) to a SQLite store at ``DB``.  Each
other mode reads the events with ``seq > AFTER`` from it: ``elelem`` through
``Store.load`` (bodies left to their first read), ``bodies`` the same and
then every body read, ``eager`` the rows decoded whole by ``decode_events``
(what a load did before), ``floor`` a raw ``SELECT`` of the same bytes.

Run each mode under ``valgrind --tool=callgrind`` with two values of AFTER:
the difference of the two counts divided by the difference of the events
read is the instructions per event, every per-process cost (imports, the
store's opening) cancelled, so the figure is robust to the machine's load.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

# The store's own query (sqlbase.py, ``load``), its conversation found by id.
_SELECT = (
    "SELECT data FROM events WHERE conv = (SELECT key FROM conversations WHERE id = 'bench')"
    " AND seq > ? ORDER BY seq"
)


def build(db: Path, events: int) -> None:
    """The storage benchmark's conversation, appended turn by turn to ``db``."""
    from benchmarks.storage import build_turns
    from elelem.conversation import open_store

    store = open_store(db)
    cid = store.create(title="bench", id="bench").id
    for drafts in build_turns(events):
        store.append(cid, drafts)
    store.close()


def read(mode: str, db: Path, after: int) -> int:
    """Read the events after ``after`` as ``mode`` does; how many."""
    from elelem.conversation import open_store
    from elelem.conversation.events import decode_events
    from elelem.vocabulary import ConversationId

    if mode == "floor":
        raw = sqlite3.connect(db)
        rows = raw.execute(_SELECT, (after,)).fetchall()
        return len(rows)
    if mode == "eager":
        raw = sqlite3.connect(db)
        cursor = raw.execute(_SELECT, (after,))
        built = 0
        while rows := cursor.fetchmany(256):
            built += len(decode_events(rows))
        return built
    store = open_store(db)
    loaded = store.load(ConversationId("bench"), after=after)
    if mode == "bodies":
        for event in loaded:
            event.body  # noqa: B018 - the read is the work counted
    return len(loaded)


def main(argv: list[str]) -> int:
    """``build DB EVENTS`` or ``MODE DB AFTER``."""
    mode, db, number = argv[0], Path(argv[1]), int(argv[2])
    if mode == "build":
        build(db, number)
    else:
        print(read(mode, db, number))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
