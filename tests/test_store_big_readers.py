"""SQLite's rarer readers of a big event (1 MiB or more, kept beside its
row in ``event_bodies``) read it through incremental blob I/O as a load does,
never through SQL that makes SQLite hold its own whole copy (issue #41):
the full-text index's catch-up, a search without words, a fork, the blob
sweep; and an import writes a big event in pieces, never bound.

Memory SQLite holds is invisible to ``tracemalloc``, so each operation runs
in a fresh interpreter on a store built before it, counting the growth of
the peak resident size (``ru_maxrss``) over what the opened store held.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BUILD = """
import json, sys
from elelem.conversation import Draft, MessageBody, SQLiteStore
from elelem.vocabulary import ReasoningBlock, TextBlock

path, size = sys.argv[1], int(sys.argv[2])
store = SQLiteStore(path)
conversation = store.create(title="big", id="c-big").id
events = store.append(conversation, [
    Draft("message", MessageBody("user", (TextBlock("findme zebra"),), "user"), 1),
    Draft("message", MessageBody("assistant", (ReasoningBlock("thought " * (size // 8)),)), 1, 1),
    Draft("message", MessageBody("assistant", (TextBlock("after it"),)), 1, 1),
])
store.close()
print(json.dumps([e.id for e in events]))
"""

OPERATE = """
import json, resource, sys
from elelem.conversation import SQLiteStore

path, operation, big = sys.argv[1], sys.argv[2], sys.argv[3]
store = SQLiteStore(path)
conversation = "c-big"
if operation == "import":
    info, data = store.info(conversation), store.load_bytes(conversation)
    store.delete(conversation)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if operation == "index":
    result = [h.seq for h in store.search("findme")]
elif operation == "scan":
    result = [h.seq for h in store.search("+++")]
elif operation == "fork":
    result = [store.fork(conversation, big).events]
elif operation == "prune":
    result = list(store.prune_blobs())
else:
    stored = store.import_events(info, data)
    result = [stored.events]
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"grew": (after - before) * 1024, "result": result}))
"""


def _grew(tmp_path: Path, operation: str, size: int) -> tuple[int, object]:
    path = tmp_path / "store.db"
    env = {"PATH": "/usr/bin:/bin"}
    built = subprocess.run(
        [sys.executable, "-c", BUILD, str(path), str(size)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    big = json.loads(built.stdout)[1]
    done = subprocess.run(
        [sys.executable, "-c", OPERATE, str(path), operation, big],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env=env,
    )
    out = json.loads(done.stdout)
    return int(out["grew"]), out["result"]


SIZE = 24 * 1024 * 1024


@pytest.mark.parametrize(
    ("operation", "result", "limit"),
    [
        # Its bytes read apart, and its text decoded (the index and the scan
        # read every event's text); before, SQLite's copies beside them:
        # 2.98x and 3.98x.
        ("index", [1], 2.3),
        ("scan", [], 2.3),
        # Its bytes alone: a fork reads envelopes and copies bodies in
        # pieces, the sweep decodes only an event holding a blob reference;
        # before, 4.03x and 2.98x.
        ("fork", [2], 1.3),
        ("prune", [0, 0], 1.3),
        # The given bytes (held before) decoded once to be checked, written
        # in pieces; before, bound: SQLite's two copies beside them, 3.0x.
        ("import", [3], 1.3),
    ],
)
def test_a_reader_holds_no_copy_of_a_big_event_inside_sqlite(
    tmp_path: Path, operation: str, result: object, limit: float
) -> None:
    grew, got = _grew(tmp_path, operation, SIZE)
    assert got == result
    assert grew < limit * SIZE, (operation, grew / SIZE)
