"""The turn engine on Temporal: a workflow per run, an activity per I/O.

The workflow (:class:`ElelemRun`) runs :func:`~elelem.durable.orchestrate.run_durable`,
the tool loop of :func:`elelem.run` driven through Temporal activities: one
``elelem.request`` per model request (streamed to its end on a worker,
heartbeating after each chunk, with the client's own retry policy), one
``elelem.call`` per tool call and one ``elelem.append`` per commit to the
log, plus one ``elelem.open`` that reads the conversation as the run finds
it.  The conversation log (SQLite on one machine, PostgreSQL across
machines) stays the record: ``elelem show``, ``log``, ``serve`` and the
exports read a durable run like any other.

A run that defers (``defer=True``, the durable ``approve="defer"``) waits in
the workflow, for days if need be, for a ``decide`` signal (:func:`decide`,
``elelem approve --temporal``); no worker needs to be up meanwhile.

Versioning: the workflow is the engine's flow, so a change to the engine's
order of actions is a change of workflow code.  Drain the task queue (let
running runs end, or reach a wait for a decision recorded before the
deploy), or start the new code on a new task queue; a history recorded by
the previous code is checked by ``temporalio.worker.Replayer`` in the tests.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import timedelta
from typing import Any, TypeVar

from temporalio import activity, workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from elelem.conversation.events import Draft, Event
    from elelem.durable import wire
    from elelem.durable.orchestrate import result_of, run_durable
    from elelem.durable.wire import (
        CallInput,
        Decisions,
        Opened,
        RemoteFailure,
        RequestInput,
        RunInput,
        Streamed,
    )
    from elelem.turns.engine import TurnResult
    from elelem.vocabulary import ToolResultBlock

T = TypeVar("T")

WORKFLOW = "elelem.run"
SIGNAL = "decide"
HEARTBEAT = 10.0
"""Default heartbeat timeout of every activity, in seconds: how soon a dead
worker's activity is given to another."""


def workflow_id(conversation: str) -> str:
    """The workflow id of a conversation's durable run: one run per
    conversation at a time, as the log has one writer."""
    return f"elelem-{conversation}"


@workflow.defn(name=WORKFLOW)
class ElelemRun:
    """One durable run of the tool loop (input and output are
    :mod:`elelem.durable.wire` bytes: a :class:`RunInput`, an
    :class:`~elelem.durable.orchestrate.Outcome`)."""

    def __init__(self) -> None:
        self._decisions: list[Decisions] = []

    @workflow.signal(name=SIGNAL)
    def decide(self, data: bytes) -> None:
        """Approval decisions (a :class:`Decisions`) for a deferred step."""
        self._decisions.append(wire.loads(data, Decisions))

    @workflow.query(name="sandboxed")
    def sandboxed(self) -> bool:
        """Whether this workflow code runs in Temporal's sandbox."""
        return workflow.unsafe.in_sandbox()

    @workflow.run
    async def run(self, data: bytes, heartbeat: float = HEARTBEAT) -> bytes:
        """The run, to its outcome."""
        run = wire.loads(data, RunInput)
        outcome = await run_durable(run, _WorkflowPort(self, run, heartbeat))
        return wire.dumps(outcome)


