"""The turn engine on Temporal, against the real development server.

The same tool-loop conversation run in process and on Temporal makes the same
log; the workflow history holds one activity per model request, tool call and
commit; the workflow code runs in Temporal's sandbox.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("temporalio")

from temporalio.client import Client as TemporalClient

import durable_script
from durable_helpers import comparable, temporal_server
from elelem import Client
from elelem.conversation import Conversation, SQLiteStore
from elelem.durable import by_import
from elelem.durable import temporal as durable
from elelem.turns.toolloop import run

MODEL = by_import("durable_script:SCRIPTED")
TOOLS = ["durable_script:append_line"]


@pytest.fixture(scope="session")
def temporal_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from temporal_server(tmp_path_factory.mktemp("temporal"))


class CountingStore(SQLiteStore):
    """A SQLite store that counts its commits."""

    commits = 0

    def append(self, conversation, drafts):  # type: ignore[no-untyped-def]
        type(self).commits += 1
        return super().append(conversation, drafts)


@pytest.fixture
def lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "lines.txt"
    monkeypatch.setenv(durable_script.LINES, str(path))
    return path


async def _durable_run(
    address: str, store: SQLiteStore, conv_id: str, prompt: str
) -> tuple[Any, Any]:
    client = await TemporalClient.connect(address)
    queue = f"q-{uuid.uuid4().hex}"
    async with durable.worker(client, queue, store=store, elelem_client=Client(env={})):
        handle = await durable.start(client, conv_id, MODEL, prompt, tools=TOOLS, task_queue=queue)
        result = await durable.result(handle)
    return result, await handle.fetch_history()


def _in_process(db: Path, prompt: str) -> tuple[Conversation, int]:

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


def test_same_log_as_in_process_and_one_activity_per_step(
    temporal_address: str, tmp_path: Path, lines: Path
) -> None:
    local, commits = _in_process(tmp_path / "local.db", "hello")
    assert lines.read_text() == "hello #0\nhello #1\n"
    lines.unlink()
    store = SQLiteStore(tmp_path / "durable.db")
    conv = Conversation.create(store)
    durable_script.SCRIPTED._responses = 0  # request ids count from 1 in each run
    result, history = asyncio.run(_durable_run(temporal_address, store, conv.id, "hello"))
    assert result.end == "completed"
    assert result.text == "step 0\n\nstep 1\n\ndone: wrote hello #1"
    assert lines.read_text() == "hello #0\nhello #1\n"
    durable_log = Conversation.open(store, conv.id).events
    assert comparable(durable_log) == comparable(local.events)

    kinds = [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]
    assert kinds.count("elelem.open") == 1
    assert kinds.count("elelem.request") == 3
    assert kinds.count("elelem.call") == 2
    assert kinds.count("elelem.append") == commits
