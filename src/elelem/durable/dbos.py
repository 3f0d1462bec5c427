"""The turn engine on DBOS: a workflow per run, a step per I/O.

The same driver as :mod:`elelem.durable.temporal`
(:func:`~elelem.durable.orchestrate.run_durable`), over DBOS Transact: the
run is a DBOS workflow whose steps are the worker's
:class:`~elelem.durable.steps.Steps` (``open``, ``request``, ``append``,
``call``); DBOS checkpoints each step's output in its system database
(SQLite on one machine, PostgreSQL across machines) and, when a process
that ran a workflow starts again with the same executor id, re-runs the
workflow from its checkpoints: completed steps return what they returned,
the interrupted one runs again.  The conversation log stays the record.

Runs are enqueued on a DBOS queue (:data:`QUEUE`) by a
:class:`dbos.DBOSClient` (:func:`start`), and any worker process listening
to it (:func:`launch`, ``elelem worker dbos``) takes them.  A deferred run
waits in :func:`DBOS.recv_async` for a ``decide`` message (:func:`decide`).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from dbos import DBOS, DBOSClient, DBOSConfig, StepOptions

from elelem.conversation.events import Draft, Event
from elelem.durable import wire
from elelem.durable.orchestrate import result_of, run_durable
from elelem.durable.steps import Steps
from elelem.durable.wire import CallInput, Decisions, Opened, RequestInput, RunInput, Streamed
from elelem.turns.engine import TurnResult
from elelem.vocabulary import ToolResultBlock

WORKFLOW = "elelem.run"
QUEUE = "elelem"
TOPIC = "decide"
VERSION = "elelem-durable-2"
"""The application version of elelem's DBOS workflow: a run is recovered only
by executors of the version that started it, so a change to the workflow's
order of steps takes a new one (drain the old executors' runs first)."""
WAIT = 3600.0
"""Seconds one wait for decisions lasts before it waits again (a run may
wait for days: each wait is a durable receive)."""

_steps: Steps | None = None


def workflow_id(conversation: str) -> str:
    """The workflow id of a conversation's durable run."""
    return f"elelem-{conversation}"


def _worker_steps() -> Steps:
    if _steps is None:
        raise wire.DurableError("this process is no DBOS worker: elelem.durable.dbos.launch it")
    return _steps


async def _open(conversation: str, model: str, tools: list[str]) -> bytes:
    opened = await asyncio.to_thread(_worker_steps().open, conversation, model, tools)
    return wire.dumps(opened)


async def _append(conversation: str, drafts: bytes, known: int) -> bytes:
    stored: bytes = await asyncio.to_thread(
        _worker_steps().append, conversation, wire.load_drafts(drafts), known
    )
    return stored


async def _request(data: bytes) -> bytes:
    streamed = await _worker_steps().request(wire.loads(data, RequestInput), lambda: None)
    return wire.dumps(streamed)


async def _call(data: bytes) -> bytes:
    result = await _worker_steps().call(wire.loads(data, CallInput))
    return wire.dumps(result)


def _mendable(exc: BaseException) -> bool:
    return type(exc).__name__ not in wire.NOT_RETRIED


def _step(name: str) -> StepOptions:
    # A step's error is retried with back-off unless retrying cannot mend it
    # (the request and call steps return their errors: only open and append raise).
    return {
        "name": name,
        "retries_allowed": True,
        "max_attempts": 8,
        "interval_seconds": 0.1,
        "backoff_rate": 2.0,
        "should_retry": _mendable,
    }


class _Port:
    """The durable steps as DBOS steps (see :class:`~elelem.durable.orchestrate.Port`)."""

    def __init__(self, run: RunInput) -> None:
        self.run = run
        self.ids = 0

    async def open(self, run: RunInput) -> Opened:
        data = await DBOS.run_step_async(
            _step("elelem.open"), _open, run.conversation, run.model, list(run.tools)
        )
        opened: Opened = wire.loads(data, Opened)
        return opened

    async def append(self, drafts: Sequence[Draft], known: int) -> tuple[Event, ...]:
        data = await DBOS.run_step_async(
            _step("elelem.append"), _append, self.run.conversation, wire.dump_drafts(drafts), known
        )
        return wire.load_events(data)

    async def request(self, request: RequestInput) -> Streamed:
        data = await DBOS.run_step_async(_step("elelem.request"), _request, wire.dumps(request))
        streamed: Streamed = wire.loads(data, Streamed)
        return streamed

    async def call(self, call: CallInput) -> ToolResultBlock:
        data = await DBOS.run_step_async(_step("elelem.call"), _call, wire.dumps(call))
        result: ToolResultBlock = wire.loads(data, ToolResultBlock)
        return result

    async def sleep(self, seconds: float) -> None:
        await DBOS.sleep_async(seconds)

    def new_id(self) -> str:
        # The workflow re-runs in the same order on recovery: its id and a
        # counter name each commit the same way every time.
        self.ids += 1
        return uuid.uuid5(uuid.NAMESPACE_URL, f"{DBOS.workflow_id}/{self.ids}").hex

    def patched(self, change: str) -> bool:
        # DBOS recovers a run only on executors of the application version
        # that started it (VERSION), so every run here has every change.
        return True

    async def decisions(self) -> Decisions:
        while True:
            data = await DBOS.recv_async(TOPIC, timeout_seconds=WAIT)
            if data is not None:
                decisions: Decisions = wire.loads(data, Decisions)
                return decisions

    def load(self, path: str) -> Any:
        # A DBOS workflow is ordinary Python: a plain import.
        return wire.import_object(path)


@DBOS.workflow(name=WORKFLOW)
async def elelem_run(data: bytes) -> bytes:
    """One durable run of the tool loop (a :class:`RunInput` in, an
    :class:`~elelem.durable.orchestrate.Outcome` out, as wire bytes)."""
    run = wire.loads(data, RunInput)
    outcome = await run_durable(run, _Port(run))
    return wire.dumps(outcome)


def launch(
    store: Any,
    system_database_url: str,
    *,
    elelem_client: Any = None,
    executor_id: str | None = None,
    name: str = "elelem",
    polling: float = 0.1,
) -> DBOS:
    """Make this process a DBOS worker of elelem's runs: it takes runs from
    :data:`QUEUE` and, launched again with the same ``executor_id`` after a
    crash, finishes the runs it had.  ``store`` is the log (a
    :class:`~elelem.conversation.Store` or its URL); ``polling`` how often
    (seconds) the queue is looked at for new runs."""
    global _steps
    from elelem.client import Client
    from elelem.conversation import open_store

    if store is None or isinstance(store, str):
        store = open_store(store)
    _steps = Steps(store, elelem_client or Client())
    config: DBOSConfig = {
        "name": name,
        "system_database_url": system_database_url,
        "application_version": VERSION,
        "notification_listener_polling_interval_sec": 0.05,
        "log_level": "WARNING",
    }
    if executor_id is not None:
        config["executor_id"] = executor_id
    dbos = DBOS(config=config)
    with _held_logs(logging.getLogger("dbos")):
        DBOS.launch()
    DBOS.register_queue(QUEUE, polling_interval_sec=polling)
    return dbos


class _Holding(logging.Filter):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def filter(self, record: logging.LogRecord) -> bool:
        self.records.append(record)
        return False


@contextmanager
def _held_logs(logger: logging.Logger) -> Iterator[None]:
    """What ``logger`` says inside the block, held: logged once the block
    succeeds; dropped when it raises, since the exception says it (DBOS logs
    the traceback of a failed launch, then raises the same error, which the
    caller reports in one line)."""
    holding = _Holding()
    logger.addFilter(holding)
    try:
        yield
    finally:
        logger.removeFilter(holding)
    for record in holding.records:
        logger.handle(record)


async def start(
    client: DBOSClient, conversation: str, model: str, prompt: str | None, **options: Any
) -> Any:
    """Enqueue a durable run of the tool loop on ``conversation`` (options
    as :func:`elelem.durable.wire.run_input`); its handle
    (:func:`result` awaits it)."""
    data = wire.dumps(wire.run_input(conversation, model, prompt, **options))
    return await client.enqueue_async(
        {
            "queue_name": QUEUE,
            "workflow_name": WORKFLOW,
            "workflow_id": workflow_id(conversation),
            "app_version": VERSION,
        },
        data,
    )


async def result(handle: Any) -> TurnResult:
    """The run's result, or its error raised again."""
    data = await handle.get_result()
    return result_of(data)


async def decide(
    client: DBOSClient,
    conversation: str,
    *,
    approvals: dict[str, bool] | None = None,
    results: dict[str, Any] | None = None,
) -> None:
    """Send approval decisions to the conversation's waiting durable run."""
    message = wire.dumps(Decisions(approvals or {}, results or {}))
    await client.send_async(workflow_id(conversation), message, TOPIC)


__all__ = [
    "QUEUE",
    "TOPIC",
    "VERSION",
    "WORKFLOW",
    "decide",
    "elelem_run",
    "launch",
    "result",
    "start",
    "workflow_id",
]
