"""Storage benchmark child: ``python -m benchmarks.storage`` with a JSON job on stdin.

One run, in a fresh process, of:

- **append**: a conversation of ``events`` events (default 100,000) appended
  to elelem's SQLite store one turn of 20 events per call, i.e. one commit
  per turn; the floor inserts the very bytes elelem stored, turn by turn,
  with raw ``sqlite3`` into the same table layout under the same pragmas;
- **load**: the whole conversation read back through a freshly opened store
  (decoded into events), against a raw ``SELECT`` of the same bytes; and, for
  reference, the same rows decoded without elelem (``benchmarks.plain_events``:
  msgspec into plain structs, the bound of any typed loader of this stored
  form; msgspec and ``json`` into dicts).

The load leaves bodies undecoded (``conversation/loaded.py``); what reading
every body afterwards costs, and the eager decoding a load did before, are
reported beside it.  CPU time of the process is measured (wall time is reported too), and the
append cost per event of the first and the last tenth of the conversation,
to show whether appends stay flat.  Turn drafts are built before the clock
starts: building them is the caller's work.  Output: one JSON object.
"""

from __future__ import annotations

import importlib
import json
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.corpus import text_deltas
from benchmarks.plain_events import LOADERS, load_packed, packed

TURN = 20


def _clock() -> tuple[float, float]:
    return time.process_time(), time.perf_counter()


def _since(start: tuple[float, float]) -> tuple[float, float]:
    cpu, wall = _clock()
    return cpu - start[0], wall - start[1]