class _WorkflowPort:
    """The durable steps as Temporal activities (see :class:`~elelem.durable.orchestrate.Port`)."""

    def __init__(self, owner: ElelemRun, run: RunInput, heartbeat: float) -> None:
        self.owner = owner
        self.run = run
        self.heartbeat = timedelta(seconds=heartbeat)

    async def activity(self, name: str, *args: Any) -> Any:
        try:
            return await workflow.execute_activity(
                name,
                args=args,
                start_to_close_timeout=timedelta(days=1),
                heartbeat_timeout=self.heartbeat,
                retry_policy=RetryPolicy(
                    initial_interval=timedelta(milliseconds=100),
                    maximum_interval=timedelta(seconds=10),
                    non_retryable_error_types=list(wire.NOT_RETRIED),
                ),
            )
        except ActivityError as exc:
            cause = exc.cause
            if isinstance(cause, ApplicationError):
                # The step's own error, named as the step named it.
                raise RemoteFailure(cause.type or "Error", cause.message) from None
            raise

    async def open(self, run: RunInput) -> Opened:
        data = await self.activity("elelem.open", run.conversation, run.model, list(run.tools))
        opened: Opened = wire.loads(data, Opened)
        return opened

    async def append(self, drafts: Sequence[Draft], known: int) -> tuple[Event, ...]:
        data = await self.activity(
            "elelem.append", self.run.conversation, wire.dump_drafts(drafts), known
        )
        return wire.load_events(data)

    async def request(self, request: RequestInput) -> Streamed:
        data = await self.activity("elelem.request", wire.dumps(request))
        streamed: Streamed = wire.loads(data, Streamed)
        return streamed

    async def call(self, call: CallInput) -> ToolResultBlock:
        data = await self.activity("elelem.call", wire.dumps(call))
        result: ToolResultBlock = wire.loads(data, ToolResultBlock)
        return result

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    def new_id(self) -> str:
        return workflow.uuid4().hex

    def patched(self, change: str) -> bool:
        return workflow.patched(change)

    async def decisions(self) -> Decisions:
        await workflow.wait_condition(lambda: bool(self.owner._decisions))
        return self.owner._decisions.pop(0)

    def load(self, path: str) -> Any:
        # The sandbox imports the processor's module afresh, mid-run, where it
        # forbids open(); Temporal allows it while importing workflow code (a
        # module reading a file as it loads, an import hook reading source, as
        # pytest's assertion rewriter does).  Only the import is unrestricted:
        # the processor itself runs under the sandbox's rules.
        with workflow.unsafe.sandbox_unrestricted():
            return wire.import_object(path)


# -- the worker's side ---------------------------------------------------------------


async def _beating(work: Awaitable[T]) -> T:
    """``work``, heartbeating while it runs, four times per heartbeat
    timeout (a tool or a commit says nothing itself; only a dead worker may
    miss its heartbeats)."""
    timeout = activity.info().heartbeat_timeout
    every = timeout.total_seconds() / 4 if timeout else 1.0

    async def beat() -> None:
        while True:
            activity.heartbeat()
            await asyncio.sleep(every)

    beater = asyncio.ensure_future(beat())
    try:
        return await work
    finally:
        beater.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beater


class Activities:
    """The four activities of a worker, over its :class:`~elelem.durable.steps.Steps`."""

    def __init__(self, steps: Any) -> None:
        self.steps = steps

    @activity.defn(name="elelem.open")
    async def open(self, conversation: str, model: str, tools: list[str]) -> bytes:
        """The conversation as the run finds it (see :meth:`Steps.open`)."""
        opened = await asyncio.to_thread(self.steps.open, conversation, model, tools)
        return wire.dumps(opened)

    @activity.defn(name="elelem.append")
    async def append(self, conversation: str, drafts: bytes, known: int) -> bytes:
        """One commit to the log (see :meth:`Steps.append`)."""
        work = asyncio.to_thread(self.steps.append, conversation, wire.load_drafts(drafts), known)
        result: bytes = await _beating(work)
        return result

    @activity.defn(name="elelem.request")
    async def request(self, data: bytes) -> bytes:
        """One model request, heartbeating after each chunk."""
        request = wire.loads(data, RequestInput)
        streamed = await _beating(self.steps.request(request, activity.heartbeat))
        return wire.dumps(streamed)

    @activity.defn(name="elelem.call")
    async def call(self, data: bytes) -> bytes:
        """One tool call, at most once per key (see :class:`CallInput`)."""
        call = wire.loads(data, CallInput)
        result = await _beating(self.steps.call(call))
        return wire.dumps(result)

    def all(self) -> list[Callable[..., Any]]:
        """The activities, for a :class:`temporalio.worker.Worker`."""
        return [self.open, self.append, self.request, self.call]


def sandbox() -> Any:
    """The workflow runner of elelem's workers: Temporal's sandbox, with
    elelem itself (the engine, the log's projections, the codec) and msgspec
    passed through, as Temporal documents for deterministic libraries (importing it
    afresh for every run would cost each run the whole package's import)."""
    from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

    restrictions = SandboxRestrictions.default.with_passthrough_modules("elelem", "msgspec")
    return SandboxedWorkflowRunner(restrictions=restrictions)


