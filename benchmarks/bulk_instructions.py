"""Instructions per event of the per-provider table in bulk, counted by callgrind:
``python -m benchmarks.bulk_instructions [--clients sync,floor] [--src DIR] [--json OUT]``.

Wall and CPU time on a shared machine move with its load; instruction
counts do not.  For every row of :mod:`benchmarks.providers` (each provider's
own recorded chunks, as recorded and ``+unknown``) one client instance reads,
from the loopback server, a warm-up stream, then the row's stream of
``--small`` text deltas, then the one of ``--large``, each body in one write
(``bulk``).  The child runs under ``valgrind --tool=callgrind``; it calls
``os.sched_get_priority_min`` (which nothing else calls) right before and
after each measured request, and callgrind's ``--dump-before`` writes the
count since the last call at each, so every request is counted on its own
in one process.  A row's figure is

    (count(large request) − count(small request)) / (events(large) − events(small))

where the two requests differ only in their number of text deltas:
per-process and per-request costs cancel.  Before each measured request
the heap is frozen (:mod:`benchmarks.heap`), for both clients alike, so the
collector's timing does not move the count.  The hash seed is fixed
(``PYTHONHASHSEED=0``): between seeds the same code reads a few percent
apart.  ``sync`` is elelem's ``SyncClient.stream().final()``, ``floor`` the
parsing floor on httpx2's blocking client (line split, ``orjson.loads``,
text extraction), as in :mod:`benchmarks.clients`; every request must
assemble the row's text.

``--src DIR`` measures another tree's ``elelem`` (its ``src`` first on
``PYTHONPATH``) with this tree's harness; ``--before JSON`` (a previous
``--json``) adds its ``sync`` column as "before".  One process per client
reads every row: about 10 minutes of one core for both clients here.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.corpus import ROOT, corpus_root
from benchmarks.heap import frozen_heap
from benchmarks.providers import ProviderStream, _key, build, recordings

_MARK = "sched_get_priority_min"
"""The C function whose call makes callgrind dump its count (``--dump-before``)."""

_RUNNERS = {"sync": "elelem_sync", "floor": "floor"}


def _mark() -> None:
    os.sched_get_priority_min(0)


def _rows(only: frozenset[str]) -> list[tuple[str, str, bool]]:
    """(provider, shape, probe) of every row, in the provider table's order."""
    return [
        (rec.provider, rec.shape, probe)
        for rec in recordings(corpus_root())
        if not only or rec.provider in only
        for probe in (False, True)
    ]


def child(clients: list[str], small: int, large: int, only: frozenset[str], labels: Path) -> None:
    """Under callgrind: every row's warm-up, small and large request per client,
    with a mark around each measured one; the labels of the segments between
    marks, in order, go to ``labels``."""
    import asyncio

    from benchmarks.clients import CLIENTS, call
    from benchmarks.run import start_server

    streams: dict[str, ProviderStream] = {}
    plan = []
    for rec in recordings(corpus_root()):
        if only and rec.provider not in only:
            continue
        for probe in (False, True):
            built = [build(rec, n, probe=probe) for n in (40, small, large)]
            for s in built:
                streams[_key(s)] = s
            plan += [(rec, probe, built, client) for client in clients]
    # One entry per dump after the first: what ran since the previous mark
    # (None: a warm-up and the client's set-up, not counted).
    written: list[dict[str, Any] | None] = []
    loop = asyncio.new_event_loop()
    with tempfile.TemporaryDirectory(prefix="elelem-bulk-instr-") as tmp:
        proc, port = start_server(Path(tmp) / "s.pickle", {k: s.events for k, s in streams.items()})
        try:
            _mark()
            for nonce, (rec, probe, built, client) in enumerate(plan):
                keys = ",".join(_key(s) for s in built)
                url = f"http://127.0.0.1:{port}/s/bi{nonce}/{keys}/bulk"
                runner = CLIENTS[_RUNNERS[client]].prepare(rec.shape, url)
                for s in built:
                    measured = s is not built[0]
                    # Frozen and thawed outside the marks: not counted.
                    with frozen_heap() if measured else contextlib.nullcontext():
                        if measured:
                            _mark()
                            written.append(None)
                        text = call(runner, loop)
                        if measured:
                            _mark()
                            written.append(
                                {
                                    "provider": rec.provider,
                                    "shape": rec.shape,
                                    "probe": probe,
                                    "client": client,
                                    "deltas": s.deltas,
                                    "events": len(s.events),
                                }
                            )
                    if text != s.text:
                        raise AssertionError(f"{client} did not assemble the text of {_key(s)}")
        finally:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(10)
    labels.write_text(json.dumps(written), encoding="utf-8")
    sys.stdout.flush()
    os._exit(0)  # SyncClient's loop thread: the counts are out


