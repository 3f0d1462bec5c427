"""The benchmark driver: ``python -m benchmarks.run [--quick]``.

One invocation measures everything, interleaved: the parsing floor, elelem
and every peer, on identical streams served by a loopback server running in
its own process, in both delivery modes; the per-event cost from 2,500 to
80,000 events; and the conversation store against raw sqlite3.  It prints
the tables and writes the same figures to ``bench-results.json`` at the
project root.  See benchmarks/README.md for the method and the findings.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks.clients import CLIENTS
from benchmarks.corpus import ROOT, CorpusMissing, corpus_root, text_deltas
from benchmarks.plan import FULL, QUICK, Measurements, Plan
from benchmarks.report import render, results_document, storage_summary
from benchmarks.server import MODES
from benchmarks.streams import SHAPES, Stream, build

WARM_DELTAS = 40
SCALING_CLIENTS = ("floor", "elelem")


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def run_child(module: str, job: dict[str, Any], timeout: float) -> list[dict[str, Any]]:
    """Run one fresh child process on ``job``; its failure is reported per task."""
    tasks = job.get("tasks", [job])
    try:
        proc = subprocess.run(
            [sys.executable, "-m", module],
            input=json.dumps(job),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=_child_env(),
            cwd=ROOT,
        )
    except subprocess.TimeoutExpired:
        return [{**t, "status": f"failed: timed out after {timeout:.0f} s"} for t in tasks]
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if len(results) < len(tasks):
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1][:200]
        status = f"failed: child exited {proc.returncode}: {tail}"
        results += [{**t, "status": status} for t in tasks[len(results) :]]
    return results


def start_server(
    path: Path, streams: dict[str, tuple[bytes, ...]], module: str = "benchmarks.server"
) -> tuple[subprocess.Popen[str], int]:
    """The loopback server process of ``module`` over ``streams`` (written to
    ``path``) and its port; it exits when our end of its stdin closes."""
    with path.open("wb") as fh:
        pickle.dump(streams, fh)
    proc = subprocess.Popen(
        [sys.executable, "-m", module, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=_child_env(),
        cwd=ROOT,
    )
    assert proc.stdout is not None
    return proc, int(proc.stdout.readline())


class Driver:
    """Builds the streams, runs the server, schedules the children."""

    def __init__(self, plan: Plan, clients: list[str], shapes: list[str], modes: list[str]):
        self.plan, self.clients, self.shapes, self.modes = plan, clients, shapes, modes
        self.streams: dict[str, Stream] = {}
        self._nonce = itertools.count()
        self.base = ""

    def key(self, shape: str, n: int) -> str:
        """The server key of ``shape``'s stream of ``n`` deltas."""
        return f"{shape}.{n}"

    def build_streams(self) -> None:
        """Every stream the plan needs, from the corpus's real deltas."""
        root = corpus_root()
        sizes = {self.plan.events, WARM_DELTAS, *self.plan.scaling_sizes}
        for shape in self.shapes:
            deltas = text_deltas(shape, root)
            for n in sorted(sizes):
                self.streams[self.key(shape, n)] = build(shape, deltas, n)

    def task(self, client: str, shape: str, mode: str, n: int) -> dict[str, Any]:
        """One measurement job for a child."""
        stream, warm = self.streams[self.key(shape, n)], self.streams[self.key(shape, WARM_DELTAS)]
        return {
            "client": client,
            "shape": shape,
            "mode": mode,
            "key": self.key(shape, n),
            "nonce": f"{os.getpid()}-{next(self._nonce)}",
            "warm": self.key(shape, WARM_DELTAS),
            "warm_digest": warm.digest,
            "digest": stream.digest,
            "chars": len(stream.text),
        }

    def start_server(self, workdir: Path) -> subprocess.Popen[str]:
        """The loopback server process; it exits when our end of its stdin closes."""
        proc, port = start_server(
            workdir / "streams.pickle", {k: s.events for k, s in self.streams.items()}
        )
        self.base = f"http://127.0.0.1:{port}"
        return proc

    def _jobs(self, tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if not self.plan.grouped:
            return [{"base": self.base, "tasks": [t]} for t in tasks]
        families: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for t in tasks:
            families[CLIENTS[t["client"]].family].append(t)
        return [{"base": self.base, "tasks": ts} for ts in families.values()]

    def streaming_tasks(self, run: int) -> list[dict[str, Any]]:
        """One run's streaming tasks; the client order rotates from run to run."""
        tasks = []
        for shape in self.shapes:
            names = [
                c
                for c in self.clients
                if shape in CLIENTS[c].shapes and (run < self.plan.slow_runs or not CLIENTS[c].slow)
            ]
            shift = run % len(names) if names else 0
            names = names[shift:] + names[:shift]
            for mode in self.modes:
                tasks += [self.task(c, shape, mode, self.plan.events) for c in names]
        return tasks

    def scaling_tasks(self, run: int) -> list[dict[str, Any]]:
        """One run's scaling tasks: the floor and elelem over every size, bulk mode."""
        names = [c for c in SCALING_CLIENTS if c in self.clients]
        if run % 2:
            names.reverse()
        return [
            self.task(c, shape, "bulk", n)
            for shape in self.shapes
            for n in self.plan.scaling_sizes
            for c in names
        ]

    def measure(self, progress: bool = True) -> Measurements:
        """Run every streaming and scaling child, in order, and collect the results."""
        m = Measurements()
        jobs = []
        for run in range(self.plan.runs):
            jobs += self._jobs(self.streaming_tasks(run))
        for run in range(self.plan.scaling_runs):
            jobs += [
                {**j, "scaling": True} for j in self._jobs(self.scaling_tasks(run)) if j["tasks"]
            ]
        start = time.monotonic()
        for i, job in enumerate(jobs, 1):
            for r in run_child("benchmarks.child", job, self.plan.child_timeout):
                if job.get("scaling"):
                    size = self.streams[r["key"]].deltas
                    m.scaling[(r["shape"], size, r["client"])].append(r)
                else:
                    m.streaming[(r["shape"], r["mode"], r["client"])].append(r)
            if progress:
                elapsed = time.monotonic() - start
                print(f"\r  {i}/{len(jobs)} processes, {elapsed:.0f} s", end="", file=sys.stderr)
        if progress:
            print(file=sys.stderr)
        return m


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__)
    p.add_argument("--quick", action="store_true", help="fewer runs and events (under a minute)")
    p.add_argument("--runs", type=int, help="runs per cell (default 7, quick 1)")
    p.add_argument("--events", type=int, help="text deltas per stream (default 20,000)")
    p.add_argument("--clients", help="comma-separated subset of: " + ", ".join(CLIENTS))
    p.add_argument("--shapes", help="comma-separated subset of: " + ", ".join(SHAPES))
    p.add_argument("--modes", help="comma-separated subset of: " + ", ".join(MODES))
    p.add_argument("--no-scaling", action="store_true")
    p.add_argument("--no-storage", action="store_true")
    p.add_argument("--output", type=Path, default=ROOT / "bench-results.json")
    return p.parse_args(argv)


