"""The third driver: the turn engine's flow inside a durable workflow.

In process, :func:`elelem.turns.drive.drive` does each action's I/O itself.
Here the workflow does none: it holds a *mirror* of the conversation (the
events the steps returned, in store order) and hands every action's I/O to
a :class:`Port`, which a workflow engine implements with its own durable
steps (:mod:`elelem.durable.temporal`'s activities):

=================  =====================================================
action             the port's step
=================  =====================================================
:class:`Send`      ``request``: the whole stream, read on a worker; what
                   the engine acts on (the start chunk, each flush's
                   committed parts) comes back and is replayed as the
                   :class:`Read`\\ s, the error (if any) raised at the end
:class:`Append`    ``append``: one commit to the log, idempotent by the
                   drafts' ids (drawn deterministically by the workflow)
:class:`Call`      of the tool loop's step: one ``call`` per tool call,
                   concurrently, idempotent by call (its
                   log event's id and its id)
:class:`Wait`      the engine's durable timer
=================  =====================================================

Every event the in-process driver stores is stored here, in the same order
(a response's parts are committed with its record, one append instead of
one per part: :data:`ONE_COMMIT_PER_RESPONSE`), so a durable run's log is
the in-process run's log.  The engine, the tool loop and the resume flow are the
very ones :func:`elelem.run` drives: no second loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import msgspec

from elelem.conversation.events import Draft, Event, MessageBody
from elelem.conversation.log import Conversation
from elelem.conversation.projections import Projection
from elelem.durable.wire import (
    CallInput,
    Decisions,
    DurableError,
    Failure,
    Opened,
    RequestArgs,
    RequestInput,
    RunInput,
    Streamed,
    failure_of,
    raise_again,
)
from elelem.stream import AssembledResponse, Chunk
from elelem.tools import ToolOutcome
from elelem.turns.deferred import resume_flow
from elelem.turns.drive import _Run
from elelem.turns.engine import (
    Append,
    Call,
    Flow,
    Read,
    Send,
    TurnEngine,
    TurnResult,
    TurnSettings,
    Wait,
)
from elelem.turns.limits import UsageLimitExceeded
from elelem.turns.pending import AWAITING_APPROVAL, AWAITING_RESULTS, ResumeError
from elelem.turns.toolloop import MAX_STEPS, ToolLoop, _Work, tool_loop
from elelem.vocabulary import (
    ConversationId,
    EventId,
    Part,
    ProviderId,
    ToolCallBlock,
    ToolResultBlock,
    ToolSpec,
    approval_response,
)

T = TypeVar("T")

NO_APPROVER = "no approval callback was given"
"""What a hosted approval request is answered when the run does not defer
(as :func:`elelem.run` answers it without an ``approve`` callback)."""


class Port(Protocol):
    """The durable steps a workflow engine gives the driver."""

    async def open(self, run: RunInput) -> Opened:
        """The conversation as the run finds it, and its model and tools."""
        ...

    async def append(self, drafts: Sequence[Draft], known: int) -> tuple[Event, ...]:
        """Commit ``drafts`` (ids set) after the log's event ``known``; the
        stored events (those of an earlier attempt that committed, if any)."""
        ...

    async def request(self, request: RequestInput) -> Streamed:
        """One model request, streamed to its end on a worker."""
        ...

    async def call(self, call: CallInput) -> ToolResultBlock:
        """One tool call, at most once per key (see :class:`CallInput`)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """A durable timer."""
        ...

    def new_id(self) -> str:
        """A fresh hex string, the same on every replay."""
        ...

    def patched(self, change: str) -> bool:
        """Whether this run takes the workflow change named ``change``
        (False only where an older run's recorded history says it was made
        before the change: the engine's versioning)."""
        ...

    async def decisions(self) -> Decisions:
        """The next approval decisions delivered to the run."""
        ...

    def load(self, path: str) -> Any:
        """The object at import path ``path`` (a history processor, which
        runs in the workflow), imported as the engine imports workflow code."""
        ...


