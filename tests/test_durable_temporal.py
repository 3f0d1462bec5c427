"""The turn engine on Temporal, against the real development server.

The same tool-loop conversation run in process and on Temporal makes the same
log; the workflow history holds one activity per model request, tool call and
commit; the workflow code runs in Temporal's sandbox.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("temporalio")

from temporalio.client import Client as TemporalClient

import durable_script
from durable_helpers import comparable, in_process
from elelem import Client
from elelem.conversation import Conversation, SQLiteStore
from elelem.durable import by_import
from elelem.durable import temporal as durable
from elelem.turns.toolloop import run
from test_store import pg_url

MODEL = by_import("durable_script:SCRIPTED")
TOOLS = ["durable_script:append_line"]

__all__ = ["pg_url"]  # the fixture, imported for this module's tests


async def _durable_run(
    address: str, store: SQLiteStore, conv_id: str, prompt: str
) -> tuple[Any, Any, bool]:
    client = await TemporalClient.connect(address)
    queue = f"q-{uuid.uuid4().hex}"
    async with durable.worker(client, queue, store=store, elelem_client=Client(env={})):
        handle = await durable.start(client, conv_id, MODEL, prompt, tools=TOOLS, task_queue=queue)
        result = await durable.result(handle)
        sandboxed = await handle.query("sandboxed")
    return result, await handle.fetch_history(), sandboxed


def test_same_log_as_in_process_and_one_activity_per_step(
    temporal_address: str, tmp_path: Path, lines: Path
) -> None:
    local, commits = in_process(tmp_path / "local.db", "hello")
    assert durable_script.notes(lines) == "hello #0\nhello #1\n"
    lines.unlink()
    store = SQLiteStore(tmp_path / "durable.db")
    conv = Conversation.create(store)
    durable_script.SCRIPTED._responses = 0  # request ids count from 1 in each run
    result, history, sandboxed = asyncio.run(
        _durable_run(temporal_address, store, conv.id, "hello")
    )
    assert sandboxed is True
    assert result.end == "completed"
    assert result.text == "step 0\n\nstep 1\n\ndone: wrote hello #1"
    assert durable_script.notes(lines) == "hello #0\nhello #1\n"
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
    # In process each flushed part is its own commit (11 here); a durable run
    # commits a response's parts with its record: the turn start, one per
    # response, one per step's results.
    assert commits == 11
    assert kinds.count("elelem.append") == 1 + 3 + 2


HISTORY = Path(__file__).parent / "data" / "durable" / "temporal_history.json"


def test_a_history_recorded_by_earlier_worker_code_replays() -> None:
    """The committed history was recorded by an earlier commit's worker,
    before the change that commits a response's parts with its record
    (``ONE_COMMIT_PER_RESPONSE``, taken through ``workflow.patched``): the
    workflow code of this one makes that run's decisions again over it."""
    from temporalio.client import WorkflowHistory

    history = WorkflowHistory.from_json("elelem-recorded", HISTORY.read_text())
    replayed = asyncio.run(durable.replayer().replay_workflow(history))
    assert replayed.replay_failure is None
    kinds = [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]
    assert kinds.count("elelem.request") == 3
    assert kinds.count("elelem.call") == 2
    assert kinds.count("elelem.append") == 11  # one per part: the code before the change


def record_history(address: str, tmp: Path) -> None:
    """Write HISTORY anew (run by hand when the workflow's decisions change
    on purpose: python -c 'import test_durable_temporal as t; ...')."""
    store = SQLiteStore(tmp / "record.db")
    conv = Conversation.create(store)
    _, history, _ = asyncio.run(_durable_run(address, store, conv.id, "recorded"))
    HISTORY.parent.mkdir(parents=True, exist_ok=True)
    # The worker's identity names its host: not kept.
    text = re.sub(r'"identity": *"[^"]*"', '"identity": "elelem-worker"', history.to_json())
    HISTORY.write_text(text)


def _wait_for(predicate: Any, seconds: float = 30) -> Any:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError("the log never showed what the test waited for")