def build_turns(events: int) -> list[list[Any]]:
    """Turns of 20 drafts (turn start, user text, a web search's two
    transitions, 15 assistant text blocks of real recorded text, the response
    record) adding up to ``events``."""
    conv = importlib.import_module("elelem.conversation")
    vocab = importlib.import_module("elelem.vocabulary")
    deltas = text_deltas("anthropic_messages")
    provider, model = vocab.ProviderId("anthropic"), "claude-sonnet-4-5"
    pos = 0

    def text(n: int) -> str:
        nonlocal pos
        out = "".join(deltas[(pos + i) % len(deltas)] for i in range(n))
        pos += n
        return out

    turns = []
    for t in range(1, events // TURN + 1):
        act = vocab.ActivityId(f"srvtoolu_{t:08d}")
        payload = vocab.ProviderPayload(
            provider="anthropic",
            format="server_tool_use",
            version="web_search_20250305",
            value={"id": act, "name": "web_search", "input": {"query": text(3)}},
        )
        drafts = [
            conv.Draft.of(conv.TurnStart("user", f"anthropic:{model}"), turn=t),
            conv.Draft.of(conv.MessageBody("user", (vocab.TextBlock(text(4)),), "user"), turn=t),
            conv.Draft.of(
                conv.HostedBody(
                    vocab.HostedActivity(act, "web_search", "started", {"query": text(2)}),
                    provider,
                    model,
                ),
                turn=t,
                response=1,
            ),
            conv.Draft.of(
                conv.HostedBody(
                    vocab.HostedActivity(
                        act, "web_search", "completed", None, "5 results", payload
                    ),
                    provider,
                    model,
                ),
                turn=t,
                response=1,
            ),
        ]
        drafts += [
            conv.Draft.of(
                conv.MessageBody("assistant", (vocab.TextBlock(text(8)),), "", provider, model),
                turn=t,
                response=1,
            )
            for _ in range(TURN - 5)
        ]
        usage = vocab.Usage(input=1200, output=640, hosted={"web_search": 1})
        drafts.append(
            conv.Draft.of(
                conv.ResponseRecord(provider, model, f"msg_{t:08d}", finish="stop", usage=usage),
                turn=t,
                response=1,
            )
        )
        turns.append(drafts)
    return turns


_SCHEMA = (
    "CREATE TABLE events (conv INTEGER NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL,"
    " PRIMARY KEY (conv, seq)) WITHOUT ROWID"
)


def _raw_db(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    return db


def floor_append(path: Path, turns: list[list[bytes]]) -> tuple[tuple[float, float], list[float]]:
    """Raw sqlite3: one transaction per turn inserting already-encoded bytes."""
    db = _raw_db(path)
    db.execute(_SCHEMA)
    tenths = _tenths(len(turns))
    marks: list[float] = []
    seq = 0
    start = _clock()
    for i, turn in enumerate(turns):
        if i in tenths:
            marks.append(time.process_time())
        db.execute("BEGIN IMMEDIATE")
        rows = []
        for data in turn:
            seq += 1
            rows.append((1, seq, data))
        db.executemany("INSERT INTO events (conv, seq, data) VALUES (?, ?, ?)", rows)
        db.execute("COMMIT")
    took = _since(start)
    marks.append(time.process_time())
    db.close()
    return took, marks


def floor_load(path: Path) -> tuple[tuple[float, float], int]:
    """Raw sqlite3: SELECT every event's bytes of the conversation, in order."""
    db = _raw_db(path)
    start = _clock()
    rows = db.execute("SELECT data FROM events WHERE conv = ? ORDER BY seq", (1,)).fetchall()
    took = _since(start)
    db.close()
    return took, len(rows)


def eager_load(path: Path, events: int) -> float:
    """CPU seconds of the eager decoding a load did before bodies were left
    to their first read (``decode_events`` over the same rows and batches)."""
    module = importlib.import_module("elelem.conversation.events")
    db = _raw_db(path)
    start = _clock()
    cursor = db.execute("SELECT data FROM events WHERE conv = ? ORDER BY seq", (1,))
    built = 0
    while rows := cursor.fetchmany(256):
        built += len(module.decode_events(rows))
    took = _since(start)[0]
    db.close()
    if built != events:
        raise RuntimeError(f"eager decoding built {built} events of {events}")
    return took


def reference_loads(path: Path, events: int, packed_path: Path) -> dict[str, float]:
    """CPU seconds of each reference loader reading the raw store's rows; and
    of the same events re-stored as array-shaped MessagePack (``packed_path``)
    read raw and decoded, each against its own raw ``SELECT``."""
    out = {}
    for name, load in LOADERS.items():
        db = _raw_db(path)
        start = _clock()
        built = load(db)
        out[f"ref_{name}_cpu_s"] = _since(start)[0]
        db.close()
        if built != events:
            raise RuntimeError(f"reference loader {name} built {built} events of {events}")
    db = _raw_db(path)
    rows = [packed(r[0]) for r in db.execute("SELECT data FROM events ORDER BY seq")]
    db.close()
    floor_append(packed_path, [rows[i : i + TURN] for i in range(0, len(rows), TURN)])
    del rows
    out["ref_msgpack_arrays_floor_cpu_s"] = floor_load(packed_path)[0][0]
    db = _raw_db(packed_path)
    start = _clock()
    built = load_packed(db)
    out["ref_msgpack_arrays_cpu_s"] = _since(start)[0]
    db.close()
    if built != events:
        raise RuntimeError(f"packed loader built {built} events of {events}")
    return out


def _tenths(n: int) -> set[int]:
    return {0, n // 10, n - n // 10} if n >= 10 else {0}


def _per_event(seconds: float, events: int) -> float:
    return round(seconds / events * 1e6, 3)


def run(events: int, workdir: Path) -> dict[str, Any]:
    """One run of both storage benchmarks; returns the figures."""
    conv = importlib.import_module("elelem.conversation")
    turns = build_turns(events)
    n = sum(len(t) for t in turns)
    ours, raw = workdir / "elelem.db", workdir / "raw.db"

    store = conv.open_store(ours)
    cid = store.create(title="bench").id
    tenths, marks = _tenths(len(turns)), []
    start = _clock()
    for i, drafts in enumerate(turns):
        if i in tenths:
            marks.append(time.process_time())
        store.append(cid, drafts)
    append = _since(start)
    marks.append(time.process_time())
    stored = store.load_bytes(cid)
    store.close()
    tenth = max(1, len(turns) // 10) * TURN
    del turns

    encoded, k = [], 0
    for _ in range(len(stored) // TURN):
        encoded.append(stored[k : k + TURN])
        k += TURN
    floor, floor_marks = floor_append(raw, encoded)

    store = conv.open_store(ours)
    start = _clock()
    loaded = store.load(cid)
    load = _since(start)
    store.close()
    if len(loaded) != n:
        raise RuntimeError(f"store loaded {len(loaded)} events, appended {n}")
    # Bodies are decoded on first read: what reading every one of them costs
    # after the load, against decoding every event eagerly from the rows.
    start = _clock()
    for event in loaded:
        event.body  # noqa: B018 - the read is the work measured
    read_bodies = _since(start)
    del loaded
    eager = eager_load(raw, n)  # the JSON rows: the store holds them packed
    floor_read, floor_rows = floor_load(raw)
    if floor_rows != n:
        raise RuntimeError(f"raw SELECT read {floor_rows} rows, inserted {n}")
    references = reference_loads(raw, n, workdir / "packed.db")

    return {
        "events": n,
        "append_cpu_s": append[0],
        "append_wall_s": append[1],
        "floor_append_cpu_s": floor[0],
        "floor_append_wall_s": floor[1],
        "load_cpu_s": load[0],
        "load_wall_s": load[1],
        "floor_load_cpu_s": floor_read[0],
        "ref_load_then_every_body_cpu_s": load[0] + read_bodies[0],
        "ref_eager_decode_cpu_s": eager,
        "floor_load_wall_s": floor_read[1],
        "append_first_tenth_us": _per_event(marks[1] - marks[0], tenth),
        "append_last_tenth_us": _per_event(marks[-1] - marks[-2], tenth),
        "floor_append_first_tenth_us": _per_event(floor_marks[1] - floor_marks[0], tenth),
        "floor_append_last_tenth_us": _per_event(floor_marks[-1] - floor_marks[-2], tenth),
        "bytes": sum(len(b) for b in stored),
        **references,
    }


def main() -> None:
    """Read ``{"events": N}`` from stdin; print one JSON object."""
    job = json.load(sys.stdin)
    try:
        conv = importlib.import_module("elelem.conversation")
        if not hasattr(conv, "open_store"):
            raise ImportError("elelem.conversation.open_store is not built yet")
    except ImportError as exc:
        print(json.dumps({"status": f"not available: {exc}"}))
        return
    with tempfile.TemporaryDirectory(prefix="elelem-bench-store-") as tmp:
        try:
            out = {"status": "ok", **run(int(job["events"]), Path(tmp))}
        except Exception as exc:  # noqa: BLE001 - reported in the table, never a crash
            out = {"status": f"failed: {type(exc).__name__}: {str(exc)[:200]}"}
    print(json.dumps(out), flush=True)
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