# -- what the workflow holds --------------------------------------------------------


class _NoStore:
    """The mirror's store: every write goes through the port, never here."""

    def __getattr__(self, name: str) -> Any:
        raise DurableError(f"a durable workflow does no I/O (store.{name}): steps do")


class Mirror(Conversation):
    """The conversation as the workflow sees it: the events the steps
    returned.  Projections keep blob references as they are (a request's
    step loads their bytes on the worker)."""

    def __init__(self, id: str, events: Sequence[Event]) -> None:
        super().__init__(_NoStore(), ConversationId(id), events)

    def _with_blobs(self, projection: Projection) -> Projection:
        return projection

    def take(self, events: Sequence[Event]) -> None:
        """Note events a step stored."""
        self._note(events)

    @property
    def last_seq(self) -> int:
        """The sequence number of the last event known."""
        events = self._events
        return events[-1].seq if events else 0


@dataclass(frozen=True)
class NamedModel:
    """The run's model as the workflow knows it: the names its worker
    resolved (a :class:`~elelem.providers.protocol.Model` that is never opened
    here; the request step opens the real one)."""

    address: str
    provider: ProviderId
    model: str

    def open(self, *args: Any, **kwargs: Any) -> Any:
        """Never called in a workflow."""
        raise DurableError("a durable workflow opens no stream: its request step does")


@dataclass(frozen=True)
class NamedTool:
    """A tool as the workflow knows it: its spec and how it runs (the call
    step runs the real one, found by import path)."""

    spec: ToolSpec
    name: str
    idempotent: bool
    timeout: float | None
    external: bool

    async def call(self, arguments: str) -> ToolOutcome:
        """Never called in a workflow."""
        raise DurableError("a durable workflow runs no tool: its call step does")


@dataclass
class DurableEngine(TurnEngine):
    """The turn engine with the payload provider its worker resolved."""

    payloads_from: str | None = None

    def payloads_provider(self) -> str | None:
        """What the worker said (see :class:`~elelem.durable.wire.Opened`)."""
        return self.payloads_from


class Replayed:
    """A request's stream as the engine reads it back from the step's result
    (a :class:`~elelem.turns.actions.StreamView`)."""

    def __init__(self, streamed: Streamed) -> None:
        self.streamed = streamed
        self.request_id = streamed.request_id
        self.dropped = tuple(streamed.dropped)
        self._pairs = iter(streamed.flushed)
        self.ended = False

    def step(self) -> tuple[Chunk | None, tuple[Part, ...]] | None:
        """The next flush, or None at the end (the step's error raised there)."""
        flushed = next(self._pairs, None)
        if flushed is not None:
            return flushed.start, flushed.committed
        self.ended = True
        if self.streamed.error is not None:
            raise raise_again(self.streamed.error)
        return None

    def partial(self) -> AssembledResponse:
        """What the stream kept."""
        return self.streamed.response

    def result(self) -> AssembledResponse:
        """The assembled response."""
        return self.streamed.response

    def open_parts(self) -> tuple[Part, ...]:
        """Nothing is in progress once a step returned."""
        return ()


def step_marker(work: _Work) -> Any:
    """The tool loop's step executor in a durable run: a marker the driver
    turns into one call step per tool call (never called itself)."""
    raise DurableError("the durable step executor runs through the driver")


# -- the driver -----------------------------------------------------------------------


ONE_COMMIT_PER_RESPONSE = "elelem-one-commit-per-response"
"""The workflow change that commits a response's parts with its record.

A request's parts reach the workflow together, when its step returns, so
committing each on its own (what the first durable driver did) buys
nothing: the parts are held and committed with the response's record, one
append step instead of one per part.  The log's events are the same (their
``seq`` too); only the number of commits differs.  Runs whose history was
recorded before the change replay it as it was."""