def _deny_on_the_page(store: SQLiteStore, address: str, conv_id: str, call_id: str) -> int:
    """POST the page's Deny of ``call_id`` to a viewer that hands decisions
    to durable runs; the response's status."""
    import json
    import urllib.request

    from elelem.cli.worker import temporal_delivery
    from elelem.testing.asgi import ASGIServer
    from elelem.web.app import create_app

    token = "durable-token-0123456789abcdef"
    app = create_app(store, token=token, models=[], deliver=temporal_delivery(address))
    body = {"conversation": conv_id, "approvals": {call_id: False}}
    with ASGIServer(app) as server:
        request = urllib.request.Request(
            f"{server.url}/api/resume?token={token}",
            data=json.dumps(body).encode(),
            headers={"content-type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.read() == b"sent to the durable run"
            return int(response.status)


def test_an_approval_signal_after_the_worker_pool_restarted_resumes_the_run(
    temporal_address: str, tmp_path: Path, lines: Path
) -> None:
    from click.testing import CliRunner

    from elelem.cli import main
    from elelem.turns.pending import pending

    store = SQLiteStore(tmp_path / "approve.db")
    conv = Conversation.create(store)
    queue = f"q-{uuid.uuid4().hex}"

    def waiting() -> Any:
        return pending(Conversation.open(store, conv.id))

    async def pool() -> Any:
        # Two workers, each on its own connection (one client registers one
        # worker per task queue).
        clients = [await TemporalClient.connect(temporal_address) for _ in range(2)]
        workers = [
            durable.worker(c, queue, store=store, elelem_client=Client(env={})) for c in clients
        ]
        return clients[0], workers

    async def begin() -> None:
        client, workers = await pool()
        async with durable.running(workers):
            await durable.start(
                client, conv.id, MODEL, "ask", tools=TOOLS, task_queue=queue, defer=True
            )
            # The log is the record while the run waits: the first call awaits approval.
            await asyncio.to_thread(_wait_for, waiting)

    asyncio.run(begin())
    first = waiting()
    assert [c.name for c in first.approval] == ["append_line"]
    assert not lines.exists()  # nothing ran before the approval

    async def finish() -> Any:
        client, workers = await pool()  # a new pool: no worker of the first is left
        async with durable.running(workers):
            # ``elelem approve`` reads what waits from the log and sends the decision.
            approved = await asyncio.to_thread(
                CliRunner().invoke,
                main,
                ["approve", conv.id, "--yes", first.approval[0].id, "--temporal", temporal_address],
                env={"ELELEM_STORE": str(tmp_path / "approve.db"), "ELELEM_HOME": str(tmp_path)},
            )
            assert approved.exit_code == 0, approved.output
            assert f"decisions sent to the durable run of {conv.id}" in approved.output
            second = await asyncio.to_thread(
                _wait_for,
                lambda: (w := waiting()) and w.turn == first.turn and w.calls != first.calls and w,
            )
            # The web page's Deny goes the same way (``elelem serve --temporal``).
            status = await asyncio.to_thread(
                _deny_on_the_page, store, temporal_address, conv.id, second.approval[0].id
            )
            assert status == 202
            handle = client.get_workflow_handle(durable.workflow_id(conv.id))
            return await durable.result(handle)

    result = asyncio.run(finish())
    assert durable_script.notes(lines) == "ask #0\n"  # the refused second call never ran
    assert result.end == "completed"
    events = Conversation.open(store, conv.id).events
    assert [e.kind for e in events].count("decision") == 2
    assert result.text.endswith("done: refused: the user did not approve this call")


OVERLOADED = b'{"type":"error","error":{"type":"overloaded_error","message":"busy"}}'


def test_a_provider_outage_is_retried_by_the_engine_and_not_counted_as_a_request(
    temporal_address: str, tmp_path: Path, lines: Path
) -> None:
    """A loopback Anthropic server overloaded once: the worker's client
    retries inside the request activity (a Retry kept in the record, as in
    process), and ``UsageLimits(requests=…)`` counts responses, not attempts."""
    from elelem.testing.servers import LoopbackServer, status
    from elelem.transport.retry import RetryPolicy
    from elelem.turns.limits import UsageLimitExceeded, UsageLimits
    from toolloop_wires import WIRES

    wire = WIRES[0]
    call = ("toolu_1", "append_line", {"note": "paid"})
    limits = UsageLimits(requests=1)
    retry = RetryPolicy(max_attempts=2, base_delay=0.0)  # no jitter: the logs compare

    def replies() -> list[Any]:
        return [status(529, OVERLOADED), wire.calls([call], 1), wire.text("Done.", 2)]

    with LoopbackServer(replies()) as server:
        local = Conversation.create(SQLiteStore(tmp_path / "local.db"))

        async def in_process() -> Any:
            async with Client(env=wire.env(server), retry=retry) as client:
                return await run(
                    local,
                    client,
                    wire.model,
                    "pay",
                    tools=[durable_script.append_line],
                    limits=limits,
                )

        with pytest.raises(UsageLimitExceeded) as local_exc:
            asyncio.run(in_process())
        local_requests = len(server.requests)
    assert local_requests == 2  # the overloaded attempt and its retry: one response
    lines.unlink()

    store = SQLiteStore(tmp_path / "durable.db")
    conv = Conversation.create(store)
    with LoopbackServer(replies()) as server:

        async def durably() -> Any:
            client = await TemporalClient.connect(temporal_address)
            queue = f"q-{uuid.uuid4().hex}"
            elelem_client = Client(env=wire.env(server), retry=retry)
            async with durable.worker(client, queue, store=store, elelem_client=elelem_client):
                handle = await durable.start(
                    client, conv.id, wire.model, "pay", tools=TOOLS, task_queue=queue, limits=limits
                )
                return await durable.result(handle)

        with pytest.raises(UsageLimitExceeded) as durable_exc:
            asyncio.run(durably())
        assert len(server.requests) == local_requests
    assert (
        durable_script.notes(lines) == "paid\n"
    )  # the call ran once; the second request was refused
    assert str(durable_exc.value) == str(local_exc.value)
    assert (durable_exc.value.limit, durable_exc.value.when) == ("requests", "before-request")
    assert durable_exc.value.result.end == local_exc.value.result.end == "usage-limit"
    (record,) = [e.body for e in Conversation.open(store, conv.id).events if e.kind == "response"]
    assert [r.status for r in record.retries] == [529]
    assert comparable(Conversation.open(store, conv.id).events) == comparable(
        Conversation.open(SQLiteStore(tmp_path / "local.db"), local.id).events
    )


def test_the_log_across_machines_is_postgresql(
    temporal_address: str, pg_url: str, tmp_path: Path, lines: Path
) -> None:
    """The same run on a PostgreSQL log (what workers on several machines
    share): the same events, and the call ledger beside them."""
    from elelem.conversation import open_store

    local, _ = in_process(tmp_path / "local.db", "shared")
    lines.unlink()
    store = open_store(pg_url)
    conv = Conversation.create(store)
    durable_script.SCRIPTED._responses = 0
    result, _, _ = asyncio.run(_durable_run(temporal_address, store, conv.id, "shared"))
    assert result.end == "completed"
    assert durable_script.notes(lines) == "shared #0\nshared #1\n"
    assert comparable(Conversation.open(store, conv.id).events) == comparable(local.events)


def test_a_fallback_of_two_overloaded_targets_makes_the_same_requests_durably(
    temporal_address: str, tmp_path: Path, lines: Path
) -> None:
    """``requests=1`` with a Fallback of two overloaded targets: the client's
    retries and the fallback's switch happen inside one request activity, so
    the durable run makes as many HTTP requests as the in-process one (the
    limit counts responses, not attempts) and ends with the same error."""
    from elelem.errors import StreamError
    from elelem.testing.servers import LoopbackServer, status
    from elelem.transport.retry import RetryPolicy
    from elelem.turns.limits import UsageLimits
    from toolloop_wires import WIRES

    anthropic, responses = WIRES[0], WIRES[1]
    limits = UsageLimits(requests=1)
    retry = RetryPolicy(max_attempts=3, base_delay=0.0)
    busy = b'{"error":{"type":"server_error","message":"busy"}}'

    def servers() -> tuple[LoopbackServer, LoopbackServer]:
        return (
            LoopbackServer([status(529, OVERLOADED)] * 3),
            LoopbackServer([status(503, busy)] * 3),
        )

    def env(a: LoopbackServer, r: LoopbackServer) -> dict[str, str]:
        return anthropic.env(a) | responses.env(r)

    a, r = servers()
    with a, r:
        local = Conversation.create(SQLiteStore(tmp_path / "local.db"))

        async def in_process() -> Any:
            async with Client(env=env(a, r), retry=retry) as client:
                return await run(local, client, durable_script.OVERLOADED_PAIR, "hi", limits=limits)

        with pytest.raises(StreamError) as local_exc:
            asyncio.run(in_process())
        local_requests = (len(a.requests), len(r.requests))
    assert sum(local_requests) == 6

    store = SQLiteStore(tmp_path / "durable.db")
    conv = Conversation.create(store)
    a, r = servers()
    with a, r:

        async def durably() -> Any:
            client = await TemporalClient.connect(temporal_address)
            queue = f"q-{uuid.uuid4().hex}"
            elelem_client = Client(env=env(a, r), retry=retry)
            async with durable.worker(client, queue, store=store, elelem_client=elelem_client):
                model = by_import("durable_script:OVERLOADED_PAIR")
                handle = await durable.start(
                    client, conv.id, model, "hi", task_queue=queue, limits=limits
                )
                return await durable.result(handle)

        with pytest.raises(type(local_exc.value)) as durable_exc:
            asyncio.run(durably())
        assert (len(a.requests), len(r.requests)) == local_requests
    assert str(durable_exc.value) == str(local_exc.value)
    assert comparable(Conversation.open(store, conv.id).events) == comparable(
        Conversation.open(SQLiteStore(tmp_path / "local.db"), local.id).events
    )


async def _two_turns(
    address: str, store: SQLiteStore, conv_id: str, model: str, history: str
) -> None:
    """Durable turns "first" then "second" of ``model`` with the scripted
    tools and the ``history`` processor, on one worker."""
    client = await TemporalClient.connect(address)
    queue = f"q-{uuid.uuid4().hex}"
    async with durable.worker(client, queue, store=store, elelem_client=Client(env={})):
        for prompt in ("first", "second"):
            handle = await durable.start(
                client, conv_id, model, prompt, tools=TOOLS, task_queue=queue, history=[history]
            )
            await durable.result(handle)


def test_middleware_and_history_processors_act_as_in_process(
    temporal_address: str, tmp_path: Path, lines: Path
) -> None:
    """Two turns through middleware (a default temperature) with a history
    processor (the last turn only): the model sees the same requests and
    the log is the same as elelem.run's."""
    from elelem.turns.toolloop import run

    seen: dict[str, list[Any]] = {}

    def requests() -> list[Any]:
        return [(r.options.temperature, [m.text for m in r.messages if m.role == "user"][:1])
                for r in durable_script.SCRIPTED.requests]  # fmt: skip

    local = Conversation.create(SQLiteStore(tmp_path / "local.db"))
    durable_script.SCRIPTED.requests.clear()
    durable_script.SCRIPTED._responses = 0

    async def in_process() -> None:
        async with Client(env={}) as client:
            for prompt in ("first", "second"):
                await run(local, client, durable_script.WRAPPED, prompt,
                          tools=[durable_script.append_line], history=[durable_script.KEEP_LAST])  # fmt: skip

    asyncio.run(in_process())
    seen["local"] = requests()
    store = SQLiteStore(tmp_path / "durable.db")
    conv = Conversation.create(store)
    durable_script.SCRIPTED.requests.clear()
    durable_script.SCRIPTED._responses = 0

    asyncio.run(_two_turns(temporal_address, store, conv.id, by_import("durable_script:WRAPPED"),
                           "durable_script:KEEP_LAST"))  # fmt: skip
    seen["durable"] = requests()
    assert seen["durable"] == seen["local"]
    # The second turn's requests carry that turn only, at the middleware's temperature.
    assert seen["local"][3:] == [(0.5, ["second"])] * 3
    assert comparable(Conversation.open(store, conv.id).events) == comparable(
        Conversation.open(SQLiteStore(tmp_path / "local.db"), local.id).events
    )


def test_a_history_processor_whose_module_reads_a_file_as_it_loads_runs_durably(
    temporal_address: str, tmp_path: Path, lines: Path
) -> None:
    """The workflow imports a history processor mid-run, where Temporal's
    sandbox forbids open(): the import is let read files as workflow code's
    imports are (else a module that reads its settings, or pytest's rewriting
    of a module named on the command line, fails the run)."""
    store = SQLiteStore(tmp_path / "durable.db")
    conv = Conversation.create(store)
    durable_script.SCRIPTED.requests.clear()

    asyncio.run(_two_turns(temporal_address, store, conv.id, MODEL, "durable_reading:KEEP"))
    users = [[m.text for m in r.messages if m.role == "user"][:1]
             for r in durable_script.SCRIPTED.requests]  # fmt: skip
    # Three requests a turn (two tool steps, then the answer); the second
    # turn's start at that turn's prompt, as the file said (one turn kept).
    assert users == [["first"]] * 3 + [["second"]] * 3


def test_a_model_no_worker_can_resolve_ends_the_run_with_the_error(
    temporal_address: str, tmp_path: Path
) -> None:
    """An unknown provider is a step error running again cannot mend: the
    run ends at once with it (not retried for ever), named as the step saw it."""
    from elelem.durable.wire import RemoteFailure

    store = SQLiteStore(tmp_path / "log.db")
    conv = Conversation.create(store)

    async def go() -> Any:
        client = await TemporalClient.connect(temporal_address)
        queue = f"q-{uuid.uuid4().hex}"
        async with durable.worker(client, queue, store=store, elelem_client=Client(env={})):
            handle = await durable.start(client, conv.id, "nowhere:model", "hi", task_queue=queue)
            return await durable.result(handle)

    with pytest.raises(RemoteFailure) as failed:
        asyncio.run(asyncio.wait_for(go(), 60))
    assert failed.value.type_name == "ConfigError"
    assert "nowhere" in str(failed.value)
    assert Conversation.open(store, conv.id).events == ()  # nothing stored, as in process
