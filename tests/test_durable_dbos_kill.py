"""DBOS runs survive their processes: two ``elelem worker dbos`` processes,
one SIGKILLed at random points and started again under its executor id
(DBOS then finishes the runs it had from their checkpoints).  Every run
completes, the tool with an effect outside the log (kept once by its call
key) wrote one line per call, each log is the in-process run's log.  Short by default; the ``slow`` variant runs 50."""

from __future__ import annotations

import asyncio
import random
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbos")

from dbos import DBOSClient

import durable_script
from durable_helpers import worker_env
from elelem.conversation import Conversation, SQLiteStore
from elelem.durable import by_import
from elelem.durable import dbos as durable
from test_durable_temporal_kill import _in_process_log, _normalized
from test_store import pg_url

MODEL = by_import("durable_script:SCRIPTED")
TOOLS = ["durable_script:append_line"]

__all__ = ["pg_url"]  # the fixture, imported for this module's tests


class Pool:
    """Worker processes, each under its own executor id."""

    def __init__(self, system: str, store: str, lines: Path, size: int) -> None:
        self.system = system
        self.env = worker_env(lines) | {"ELELEM_STORE": store, durable_script.DELAY: "0.05"}
        self.names = [f"w{i}" for i in range(size)]
        self.procs = [self.spawn(name) for name in self.names]

    def spawn(self, name: str) -> subprocess.Popen[bytes]:
        command = [
            str(Path(sys.executable).parent / "elelem"), "worker", "dbos",
            "--system-database", self.system, "--executor-id", name, "--tools", "durable_script",
        ]  # fmt: skip
        proc = subprocess.Popen(
            command, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        assert proc.stderr is not None
        seen = []
        while not (line := proc.stderr.readline()).startswith(f"worker {name} on queue".encode()):
            seen.append(line)
            assert line, b"".join(seen)
        return proc

    def kill_one(self, rng: random.Random) -> None:
        i = rng.randrange(len(self.procs))
        self._kill(self.procs[i])
        self.procs[i] = self.spawn(self.names[i])

    @staticmethod
    def _kill(proc: subprocess.Popen[bytes]) -> None:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.stderr is not None
        proc.stderr.close()

    def stop(self) -> None:
        for proc in self.procs:
            self._kill(proc)


def _kill_runs(tmp: Path, workers: int, runs: int, kills: int) -> None:
    rng = random.Random(44)
    lines = tmp / "lines.txt"
    db = tmp / "durable.db"
    store = SQLiteStore(db)
    system = f"sqlite:///{tmp / 'dbos.sqlite'}"
    pool = Pool(system, str(db), lines, workers)
    prompts = [f"run {i}" for i in range(runs)]

    async def drive() -> list[str]:
        client = DBOSClient(system_database_url=system)
        try:
            ids = [Conversation.create(store).id for _ in prompts]
            handles: list[Any] = [
                await durable.start(client, cid, MODEL, prompt, tools=TOOLS)
                for cid, prompt in zip(ids, prompts, strict=True)
            ]
            for _ in range(kills):
                await asyncio.sleep(rng.uniform(0.05, 0.3))
                await asyncio.to_thread(pool.kill_one, rng)
            results = [await durable.result(h) for h in handles]
        finally:
            client.destroy()
        assert [r.end for r in results] == ["completed"] * runs
        return ids

    try:
        ids = asyncio.run(asyncio.wait_for(drive(), 600))
    finally:
        pool.stop()
    written = durable_script.notes(lines).splitlines()
    expected = [f"{p} #{k}" for p in prompts for k in range(durable_script.STEPS)]
    assert sorted(written) == sorted(expected)
    for cid, prompt in zip(ids, prompts, strict=True):
        assert _normalized(Conversation.open(store, cid).events) == _in_process_log(
            tmp, prompt, tmp / "local-lines.txt"
        )


def test_killed_processes_lose_nothing_and_run_no_call_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(durable_script.LINES, str(tmp_path / "local-lines.txt"))
    _kill_runs(tmp_path, workers=2, runs=3, kills=1)


@pytest.mark.slow
def test_killed_processes_many_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(durable_script.LINES, str(tmp_path / "local-lines.txt"))
    _kill_runs(tmp_path, workers=2, runs=50, kills=20)


@pytest.mark.slow  # DBOS's first migrations of a PostgreSQL database take most of a minute here
def test_across_machines_dbos_and_the_log_share_postgresql(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker process whose DBOS system database and log are both the
    PostgreSQL server the tests start (what workers on several machines
    share): the run completes and its log is the in-process run's."""
    from elelem.conversation import open_store

    monkeypatch.setenv(durable_script.LINES, str(tmp_path / "local-lines.txt"))
    lines = tmp_path / "lines.txt"
    pool = Pool(pg_url, pg_url, lines, 1)
    store = open_store(pg_url)
    conv = Conversation.create(store)

    async def go() -> Any:
        client = DBOSClient(system_database_url=pg_url)
        try:
            handle = await durable.start(client, conv.id, MODEL, "shared", tools=TOOLS)
            return await durable.result(handle)
        finally:
            client.destroy()

    try:
        result = asyncio.run(asyncio.wait_for(go(), 120))
    finally:
        pool.stop()
    assert result.end == "completed"
    assert durable_script.notes(lines) == "shared #0\nshared #1\n"
    assert _normalized(Conversation.open(store, conv.id).events) == _in_process_log(
        tmp_path, "shared", tmp_path / "local-lines.txt"
    )
