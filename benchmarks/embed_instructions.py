"""The client side of one embed call, counted by callgrind:
``python -m benchmarks.embed_instructions [--inputs 8192] [--clients elelem_sync,floor] [--src DIR]``.

What :mod:`benchmarks.embeddings` times, counted in instructions, which the
machine's load does not move.  The loopback OpenAI stand-in of that
benchmark runs in its own process (not under callgrind, so its work is not
counted) and answers with base64 float32 vectors and a ``content-length``.
The child runs under ``valgrind --tool=callgrind``; per client it makes
the client, takes a warm-up call (imports, the connection, the server's
bodies), then embeds 0 texts and ``--inputs`` texts, each between two calls
of ``os.sched_get_priority_min`` (callgrind's ``--dump-before`` mark, as in
:mod:`benchmarks.bulk_instructions`), on a frozen heap
(:mod:`benchmarks.heap`).  A client's figure is

    count(embed of --inputs texts) − count(embed of 0 texts)

what the texts cost, the call's fixed work cancelled.  Every vector must
come back with the exact values sent.  ``elelem_sync`` is
``SyncClient.embed``, ``floor`` the floor of :mod:`benchmarks.embeddings`
(``httpx2`` POST, ``msgspec`` decode, ``base64`` into ``array('f')``).  The
hash seed is fixed (``PYTHONHASHSEED=0``); ``--src DIR`` measures another
tree's ``elelem`` (its ``src`` first on ``PYTHONPATH``) with this harness.
About a minute of one core per client.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from benchmarks.bulk_instructions import _MARK, _mark, _totals
from benchmarks.corpus import ROOT
from benchmarks.heap import frozen_heap

DIMENSIONS = 1536


@contextlib.contextmanager
def _server(dimensions: int) -> Iterator[str]:
    """The stand-in of :mod:`benchmarks.embeddings` in its own process; its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.embeddings", "--serve", "--dimensions", str(dimensions)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        yield f"http://127.0.0.1:{proc.stdout.readline().strip()}"
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(30)


def child(clients: list[str], inputs: int, dimensions: int) -> None:
    """Under callgrind: per client, a warm-up call, then the 0-text and the
    ``inputs``-text calls, each between marks (three dumps per client)."""
    from benchmarks.embeddings import BATCH, CLIENTS, _check

    texts = [f"text {i}" for i in range(max(inputs, BATCH + 1))]
    with _server(dimensions) as url:
        for name in clients:
            run = CLIENTS[name](url)
            assert run is not None
            _check(run(texts[: BATCH + 1]), BATCH + 1, dimensions)  # warm-up
            for count in (0, inputs):
                with frozen_heap():  # frozen and thawed outside the marks
                    _mark()
                    vectors = run(texts[:count])
                    _mark()
                if count:
                    _check(vectors, count, dimensions)
                elif vectors:
                    raise AssertionError(f"{len(vectors)} vectors for no input")
    sys.stdout.flush()
    os._exit(0)  # SyncClient's loop thread: the counts are out


def measure(
    clients: list[str], inputs: int, dimensions: int, src: Path | None, keep: Path | None = None
) -> dict[str, int]:
    """Each client's count of ``inputs`` texts less that of 0, one callgrind
    process; its dumps are left in ``keep`` when given (for ``callgrind_annotate``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    env["PYTHONHASHSEED"] = "0"
    env["PYTHONPATH"] = os.pathsep.join([*([str(src)] if src else []), str(ROOT)])
    with tempfile.TemporaryDirectory(prefix="elelem-embed-instr-") as tmp:
        out = (keep or Path(tmp)) / "cg.out"
        cmd = ["valgrind", "--tool=callgrind", f"--dump-before={_MARK}",
               f"--callgrind-out-file={out}", sys.executable, "-m",
               "benchmarks.embed_instructions", "--child", "--clients", ",".join(clients),
               "--inputs", str(inputs), "--dimensions", str(dimensions)]  # fmt: skip
        if keep:  # each dump readable alone: names not shared across dumps
            cmd[2:2] = ["--compress-strings=no"]
        done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"callgrind child failed:\n{done.stderr[-3000:]}")
        counts = _totals(out, 4 * len(clients) - 1)
    return figures(clients, counts)


def figures(clients: list[str], counts: list[int]) -> dict[str, int]:
    """Each client's figure from the ``counts`` of the dumps after the first
    (the set-up): per client the 0-text call, what ran between the calls,
    the inputs call, then up to the next client's first mark (its set-up
    and warm-up), none after the last."""
    if len(counts) != 4 * len(clients) - 1:
        raise ValueError(f"{len(counts)} dumps for {len(clients)} clients")
    return {name: counts[4 * i + 2] - counts[4 * i] for i, name in enumerate(clients)}


def main(argv: list[str] | None = None) -> int:
    """Count, print one line per client, and write ``--json``."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.embed_instructions", description=__doc__)
    p.add_argument("--clients", default="elelem_sync,floor", help="elelem_sync, floor or both")
    p.add_argument("--inputs", type=int, default=8192)
    p.add_argument("--dimensions", type=int, default=DIMENSIONS)
    p.add_argument("--src", type=Path, help="another tree's src directory to measure")
    p.add_argument("--json", type=Path, help="write the figures here")
    p.add_argument("--keep", type=Path, help="leave the callgrind dumps in this folder")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    clients = [c for c in args.clients.split(",") if c]
    if args.child:
        child(clients, args.inputs, args.dimensions)
        return 0
    figures = measure(clients, args.inputs, args.dimensions, args.src, args.keep)
    for name, count in figures.items():
        print(f"{name:<12} {count:>15,} instructions for {args.inputs:,} inputs")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