def _totals(out: Path, parts: int) -> list[int]:
    """The count of each of the ``parts`` dumps after the first (which holds
    what ran before the first mark)."""
    counts = []
    for n in range(2, parts + 2):
        for line in Path(f"{out}.{n}").read_text(encoding="utf-8").splitlines():
            if line.startswith("totals:") or line.startswith("summary:"):
                counts.append(int(line.split()[1]))
                break
    return counts


def measure(
    client: str, small: int, large: int, only: frozenset[str], src: Path | None
) -> dict[str, float]:
    """Instructions per event of every row for ``client``, one callgrind process."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("ELELEM_") or k == "ELELEM_CORPUS"  # the user's, but the corpus
    }
    env["PYTHONHASHSEED"] = "0"
    path = [str(src)] if src else []
    env["PYTHONPATH"] = os.pathsep.join([*path, str(ROOT)])
    with tempfile.TemporaryDirectory(prefix="elelem-callgrind-") as tmp:
        out, labels = Path(tmp) / "cg.out", Path(tmp) / "labels.json"
        cmd = [
            "valgrind",
            "--tool=callgrind",
            f"--dump-before={_MARK}",
            f"--callgrind-out-file={out}",
            sys.executable,
            "-m",
            "benchmarks.bulk_instructions",
            "--child",
            "--clients",
            client,
            "--small",
            str(small),
            "--large",
            str(large),
            "--providers",
            ",".join(sorted(only)),
            "--labels",
            str(labels),
        ]
        done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0 or not labels.exists():
            raise RuntimeError(f"callgrind child failed:\n{done.stderr[-3000:]}")
        segments = json.loads(labels.read_text(encoding="utf-8"))
        counts = _totals(out, len(segments))
    return figures(segments, counts, small, large)


def figures(
    segments: list[dict[str, Any] | None], counts: list[int], small: int, large: int
) -> dict[str, float]:
    """Each row's instructions per event from the counted ``segments`` (the
    child's labels, None for what was not measured) and their ``counts``:
    the large request's count less the small one's, over their events'."""
    per_row: dict[str, dict[int, tuple[int, int]]] = {}
    for seg, count in zip(segments, counts, strict=True):
        if seg is None:
            continue
        name = seg["provider"] + (" +unknown" if seg["probe"] else "") + f" | {seg['shape']}"
        per_row.setdefault(name, {})[seg["deltas"]] = (count, seg["events"])
    result = {}
    for name, sizes in per_row.items():
        (c_small, e_small), (c_large, e_large) = sizes[small], sizes[large]
        result[name] = (c_large - c_small) / (e_large - e_small)
    return result


def render(figures: dict[str, dict[str, float]], before: dict[str, float] | None) -> str:
    """The Markdown table: provider, shape, (before,) sync, floor, ratio."""
    sync, floor = figures.get("sync", {}), figures.get("floor", {})
    head = ["provider", "shape"] + (["before"] if before is not None else [])
    head += ["SyncClient", "floor", "ratio to floor"]
    lines = ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (len(head) - 2)]
    for name in sync or floor:
        provider, shape = name.split(" | ")
        cells = [provider, shape]
        if before is not None:
            cells.append(f"{before[name]:,.0f}" if name in before else "n/a")
        mine, base = sync.get(name), floor.get(name)
        cells.append(f"{mine:,.0f}" if mine is not None else "n/a")
        cells.append(f"{base:,.0f}" if base is not None else "n/a")
        cells.append(f"{mine / base:.2f}x" if mine and base else "n/a")
        lines.append("| " + " | ".join(cells) + " |")
    if sync and floor:
        ratios = [sync[n] / floor[n] for n in sync if n in floor]
        lines.append(f"\nmedian ratio {statistics.median(ratios):.2f}x over {len(ratios)} rows")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Count, print the table, and write ``--json``."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.bulk_instructions", description=__doc__)
    p.add_argument("--clients", default="sync,floor", help="sync, floor or both")
    p.add_argument("--small", type=int, default=1000)
    p.add_argument("--large", type=int, default=3000)
    p.add_argument("--providers", default="", help="comma-separated providers (default: all)")
    p.add_argument("--src", type=Path, help="another tree's src directory to measure")
    p.add_argument("--json", type=Path, help="write the figures here")
    p.add_argument("--before", type=Path, help="a previous --json: its sync column as before")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--labels", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    only = frozenset(x for x in args.providers.split(",") if x)
    clients = [c for c in args.clients.split(",") if c]
    if args.child:
        child(clients, args.small, args.large, only, args.labels)
        return 0
    figures = {c: measure(c, args.small, args.large, only, args.src) for c in clients}
    before = None
    if args.before:
        before = json.loads(args.before.read_text(encoding="utf-8")).get("sync", {})
    print(render(figures, before))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
