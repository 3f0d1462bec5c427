"""A provider row's stream in bulk, for an instruction counter:
``python -m benchmarks.bulk_reads PROVIDER {sync,async,floor} REPS``.

As ``benchmarks.one_event_reads`` does for one event per read, one real
loopback request is made (the row's short stream: request, headers and
connection are real), then the shell's iterator of body pieces is the
row's long stream (``--events`` text deltas of the provider's own chunks)
cut into pieces of ``--piece`` bytes (64 KiB: a bulk body read as the
socket hands it over), so what is counted per event does not depend on how
the machine's load happened to cut the reads.  ``floor`` runs the parsing
floor (line split, ``orjson.loads``, the text picked) on the same pieces.
Each request is checked to assemble the row's text.

Run it under ``valgrind --tool=callgrind`` with REPS 1 and 3: the
difference divided by ``2 * events`` is the instructions per event, every
per-process and per-request cost cancelled.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from benchmarks import one_event_reads
from benchmarks.corpus import corpus_root
from benchmarks.providers import build, recordings


def main(argv: list[str] | None = None) -> int:
    """Run REPS requests of bulk reads with the chosen client."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("provider")
    ap.add_argument("client", choices=("sync", "async", "floor"))
    ap.add_argument("reps", type=int)
    ap.add_argument("--events", type=int, default=4000)
    ap.add_argument("--piece", type=int, default=65536)
    args = ap.parse_args(argv)
    rec = next(r for r in recordings(corpus_root()) if r.provider == args.provider)
    long = build(rec, args.events)
    body = b"".join(long.events)
    pieces = tuple(body[i : i + args.piece] for i in range(0, len(body), args.piece))
    one_event_reads.EVENTS = args.events
    original = one_event_reads.build

    def bulk(rec: Any, n: int, *, probe: bool = False) -> Any:
        built = original(rec, n, probe=probe)
        return dataclasses.replace(built, events=pieces) if n == args.events else built

    one_event_reads.build = bulk  # type: ignore[assignment]
    try:
        return one_event_reads.main([args.provider, args.client, str(args.reps)])
    finally:
        one_event_reads.build = original


if __name__ == "__main__":
    raise SystemExit(main())
