"""Durable runs survive their workers: real worker processes (``elelem worker
temporal``) SIGKILLed at random points while runs with a tool that has an
effect outside the log (kept once by its call key) go on.  Every run
completes, the tool's file outside the log has exactly one line per call, and
each log is the in-process run's log.

The default run is short (2 workers, 3 runs, 2 kills); the ``slow`` one is
the full exercise (4 workers, 50 runs, 20 kills).
"""

from __future__ import annotations

import asyncio
import random
import re
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("temporalio")

from temporalio.client import Client as TemporalClient

import durable_script
from durable_helpers import comparable, in_process, worker_env
from elelem.conversation import Conversation, SQLiteStore
from elelem.durable import by_import
from elelem.durable import temporal as durable

MODEL = by_import("durable_script:SCRIPTED")
TOOLS = ["durable_script:append_line"]
# The scripted model numbers request ids per process; which worker process
# served a request is not the log's to keep the same.
REQUEST_ID = re.compile(r'"request_id":"req_test_\d+"')


def _normalized(events: Any) -> list[tuple[object, ...]]:
    return [(*row[:4], REQUEST_ID.sub('"request_id":"-"', row[4])) for row in comparable(events)]


def _in_process_log(tmp: Path, prompt: str, lines: Path) -> list[tuple[object, ...]]:
    conv, _ = in_process(tmp / f"local-{uuid.uuid4().hex}.db", prompt)
    return _normalized(conv.events)


class Pool:
    """Worker processes on one task queue, each started by the CLI."""

    def __init__(self, address: str, queue: str, db: Path, lines: Path, size: int) -> None:
        self.command = [
            str(Path(sys.executable).parent / "elelem"), "worker", "temporal",
            "--task-queue", queue, "--address", address, "--tools", "durable_script",
            "--sticky-timeout", "1",
        ]  # fmt: skip
        self.env = worker_env(lines) | {"ELELEM_STORE": str(db), durable_script.DELAY: "0.05"}
        self.procs = [self.spawn() for _ in range(size)]
        for proc in self.procs:
            self.ready(proc)

    def spawn(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            self.command, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )

    @staticmethod
    def ready(proc: subprocess.Popen[bytes]) -> None:
        """Wait for the worker to say it polls its task queue."""
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert line.startswith(b"worker on task queue"), line

    def kill_one(self, rng: random.Random) -> None:
        i = rng.randrange(len(self.procs))
        self.procs[i].send_signal(signal.SIGKILL)
        self.procs[i].wait()
        assert self.procs[i].stderr is not None
        self.procs[i].stderr.close()
        self.procs[i] = self.spawn()
        self.ready(self.procs[i])

    def stop(self) -> None:
        for proc in self.procs:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            assert proc.stderr is not None
            proc.stderr.close()

    @staticmethod
    async def retried(handles: list[Any]) -> int:
        """How many activity attempts and workflow tasks a dead worker cost."""
        count = 0
        for handle in handles:
            history = await handle.fetch_history()
            for e in history.events:
                if e.HasField("activity_task_started_event_attributes"):
                    count += e.activity_task_started_event_attributes.attempt > 1
                if e.HasField("workflow_task_timed_out_event_attributes"):
                    count += 1
        return count


def _kill_runs(address: str, tmp: Path, workers: int, runs: int, kills: int) -> None:
    rng = random.Random(44)
    lines = tmp / "lines.txt"
    db = tmp / "durable.db"
    store = SQLiteStore(db)
    queue = f"q-{uuid.uuid4().hex}"
    pool = Pool(address, queue, db, lines, workers)
    prompts = [f"run {i}" for i in range(runs)]

    async def drive() -> list[str]:
        client = await TemporalClient.connect(address)
        ids = [Conversation.create(store).id for _ in prompts]
        handles = [
            await durable.start(
                client,
                cid,
                MODEL,
                prompt,
                tools=TOOLS,
                task_queue=queue,
                heartbeat=1.0,
                task_timeout=1.0,
            )
            for cid, prompt in zip(ids, prompts, strict=True)
        ]
        killer = asyncio.ensure_future(_killing(pool, rng, kills))
        results = [await durable.result(h) for h in handles]
        await killer
        assert [r.end for r in results] == ["completed"] * runs
        print(f"work a dead worker left to others: {await Pool.retried(handles)}")
        return ids

    async def _killing(pool: Pool, rng: random.Random, kills: int) -> None:
        for _ in range(kills):
            await asyncio.sleep(rng.uniform(0.05, 0.3))
            await asyncio.to_thread(pool.kill_one, rng)

    try:
        ids = asyncio.run(asyncio.wait_for(drive(), 600))
    finally:
        pool.stop()
    written = durable_script.notes(lines).splitlines()
    expected = [f"{p} #{k}" for p in prompts for k in range(durable_script.STEPS)]
    assert sorted(written) == sorted(expected)  # one line per call, no call twice
    lines.unlink()
    local_lines = tmp / "local-lines.txt"
    for cid, prompt in zip(ids, prompts, strict=True):
        durable_log = _normalized(Conversation.open(store, cid).events)
        assert durable_log == _in_process_log(tmp, prompt, local_lines)


def test_killed_workers_lose_nothing_and_run_no_call_twice(
    temporal_address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(durable_script.LINES, str(tmp_path / "local-lines.txt"))
    _kill_runs(temporal_address, tmp_path, workers=2, runs=3, kills=2)


@pytest.mark.slow
def test_killed_workers_many_runs(
    temporal_address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(durable_script.LINES, str(tmp_path / "local-lines.txt"))
    _kill_runs(temporal_address, tmp_path, workers=4, runs=50, kills=20)
