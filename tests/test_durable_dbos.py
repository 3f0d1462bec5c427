"""The turn engine on DBOS: the same tool-loop conversation makes the same
log as in process, with one checkpointed step per model request, tool call
and commit; a deferred run resumes on a ``decide`` message."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbos")

from dbos import DBOS, DBOSClient

import durable_script
from durable_helpers import comparable, in_process
from elelem import Client
from elelem.conversation import Conversation, SQLiteStore
from elelem.durable import by_import
from elelem.durable import dbos as durable

MODEL = by_import("durable_script:SCRIPTED")
TOOLS = ["durable_script:append_line"]


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SQLiteStore, str]]:
    """This test process as a DBOS worker, its system database SQLite."""
    tmp = tmp_path_factory.mktemp("dbos")
    store = SQLiteStore(tmp / "log.db")
    system = f"sqlite:///{tmp / 'dbos.sqlite'}"
    durable.launch(store, system, elelem_client=Client(env={}), executor_id="test")
    try:
        yield store, system
    finally:
        DBOS.destroy(destroy_registry=False)


def test_same_log_as_in_process_and_one_step_per_action(
    worker: tuple[SQLiteStore, str], tmp_path: Path, lines: Path
) -> None:
    store, system = worker
    local, commits = in_process(tmp_path / "local.db", "hello")
    lines.unlink()
    conv = Conversation.create(store)
    durable_script.SCRIPTED._responses = 0

    async def go() -> tuple[Any, list[Any]]:
        client = DBOSClient(system_database_url=system)
        try:
            handle = await durable.start(client, conv.id, MODEL, "hello", tools=TOOLS)
            result = await durable.result(handle)
        finally:
            client.destroy()
        steps = await DBOS.list_workflow_steps_async(durable.workflow_id(conv.id))
        return result, steps

    result, steps = asyncio.run(go())
    assert result.end == "completed"
    assert result.text == "step 0\n\nstep 1\n\ndone: wrote hello #1"
    assert durable_script.notes(lines) == "hello #0\nhello #1\n"
    assert comparable(Conversation.open(store, conv.id).events) == comparable(local.events)
    names = [s["function_name"] for s in steps]
    assert names.count("elelem.open") == 1
    assert names.count("elelem.request") == 3
    assert names.count("elelem.call") == 2
    assert commits == 11  # in process, one per flushed part (see the Temporal test)
    assert names.count("elelem.append") == 1 + 3 + 2


def test_a_deferred_run_resumes_on_a_decide_message(
    worker: tuple[SQLiteStore, str], tmp_path: Path, lines: Path
) -> None:
    from click.testing import CliRunner

    from elelem.cli import main
    from elelem.turns.pending import pending

    store, system = worker
    store_path = store.path
    conv = Conversation.create(store)

    def waiting(after: Any = None) -> Any:
        import time

        for _ in range(600):
            found = pending(Conversation.open(store, conv.id))
            if found is not None and found != after:
                return found
            time.sleep(0.05)
        raise AssertionError("the log never showed a waiting call")

    async def go() -> Any:
        client = DBOSClient(system_database_url=system)
        try:
            handle = await durable.start(client, conv.id, MODEL, "ask", tools=TOOLS, defer=True)
            first = await asyncio.to_thread(waiting)
            # ``elelem approve --dbos`` reads what waits from the log and sends it.
            approved = await asyncio.to_thread(
                CliRunner().invoke,
                main,
                ["approve", conv.id, "--yes", first.approval[0].id, "--dbos", system],
                env={"ELELEM_STORE": str(store_path), "ELELEM_HOME": str(tmp_path)},
            )
            assert approved.exit_code == 0, approved.output
            second = await asyncio.to_thread(waiting, first)
            await durable.decide(client, conv.id, approvals={second.approval[0].id: False})
            return await durable.result(handle)
        finally:
            client.destroy()

    result = asyncio.run(go())
    assert durable_script.notes(lines) == "ask #0\n"
    assert result.end == "completed"
    assert result.text.endswith("done: refused: the user did not approve this call")


def test_a_model_no_worker_can_resolve_ends_the_run_with_the_error(
    worker: tuple[SQLiteStore, str],
) -> None:
    from elelem.durable.wire import RemoteFailure

    store, system = worker
    conv = Conversation.create(store)

    async def go() -> Any:
        client = DBOSClient(system_database_url=system)
        try:
            handle = await durable.start(client, conv.id, "nowhere:model", "hi")
            return await durable.result(handle)
        finally:
            client.destroy()

    with pytest.raises(RemoteFailure) as failed:
        asyncio.run(asyncio.wait_for(go(), 60))
    assert failed.value.type_name == "ConfigError"
    assert "nowhere" in str(failed.value)
    assert Conversation.open(store, conv.id).events == ()