def replayer() -> Any:
    """A :class:`temporalio.worker.Replayer` of elelem's workflow, as its
    workers run it: replaying a recorded history checks that new worker code
    makes the same decisions (see the module docs on versioning)."""
    from temporalio.worker import Replayer

    return Replayer(workflows=[ElelemRun], workflow_runner=sandbox())


def worker(
    client: Any,
    task_queue: str,
    *,
    store: Any = None,
    elelem_client: Any = None,
    **options: Any,
) -> Any:
    """A :class:`temporalio.worker.Worker` running elelem's workflow and
    activities on ``task_queue``, writing to ``store`` (a
    :class:`~elelem.conversation.Store` or its URL; the default store when
    None) with ``elelem_client`` (a default :class:`elelem.Client` when None).
    ``options`` go to the Worker (``max_concurrent_activities``, …).  Run it
    with ``await worker.run()`` or ``async with worker:``."""
    from temporalio.worker import Worker

    from elelem.client import Client
    from elelem.conversation import open_store
    from elelem.durable.steps import Steps

    if store is None or isinstance(store, str):
        store = open_store(store)
    steps = Steps(store, elelem_client or Client())
    activities = Activities(steps)
    options.setdefault("workflow_runner", sandbox())
    return Worker(
        client, task_queue=task_queue, workflows=[ElelemRun], activities=activities.all(), **options
    )


# -- the caller's side ---------------------------------------------------------------


async def start(
    client: Any,
    conversation: str,
    model: str,
    prompt: str | None,
    *,
    task_queue: str,
    heartbeat: float = HEARTBEAT,
    task_timeout: float | None = None,
    **options: Any,
) -> Any:
    """Start a durable run of the tool loop on ``conversation`` and return
    its :class:`temporalio.client.WorkflowHandle` (:func:`result` awaits it).

    ``model`` is an address the workers' client resolves, or
    :func:`elelem.durable.by_import`'s reference to a model object; ``tools``
    are functions or tools defined at module level, or their import paths
    (``package.module:name``), which every worker imports.  The other
    options are :func:`~elelem.durable.wire.run_input`'s: ``system``, ``max_steps``, ``defer``
    (wait for :func:`decide` signals), ``tool_timeout``,
    ``max_continuations``, ``streamed``, ``limits``, ``history`` (import
    paths of history processors), ``options``.  ``heartbeat`` is how many
    seconds a dead worker's activity takes to move to another worker;
    ``task_timeout`` how many a workflow task a dead worker held (Temporal's
    default, 10, when None)."""
    data = wire.dumps(wire.run_input(conversation, model, prompt, **options))
    return await client.start_workflow(
        WORKFLOW,
        args=[data, heartbeat],
        id=workflow_id(conversation),
        task_queue=task_queue,
        task_timeout=None if task_timeout is None else timedelta(seconds=task_timeout),
    )


async def result(handle: Any) -> TurnResult:
    """The run's :class:`~elelem.turns.engine.TurnResult`, or its error
    raised again (a :class:`~elelem.turns.limits.UsageLimitExceeded` with
    the result so far, a stream error, …)."""
    data = await handle.result()
    return result_of(data)


async def decide(
    client: Any,
    conversation: str,
    *,
    approvals: dict[str, bool] | None = None,
    results: dict[str, Any] | None = None,
) -> None:
    """Deliver approval decisions (and external tools' results) to the
    conversation's waiting durable run."""
    handle = client.get_workflow_handle(workflow_id(conversation))
    await handle.signal(SIGNAL, wire.dumps(Decisions(approvals or {}, results or {})))


@contextlib.asynccontextmanager
async def running(workers: Sequence[Any]) -> AsyncIterator[None]:
    """Run ``workers`` for the duration of the block."""
    async with contextlib.AsyncExitStack() as stack:
        for w in workers:
            await stack.enter_async_context(w)
        yield


__all__ = [
    "HEARTBEAT",
    "SIGNAL",
    "WORKFLOW",
    "Activities",
    "ElelemRun",
    "decide",
    "replayer",
    "result",
    "sandbox",
    "start",
    "worker",
    "workflow_id",
]
