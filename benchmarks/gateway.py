"""One client, a thousand streams: ``python -m benchmarks.gateway``.

N = 1, 10, 100, 1,000 concurrent streams through ONE async client, paced
(50 events per second per stream, as a model generates) and bulk (each
whole body in one write), for elelem's ``Client()`` with its defaults,
the floor (httpx2's async client with a pool of 1,000, SSE line split and
``orjson``) and the official async SDKs (``anthropic``, ``openai``; the
``bench`` extra).  The streams are real recorded text deltas of the corpus
(Anthropic Messages and Chat Completions, 200 deltas each) in the shape's
framing; the loopback server (:mod:`benchmarks.gateway_server`) is its own
process.  Every cell is a fresh child process (:mod:`benchmarks.gateway_child`);
reps interleave the clients, their order rotating.

Reported per cell (median over reps): CPU µs per event of the client's
whole process and its ratio to the floor **paired rep by rep** (each
rep's ratio, then their median), sustained events per second, resident
set per open stream, time to first text p50 and p99, failures.  The
figures also go to ``bench-gateway.json`` at the project root.  See
benchmarks/README.md ("Gateway") for the method and the figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.corpus import ROOT, CorpusMissing, corpus_root, text_deltas
from benchmarks.run import run_child, start_server
from benchmarks.streams import build

SHAPES = ("anthropic_messages", "openai_chat")
MODES = ("paced", "bulk")
CLIENTS = ("floor", "elelem", "sdk", "floor_bounded", "floor_sharded")
DEFAULT_CLIENTS = ("floor", "elelem", "sdk", "floor_bounded")
COUNTS = (1, 10, 100, 1000)
DELTAS = 200
WARM_DELTAS = 10
SHAPE_NAMES = {"anthropic_messages": "Anthropic Messages", "openai_chat": "Chat Completions"}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line (subsets for a short run)."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.gateway", description=__doc__)
    p.add_argument("--counts", default=",".join(map(str, COUNTS)), help="stream counts N")
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--shapes", default=",".join(SHAPES))
    p.add_argument(
        "--clients",
        default=",".join(DEFAULT_CLIENTS),
        help="floor_bounded: the floor on elelem's pool; floor_sharded: on 10 httpx2 pools",
    )
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--deltas", type=int, default=DELTAS, help="text deltas per stream")
    p.add_argument("--timeout", type=float, default=150.0, help="seconds per child at most")
    return p.parse_args(argv)


def _list(value: str, allowed: tuple[str, ...], what: str) -> list[str]:
    items = [v for v in value.split(",") if v]
    unknown = [v for v in items if v not in allowed]
    if unknown:
        raise SystemExit(f"unknown {what}: {', '.join(unknown)} (choose from {', '.join(allowed)})")
    return items


def quantile(values: list[float], q: float) -> float | None:
    """The ``q`` quantile of ``values`` (nearest rank), None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One summary per (shape, mode, n, client): medians over reps, and each
    client's CPU per event over the floor's of the same rep (paired)."""
    floor = {
        (r["shape"], r["mode"], r["n"], r["rep"]): r["cpu_us_per_event"]
        for r in rows
        if r["client"] == "floor" and r.get("cpu_us_per_event")
    }
    cells: dict[tuple[str, str, int, str], list[dict[str, Any]]] = {}
    for r in rows:
        cells.setdefault((r["shape"], r["mode"], r["n"], r["client"]), []).append(r)
    out = []
    for (shape, mode, n, client), reps in sorted(cells.items()):
        ok = [r for r in reps if r["status"] == "ok"]
        ratios = [
            r["cpu_us_per_event"] / floor[(shape, mode, n, r["rep"])]
            for r in ok
            if r.get("cpu_us_per_event") and (shape, mode, n, r["rep"]) in floor
        ]
        out.append(
            {
                "shape": shape,
                "mode": mode,
                "n": n,
                "client": client,
                "reps": len(ok),
                "errors": [r["status"] for r in reps if r["status"] != "ok"],
                "failures": sum(r["failures"] for r in ok),
                "warm_failures": sum(r.get("warm_failures", 0) for r in ok),
                "streams": sum(n for _ in ok),
                "first_failure": next((r["first_failure"] for r in ok if r["first_failure"]), None),
                "cpu_us_per_event": _median([r["cpu_us_per_event"] for r in ok if r["events"]]),
                "ratio": _median(ratios),
                "ratios": ratios,
                "events_per_s": _median([r["events_per_s"] for r in ok if r["events"]]),
                "rss_kb_per_stream": _median([r["rss_kb_per_stream"] for r in ok]),
                "ttft_p50_ms": _median([1e3 * (quantile(r["ttft_s"], 0.5) or 0) for r in ok]),
                "ttft_p99_ms": _median([1e3 * (quantile(r["ttft_s"], 0.99) or 0) for r in ok]),
                "wall_s": _median([r["wall_s"] for r in ok]),
            }
        )
    return out


def _fmt(value: float | None, spec: str, suffix: str = "") -> str:
    return "n/a" if value is None else f"{value:{spec}}{suffix}"


def render(summary: list[dict[str, Any]]) -> str:
    """The tables, one per shape and mode, a row per N and client."""
    out = []
    for shape in SHAPES:
        for mode in MODES:
            rows = [s for s in summary if s["shape"] == shape and s["mode"] == mode]
            if not rows:
                continue
            out += [
                f"\n#### {SHAPE_NAMES[shape]}, {mode}\n",
                "| N | client | µs CPU/event | paired ratio to floor | events/s "
                "| RSS/open stream | TTFT p50 | TTFT p99 | failures |",
                "|---:|---|---:|---:|---:|---:|---:|---:|---|",
            ]
            for s in sorted(rows, key=lambda s: (s["n"], CLIENTS.index(s["client"]))):
                failures = f"{s['failures']} of {s['streams']}"
                if s["warm_failures"]:
                    failures += f" (warm-up: {s['warm_failures']})"
                if s["errors"]:
                    failures += f"; {len(s['errors'])} reps failed: {s['errors'][0][:80]}"
                out.append(
                    f"| {s['n']} | {s['client']} | {_fmt(s['cpu_us_per_event'], '.2f')} "
                    f"| {_fmt(s['ratio'], '.2f', 'x')} | {_fmt(s['events_per_s'], ',.0f')} "
                    f"| {_fmt(s['rss_kb_per_stream'], '.1f', ' KB')} "
                    f"| {_fmt(s['ttft_p50_ms'], '.1f', ' ms')} "
                    f"| {_fmt(s['ttft_p99_ms'], '.1f', ' ms')} | {failures} |"
                )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Measure, print the tables, write ``bench-gateway.json``."""
    args = parse_args(argv)
    counts = [int(c) for c in args.counts.split(",") if c]
    modes = _list(args.modes, MODES, "mode")
    shapes = _list(args.shapes, SHAPES, "shape")
    clients = _list(args.clients, CLIENTS, "client")
    try:
        root = corpus_root()
    except CorpusMissing as exc:
        print(f"gateway benchmark skipped: {exc}", file=sys.stderr)
        return 2
    raw: dict[str, tuple[bytes, ...]] = {}
    streams = {}
    for shape in shapes:
        deltas = text_deltas(shape, root)
        stream, warm = build(shape, deltas, args.deltas), build(shape, deltas, WARM_DELTAS)
        key = f"{shape}:{args.deltas}"
        raw[key], raw[f"warm:{shape}"] = stream.events, warm.events
        streams[shape] = (key, stream, warm)
    rows: list[dict[str, Any]] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        server, port = start_server(Path(tmp) / "streams.pkl", raw, "benchmarks.gateway_server")
        try:
            nonce = 0
            for rep in range(args.reps):
                order = clients[rep % len(clients) :] + clients[: rep % len(clients)]
                for mode in modes:
                    for n in counts:
                        for shape in shapes:
                            key, stream, warm = streams[shape]
                            for client in order:
                                nonce += 1
                                base = f"http://127.0.0.1:{port}/g/{nonce}/{key}/{mode}"
                                job = {
                                    "measure": f"http://127.0.0.1:{port}/measure/{nonce}",
                                    "client": client,
                                    "shape": shape,
                                    "n": n,
                                    "base": base,
                                    "events": len(stream.events),
                                    "digest": stream.digest,
                                    "warm_digest": warm.digest,
                                }
                                [result] = run_child("benchmarks.gateway_child", job, args.timeout)
                                result.update(client=client, shape=shape, mode=mode, n=n, rep=rep)
                                rows.append(result)
                                print(
                                    f"rep {rep + 1} {mode:5} N={n:<4} {shape:18} {client:6} "
                                    f"{result['status'][:60]} "
                                    f"{_fmt(result.get('cpu_us_per_event'), '.2f', ' µs/event')}",
                                    file=sys.stderr,
                                    flush=True,
                                )
        finally:
            assert server.stdin is not None
            server.stdin.close()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
    summary = summarize(rows)
    print(render(summary))
    print(f"\n{len(rows)} cells in {time.monotonic() - started:.0f} s")
    document = {"args": vars(args), "summary": summary, "rows": rows}
    (ROOT / "bench-gateway.json").write_text(json.dumps(document, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