@dataclass
class Driver:
    """Drives flows of one run through ``port``, keeping ``mirror`` current."""

    port: Port
    mirror: Mirror
    run: RunInput
    held: list[Draft] = field(default_factory=list)
    """The parts of the response being read, held for its record's commit."""

    async def drive(self, flow: Flow[T]) -> T:
        """Run ``flow`` to its value; each action's failure is thrown into it."""
        state = _Run(flow)
        while (action := state.next()) is not None:
            try:
                state.reply = await self.do(state, action)
            except Exception as exc:  # noqa: BLE001 - thrown into the flow, which decides
                state.error = exc
        if self.held:
            await self.append(())  # nothing follows the parts: they are committed alone
        return state.value  # type: ignore[no-any-return]

    async def do(self, state: _Run, action: Any) -> Any:
        """The I/O of one action."""
        if isinstance(action, Read):
            return state.stream.step()
        if isinstance(action, Append):
            stream = state.stream
            reading = isinstance(stream, Replayed) and not stream.ended
            if reading and self.port.patched(ONE_COMMIT_PER_RESPONSE):
                self.held.extend(self.named(action.drafts))
                return ()  # the engine reads nothing back of a part's commit
            return await self.append(action.drafts)
        if isinstance(action, Send):
            if self.held:
                await self.append(())
            request = RequestInput(self.run.model, _request_args(action.arguments), action.streamed)
            state.stream = Replayed(await self.port.request(request))
            return state.stream
        if isinstance(action, Call):
            if action.function is step_marker:
                return await self.step(action.args[0])
            raise DurableError(
                f"a durable run cannot call {action.describe()} in its workflow "
                "(observers and approval callbacks need a process: use approve='defer')"
            )
        if isinstance(action, Wait):
            return await self.port.sleep(action.seconds)
        raise DurableError(f"a durable driver cannot do {action!r}")

    def named(self, drafts: Sequence[Draft]) -> tuple[Draft, ...]:
        """``drafts`` with ids the replay draws again."""
        return tuple(
            d if d.id is not None else msgspec.structs.replace(d, id=self.new_event_id())
            for d in drafts
        )

    async def append(self, drafts: Sequence[Draft]) -> tuple[Event, ...]:
        """One commit (with the parts held before it); the events of ``drafts``."""
        held, self.held = self.held, []
        events = await self.port.append((*held, *self.named(drafts)), self.mirror.last_seq)
        self.mirror.take(events)
        return events[len(held) :]

    def new_event_id(self) -> EventId:
        """An event id in the store's format (``ev_`` and 16 hex digits)."""
        return EventId("ev_" + self.port.new_id()[:16])

    async def step(self, work: _Work) -> tuple[tuple[ToolResultBlock, ...], tuple[Any, ...]]:
        """The calls of one step, each its own call step, concurrently."""
        conv, tools, settle, timeout = (
            self.run.conversation,
            self.run.tools,
            work.settle,
            self.run.tool_timeout,
        )
        calls = [
            CallInput(conv, c, tools, settle, timeout, self.call_key(c.id)) for c in work.calls
        ]
        results = await asyncio.gather(*(self.port.call(c) for c in calls))
        answers = tuple(approval_response(a, False, NO_APPROVER) for a in work.approvals)
        return tuple(results), answers

    def call_key(self, call_id: str) -> str:
        """A call's idempotency key: the id of the latest event holding it, and its id."""
        for event in reversed(self.mirror.events):
            body = event.body
            if isinstance(body, MessageBody) and any(
                isinstance(p, ToolCallBlock) and p.id == call_id for p in body.content
            ):
                return f"{event.id}/{call_id}"
        raise DurableError(f"no event of the log holds tool call {call_id!r}")


def _request_args(arguments: dict[str, Any]) -> RequestArgs:
    return RequestArgs(
        tuple(arguments["messages"]),
        tuple(arguments.get("response_payloads") or ()),
        arguments.get("system"),
        tuple(arguments.get("tools") or ()),
        tuple(arguments.get("hosted_tools") or ()),
        arguments.get("options"),
    )


# -- the run ----------------------------------------------------------------------------