def _subset(value: str | None, allowed: tuple[str, ...] | list[str], what: str) -> list[str]:
    if not value:
        return list(allowed)
    chosen = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [v for v in chosen if v not in allowed]
    if unknown:
        raise SystemExit(f"unknown {what}: {', '.join(unknown)} (choose from {', '.join(allowed)})")
    return chosen


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks; print the tables; write the results file."""
    args = parse_args(argv)
    plan = QUICK if args.quick else FULL
    if args.runs:
        plan = dataclasses.replace(plan, runs=args.runs, slow_runs=min(plan.slow_runs, args.runs))
    if args.events:
        plan = dataclasses.replace(plan, events=args.events)
    if args.no_scaling:
        plan = dataclasses.replace(plan, scaling_sizes=(), scaling_runs=0)
    driver = Driver(
        plan,
        _subset(args.clients, list(CLIENTS), "client"),
        _subset(args.shapes, SHAPES, "shape"),
        _subset(args.modes, MODES, "mode"),
    )
    started = time.monotonic()
    try:
        driver.build_streams()
    except CorpusMissing as exc:
        print(f"benchmarks: {exc}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="elelem-bench-") as tmp:
        server = driver.start_server(Path(tmp))
        try:
            measured = driver.measure()
        finally:
            assert server.stdin is not None
            server.stdin.close()
            server.wait(timeout=10)
    storage_runs: list[dict[str, Any]] = []
    if not args.no_storage:
        for _ in range(plan.storage_runs):
            job = {"events": plan.storage_events}
            storage_runs += run_child("benchmarks.storage", job, plan.child_timeout)
    storage = storage_summary(storage_runs)
    doc = results_document(driver, measured, storage, time.monotonic() - started)
    print(render(doc))
    args.output.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
