"""Loads of a stored conversation, counted in instructions:
``python -m benchmarks.load_reads instructions [EVENTS]`` (20,000 by
default) prints each mode's instructions per event and its ratio to both
floors; by hand, ``python -m benchmarks.load_reads build DB EVENTS`` once,
then ``python -m benchmarks.load_reads MODE DB AFTER``.

``build`` writes the storage benchmark's conversation (``benchmarks.storage``:
turns of 20 events of real corpus text) to a SQLite store at ``DB``, and
beside it, in a table of the same layout, every event's canonical JSON
alone (the rows an elelem before schema 6 stored).  Each other mode reads
the events with ``seq > AFTER``: ``elelem`` through ``Store.load`` (bodies
left to their first read), ``bodies`` the same and then every body read,
``eager`` the JSON rows decoded whole by ``decode_events`` (what a load did
before bodies were left undecoded), ``floor`` a raw ``SELECT`` of the rows
the store holds (packed: each event's envelope in MessagePack, then its
JSON), ``floor-json`` a raw ``SELECT`` of the JSON rows (the floor before
rows were packed).

Run each mode under ``valgrind --tool=callgrind`` with two values of AFTER:
the difference of the two counts divided by the difference of the events
read is the instructions per event, every per-process cost (imports, the
store's opening) cancelled, so the figure is robust to the machine's load.
``instructions`` does exactly that, in one callgrind process per mode: a
first read of the last turn (the imports, the store's opening, the body
decoders' making), then the reads after EVENTS/2 and after 0, each between
two calls of the mark that makes callgrind dump its count (as
:mod:`benchmarks.bulk_instructions` does), the hash seed fixed and the
collector frozen and off in every mode alike (a collection falling inside
one read and not the other moves the difference).
"""

from __future__ import annotations

import gc
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.bulk_instructions import _MARK, _mark, _totals
from benchmarks.corpus import ROOT

MODES = ("floor", "floor-json", "elelem", "bodies", "eager")
"""Every mode, the floors first: the others' ratios are to them."""

# The store's own query (sqlbase.py, ``load``), its conversation found by id.
_SELECT = (
    "SELECT data FROM {table} WHERE conv = (SELECT key FROM conversations WHERE id = 'bench')"
    " AND seq > ? ORDER BY seq"
)


def build(db: Path, events: int) -> None:
    """The storage benchmark's conversation, appended turn by turn to ``db``."""
    from benchmarks.storage import build_turns
    from elelem.conversation import open_store
    from elelem.vocabulary import ConversationId

    store = open_store(db)
    cid = store.create(title="bench", id=ConversationId("bench")).id
    for drafts in build_turns(events):
        store.append(cid, drafts)
    rows = [(1, seq, data) for seq, data in enumerate(store.load_bytes(cid), start=1)]
    store.close()
    with sqlite3.connect(db) as raw:
        raw.execute(
            "CREATE TABLE json_events (conv INTEGER NOT NULL, seq INTEGER NOT NULL,"
            " data BLOB NOT NULL, PRIMARY KEY (conv, seq)) WITHOUT ROWID"
        )
        raw.executemany("INSERT INTO json_events VALUES (?, ?, ?)", rows)


def read(mode: str, db: Path, after: int) -> int:
    """Read the events after ``after`` as ``mode`` does; how many."""
    from elelem.conversation import open_store
    from elelem.conversation.events import decode_events
    from elelem.vocabulary import ConversationId

    if mode in ("floor", "floor-json"):
        raw = sqlite3.connect(db)
        table = "events" if mode == "floor" else "json_events"
        rows = raw.execute(_SELECT.format(table=table), (after,)).fetchall()
        return len(rows)
    if mode == "eager":
        raw = sqlite3.connect(db)
        cursor = raw.execute(_SELECT.format(table="json_events"), (after,))
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


def child(mode: str, db: Path, events: int) -> None:
    """Under callgrind: a read of the last turn (every kind's first body
    decoded: the decoders are made once), then the reads after
    ``events // 2`` and after 0, each counted on its own."""
    from benchmarks.storage import TURN

    read(mode, db, events - TURN)
    gc.collect()
    gc.freeze()
    gc.disable()
    for after in (events // 2, 0):
        _mark()
        read(mode, db, after)
        _mark()


def instructions(events: int) -> dict[str, float]:
    """Instructions per event of every mode, over a conversation of
    ``events`` built afresh."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    env["PYTHONHASHSEED"] = "0"
    env["PYTHONPATH"] = str(ROOT)
    per_event = {}
    with tempfile.TemporaryDirectory(prefix="elelem-load-reads-") as tmp:
        db, out = Path(tmp) / "store.db", Path(tmp) / "cg.out"
        build(db, events)
        for mode in MODES:
            cmd = ["valgrind", "--tool=callgrind", f"--dump-before={_MARK}"]
            cmd += [f"--callgrind-out-file={out}", sys.executable, "-m", "benchmarks.load_reads"]
            cmd += ["child", mode, str(db), str(events)]
            done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"callgrind child failed:\n{done.stderr[-3000:]}")
            # Dumps 2 and 4 hold the two reads (1: what ran before the first
            # mark; 3: the loop between the reads).
            counts = _totals(out, 3)
            per_event[mode] = (counts[2] - counts[0]) / (events - events // 2)
    return per_event


def main(argv: list[str]) -> int:
    """``instructions [EVENTS]``, ``build DB EVENTS``, ``MODE DB AFTER``
    (or ``child MODE DB EVENTS``, which ``instructions`` runs)."""
    if argv[0] == "instructions":
        figures = instructions(int(argv[1]) if len(argv) > 1 else 20_000)
        floor, json = figures["floor"], figures["floor-json"]
        print(f"{'':10} {'instructions':>12} {'/ floor':>8} {'/ floor-json':>12}")
        for mode, count in figures.items():
            print(f"{mode:10} {count:12,.0f} {count / floor:7.2f}x {count / json:11.2f}x")
        return 0
    if argv[0] == "child":
        child(argv[1], Path(argv[2]), int(argv[3]))
        return 0
    mode, db, number = argv[0], Path(argv[1]), int(argv[2])
    if mode == "build":
        build(db, number)
    else:
        print(read(mode, db, number))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