class Outcome(msgspec.Struct, frozen=True):
    """How a durable run ended: its result, or the error that ended it (with
    the result so far, for a usage limit)."""

    result: TurnResult | None
    error: Failure | None = None
    limit: tuple[str, Any, Any, str] | None = None


def _settings(run: RunInput, port: Port) -> TurnSettings:
    settings: TurnSettings = {"streamed": run.streamed}
    if run.system is not None:
        settings["system"] = run.system
    if run.max_continuations is not None:
        settings["max_continuations"] = run.max_continuations
    if run.limits is not None:
        settings["limits"] = run.limits.limits()
    if run.history:
        settings["history"] = tuple(port.load(h) for h in run.history)
    if run.options is not None:
        settings["options"] = run.options
    return settings


async def run_durable(run: RunInput, port: Port) -> Outcome:
    """The tool loop of ``run`` (and, when it defers, each resume as its
    decisions arrive), driven through ``port``: its outcome, an error of the
    run (a step's included) kept in it."""
    try:
        opened = await port.open(run)
        return await _run(run, opened, port)
    except UsageLimitExceeded as exc:
        return Outcome(exc.result, failure_of(exc), (exc.limit, exc.maximum, exc.value, exc.when))
    except Exception as exc:  # noqa: BLE001 - the run's error is its outcome, raised to the caller
        return Outcome(None, failure_of(exc))


async def _run(run: RunInput, opened: Opened, port: Port) -> Outcome:
    from elelem.durable.wire import load_events

    mirror = Mirror(run.conversation, load_events(opened.events))
    tools = [NamedTool(t.spec, t.name, t.idempotent, t.timeout, t.external) for t in opened.tools]
    loop = ToolLoop(tools, approve="defer" if run.defer else None, timeout=run.tool_timeout)
    target = NamedModel(opened.address, ProviderId(opened.provider), opened.model)
    settings = _settings(run, port)
    max_steps = MAX_STEPS if run.max_steps is None else run.max_steps
    driver = Driver(port, mirror, run)

    def engine(user_input: str | None) -> DurableEngine:
        made = DurableEngine.create(mirror, target, user_input, **loop.asking(settings))
        assert isinstance(made, DurableEngine)
        made.payloads_from = opened.payloads_provider
        return made

    flow = tool_loop(engine(run.prompt), loop, step_marker, max_steps=max_steps)
    result = await driver.drive(flow)
    while result.end in (AWAITING_APPROVAL, AWAITING_RESULTS):
        decisions = await port.decisions()
        try:
            resumed = resume_flow(
                engine(None), loop, step_marker, decisions.approvals, decisions.results,
                max_steps=max_steps,
            )  # fmt: skip
            result = await driver.drive(resumed)
        except ResumeError:
            continue  # those decisions answer nothing waiting: wait for others
    return Outcome(result)


def result_of(data: bytes) -> TurnResult:
    """The result of a run whose workflow returned ``data`` (an encoded
    :class:`Outcome`), or its error raised again."""
    from elelem.durable.wire import loads

    outcome: Outcome = loads(data, Outcome)
    return outcome_result(outcome)


def outcome_result(outcome: Outcome) -> TurnResult:
    """The run's result, or its error raised again."""
    if outcome.limit is not None:
        limit, maximum, value, when = outcome.limit
        exceeded = UsageLimitExceeded(limit, maximum, value, when)
        exceeded.args = (outcome.error.message if outcome.error else str(exceeded),)
        exceeded.result = outcome.result
        raise exceeded
    if outcome.error is not None:
        raise raise_again(outcome.error)
    assert outcome.result is not None
    return outcome.result


__all__ = [
    "ONE_COMMIT_PER_RESPONSE",
    "Driver",
    "DurableEngine",
    "Mirror",
    "NamedModel",
    "NamedTool",
    "Outcome",
    "Port",
    "Replayed",
    "outcome_result",
    "result_of",
    "run_durable",
    "step_marker",
]
