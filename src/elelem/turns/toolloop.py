"""The durable tool loop, on the one turn engine.

:func:`run` (async) and :func:`run_sync` drive ONE flow,
:func:`tool_loop`, made of the :class:`~elelem.turns.engine.TurnEngine`'s
own pieces: begin the turn, then respond; when a response holds client tool
calls (or a provider's request for approval), run them — the calls of one
step concurrently, each bounded by its tool's timeout — append their results
as one tool message, and respond again; stop at a response with nothing to
run, or after ``max_steps`` steps (turn end ``max-steps``, the calls left
answered with an error saying so).

What the model is sent for each call: the tool's result; an ``is_error``
result naming the exception's type and message when it raised; an error
when the arguments do not validate, the tool does not exist, the call timed
out or the approval callback refused it.  Hosted activity never enters the
loop (the provider ran it), except a provider's request for approval of a
hosted MCP call, which the same approval callback answers.

Durability: every response and every step's results are in the log as they
happen.  A process killed mid-step leaves tool calls without results; the
next :func:`run` on the reopened conversation finds them first and settles
them — a call of a tool marked ``idempotent`` runs again (its result
begins with :data:`RERUN_NOTE`), any other is answered with an
"interrupted" error — before anything else is sent.

The step executor is the only part that differs between the drivers: the
async one awaits async tools on the caller's event loop and runs sync ones in
worker threads; the sync one runs the same step function under
:func:`anyio.run` in the calling thread.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Unpack

import anyio
import msgspec

from elelem.conversation.events import Awaiting, Draft, HostedBody, MessageBody, ResponseRecord
from elelem.conversation.log import Conversation
from elelem.conversation.projections import diagnose
from elelem.tools import Tool, ToolOutcome, as_tool, describe_error
from elelem.tools.base import CALL_KEY
from elelem.turns.engine import (
    Append,
    Call,
    Flow,
    TurnEngine,
    TurnOptions,
    TurnResult,
    TurnSettings,
    check_conversation,
)
from elelem.turns.limits import UsageLimitExceeded
from elelem.turns.pending import REFUSED, AwaitingError, decided, pending
from elelem.vocabulary import (
    HostedActivity,
    Message,
    ToolCallBlock,
    ToolResultBlock,
    UnknownBlock,
    approval_response,
    awaits_approval,
    register_turn_end_reason,
)

if TYPE_CHECKING:
    from elelem.client import Client, SyncClient
    from elelem.providers import Target
    from elelem.providers.protocol import Model
    from elelem.transport import Timeouts

MAX_STEPS = 10
"""Default bound on the tool-running steps of one :func:`run`."""

MAX_STEPS_END = register_turn_end_reason(
    "max-steps", "the tool loop stopped after max_steps steps with calls left to run"
)

INTERRUPTED = (
    "interrupted: the process stopped while this call was running, and it was "
    "not run again because the tool is not marked idempotent"
)
"""The result of a call a killed run left unanswered, when its tool is not
marked idempotent (or is not among this run's tools)."""

NO_APPROVER = (
    "refused: {name} runs only with the user's approval, and this run has no "
    "approval callback (a non-interactive run)"
)
"""The result of a call of a tool that needs approval (shell, apply_patch)
in a run with no approval callback: refused, never run unasked."""

RERUN_NOTE = "(run again: its first run was interrupted before it finished)\n"
"""What begins the result of an idempotent call a killed run left behind
and the next run ran again: the model, the user and the log see it was a
re-run (its first run may have done part of its work)."""


@dataclass(frozen=True)
class ApprovalRequest:
    """One call the approval callback may allow or refuse.

    ``kind`` is ``tool`` for a client tool the loop is about to run, ``mcp``
    for a provider-hosted MCP call the provider asks about; ``server`` names
    the MCP server (None for a client tool); ``arguments`` is the JSON text
    the model wrote (untrusted).
    """

    kind: Literal["tool", "mcp"]
    name: str
    arguments: str
    call_id: str
    server: str | None = None


Approver = Callable[[ApprovalRequest], "bool | Awaitable[bool]"]
"""The approval callback: True lets the call run; False refuses it (the model
is told it was refused).  May be async; a sync one runs in a worker thread,
so it may block (ask on a terminal)."""

CallObserver = Callable[[ToolCallBlock, ToolResultBlock], object]
"""Told of each finished call and its result, once the step is in the log."""


@dataclass(frozen=True)
class _Work:
    """One step: the client calls to run and the approvals to answer."""

    calls: tuple[ToolCallBlock, ...]
    approvals: tuple[HostedActivity, ...] = ()
    settle: bool = False  # calls a killed process left unanswered
    keys: tuple[str, ...] = ()  # the calls' idempotency keys (default: from the call ids)


class ToolLoop:
    """The tools of one run and how a step runs them (see :func:`tool_loop`)."""

    def __init__(
        self,
        tools: Iterable[Any],
        *,
        approve: Approver | Literal["defer"] | None = None,
        timeout: float | None = None,
        conversation: str | None = None,
    ) -> None:
        self.tools: dict[str, Tool] = {}
        self.conversation = conversation
        tools = list(tools)
        for item in tools:
            for one in _expand(item):
                if one.name in self.tools:
                    raise ValueError(f"two tools are named {one.name!r}")
                self.tools[one.name] = one
        notes = (getattr(item, "system_note", None) for item in tools)
        # What a toolset (an MCP server the user let speak) adds to the system prompt.
        self.system_notes = tuple(n for n in (f() for f in notes if callable(f)) if n)
        self.defer = approve == "defer"
        self.approve: Approver | None = None if approve == "defer" else approve
        self.timeout = timeout

    def deferral(self, work: _Work) -> Awaiting | None:
        """What the step must wait for before it runs (None: nothing): calls
        of external tools wait for results; with ``approve="defer"`` the
        other calls of known tools, and the provider's approval requests,
        wait for an approval."""
        results = [c.id for c in work.calls if getattr(self.tools.get(c.name), "external", False)]
        approval: list[str] = []
        if self.defer:
            approval = [c.id for c in work.calls if c.name in self.tools and c.id not in results]
            approval += [a.id for a in work.approvals]
        if not results and not approval:
            return None
        ready = [c.id for c in work.calls if c.id not in results and c.id not in approval]
        return Awaiting(tuple(approval), tuple(results), tuple(ready))

    @property
    def specs(self) -> tuple[Any, ...]:
        """The tool specs every request of the run carries (a provider tool
        the client executes is asked for through :attr:`hosted` instead)."""
        return tuple(t.spec for t in self.tools.values() if getattr(t, "hosted", None) is None)

    def asking(self, settings: TurnSettings, recorded: str | None = None) -> TurnOptions:
        """``settings`` with what every request of the run asks for: the tool
        specs, the provider tools the client executes among the hosted tools,
        and what the tools add to the system prompt (after ``settings``'
        ``system``, else after ``recorded``, the conversation's)."""
        out: TurnOptions = {**settings, "tools": self.specs}
        if self.system_notes:
            given = settings.get("system")
            own = recorded if given is None else given
            # A later turn finds the notes in the system prompt the log recorded: once is enough.
            notes = [n for n in self.system_notes if n not in (own or "")]
            out["system"] = "\n\n".join(n for n in (own, *notes) if n)
        if self.hosted:
            out["hosted_tools"] = (*settings.get("hosted_tools", ()), *self.hosted)
        return out

    @property
    def hosted(self) -> tuple[Any, ...]:
        """The provider tools this run's tools execute (a :class:`~elelem.tools.MemoryTool`'s
        ``Memory``...): the requests ask for them as hosted tools."""
        found = (getattr(t, "hosted", None) for t in self.tools.values())
        return tuple(h for h in found if h is not None)

    # -- one step ------------------------------------------------------------------

    async def step(
        self, work: _Work
    ) -> tuple[tuple[ToolResultBlock, ...], tuple[UnknownBlock, ...]]:
        """Run the calls of ``work`` concurrently and answer its approvals;
        results in call order."""
        results: list[ToolResultBlock | None] = [None] * len(work.calls)
        # Approvals are asked one at a time, in call order, before any call runs.
        allowed = [await self._allowed(c, work.settle) for c in work.calls]

        async def one(i: int, call: ToolCallBlock) -> None:
            key = work.keys[i] if work.keys else f"{self.conversation or ''}/{call.id}"
            token = CALL_KEY.set(key)  # what call_key() tells the tool
            try:
                results[i] = await self._run(call, allowed[i], work.settle)
            finally:
                CALL_KEY.reset(token)

        async with anyio.create_task_group() as group:
            for i, call in enumerate(work.calls):
                group.start_soon(one, i, call)
        answers = []
        for activity in work.approvals:
            answers.append(await self._answer(activity))
        done = tuple(r for r in results if r is not None)
        return done, tuple(answers)

    def step_sync(
        self, work: _Work
    ) -> tuple[tuple[ToolResultBlock, ...], tuple[UnknownBlock, ...]]:
        """:meth:`step` for the sync driver: the same step, on its own event loop."""
        return anyio.run(self.step, work)

    async def _ask(self, request: ApprovalRequest) -> bool:
        approve = self.approve
        assert approve is not None
        if inspect.iscoroutinefunction(approve):
            verdict = await approve(request)
        else:
            import anyio.to_thread

            verdict = await anyio.to_thread.run_sync(approve, request)
            if inspect.isawaitable(verdict):
                verdict = await verdict
        return bool(verdict)

    async def _allowed(self, call: ToolCallBlock, settle: bool) -> bool:
        tool = self.tools.get(call.name)
        if self.approve is None or tool is None or (settle and not tool.idempotent):
            return True  # nothing will run
        return await self._ask(ApprovalRequest("tool", call.name, call.arguments, call.id))

    async def _answer(self, activity: HostedActivity) -> UnknownBlock:
        given = activity.input if isinstance(activity.input, dict) else {}
        if self.approve is None:
            return approval_response(activity, False, "no approval callback was given")  # type: ignore[no-any-return]
        request = ApprovalRequest(
            "mcp",
            str(given.get("name") or ""),
            str(given.get("arguments") or ""),
            activity.id,
            str(given.get("server_label") or "") or None,
        )
        verdict = await self._ask(request)
        return approval_response(activity, verdict, None if verdict else "refused by the user")  # type: ignore[no-any-return]

    async def _run(self, call: ToolCallBlock, allowed: bool, settle: bool) -> ToolResultBlock:
        tool = self.tools.get(call.name)
        if settle and (tool is None or not tool.idempotent):
            # A killed run's call: never guessed at again unless it is safe to.
            return _error(call, INTERRUPTED)
        if tool is None:
            names = ", ".join(sorted(self.tools)) or "none"
            return _error(call, f"no tool named {call.name!r} (tools: {names})")
        if not allowed:
            return _error(call, REFUSED)
        if getattr(tool, "needs_approval", False) and self.approve is None and not self.defer:
            return _error(call, NO_APPROVER.format(name=call.name))
        timeout = tool.timeout if tool.timeout is not None else self.timeout
        try:
            with anyio.fail_after(timeout):
                outcome = await tool.call(call.arguments)
        except TimeoutError:
            return _error(call, f"timeout: {call.name} did not finish within {timeout:g} s")
        except Exception as exc:  # noqa: BLE001 - the model is told, the loop goes on
            return _error(call, describe_error(exc))
        if not isinstance(outcome, ToolOutcome):
            return _error(
                call, f"tool {call.name} returned a {type(outcome).__name__}, not a ToolOutcome"
            )
        return result_block(call, outcome, rerun=settle)


def result_block(
    call: ToolCallBlock, outcome: ToolOutcome, *, rerun: bool = False
) -> ToolResultBlock:
    """The result block answering ``call`` with ``outcome`` (``rerun``: a
    killed run's call run again, said so at the start of the result)."""
    return ToolResultBlock(
        call.id,
        RERUN_NOTE + outcome.content if rerun else outcome.content,
        outcome.is_error,
        call.name,
        outcome.payloads,
        outcome.attachments or msgspec.UNSET,
    )


def _expand(item: Any) -> list[Tool]:
    # An MCP server connection (or any toolset) contributes all its tools.
    tools = getattr(item, "tools", None)
    if tools is not None and not hasattr(item, "call"):
        return list(tools)
    made: Tool = as_tool(item)
    return [made]


def _error(call: ToolCallBlock, text: str) -> ToolResultBlock:
    return ToolResultBlock(call.id, text, True, call.name)


# -- what the log holds -------------------------------------------------------------


def unanswered(conversation: Conversation) -> tuple[ToolCallBlock, ...]:
    """The tool calls at the end of the log that have no result: what a process
    killed mid-step left behind (calls followed by later messages are answered
    by the projection and are not re-run)."""
    orphans = {
        o.call_id
        for o in diagnose(conversation.events).orphan_calls
        if not o.answered_synthetically
    }
    if not orphans:
        return ()
    calls: list[ToolCallBlock] = []
    for e in conversation.events:
        if isinstance(e.body, MessageBody):
            calls.extend(
                p for p in e.body.content if isinstance(p, ToolCallBlock) and p.id in orphans
            )
    return tuple(calls)


def _response_work(conversation: Conversation, record: ResponseRecord) -> _Work:
    """The calls and approval requests of the response whose record was just
    appended (the log's last event)."""
    last = conversation.events[-1]
    number = last.response
    calls: list[ToolCallBlock] = []
    approvals: list[HostedActivity] = []
    for e in conversation.events:
        if e.response != number:
            continue
        body = e.body
        if isinstance(body, MessageBody):
            calls.extend(p for p in body.content if isinstance(p, ToolCallBlock))
        elif isinstance(body, HostedBody) and awaits_approval(body.activity):
            approvals.append(body.activity)
    if not record.complete:
        return _Work(())
    return _Work(tuple(calls), tuple(approvals))


def _results_draft(
    turn: int, results: Sequence[ToolResultBlock], answers: Sequence[UnknownBlock]
) -> Draft:
    content: tuple[Any, ...] = (*results, *answers)
    return Draft("message", MessageBody("user", content, "tool"), turn)


# -- the flow ------------------------------------------------------------------------

Executor = Callable[[_Work], Any]


def tool_loop(
    engine: TurnEngine,
    loop: ToolLoop,
    execute: Executor,
    *,
    max_steps: int = MAX_STEPS,
    on_call: CallObserver | None = None,
) -> Flow[TurnResult]:
    """The tool loop as one flow of engine actions; ``execute`` is the driver's
    step executor (:meth:`ToolLoop.step` or :meth:`ToolLoop.step_sync`)."""
    conv = engine.conversation
    waiting = pending(conv)
    if waiting is not None:
        raise AwaitingError(waiting)
    orphans = unanswered(conv)
    if orphans:
        # A killed run's calls are settled in the turn that made them; what a
        # decision already answered is answered so, never run.
        known = decided(conv)
        work = _Work(tuple(c for c in orphans if c.id not in known), settle=True)
        ran, _ = yield Call(execute, (work,), name="settle interrupted tool calls")
        by_id = {r.call_id: r for r in ran} | known
        results = tuple(by_id[c.id] for c in orphans)
        yield Append((_results_draft(conv.turn, results, ()),))
        yield from _observe(on_call, orphans, results)
    yield from engine.begin()
    return (yield from steps(engine, loop, execute, max_steps=max_steps, on_call=on_call))


def steps(
    engine: TurnEngine,
    loop: ToolLoop,
    execute: Executor,
    *,
    max_steps: int = MAX_STEPS,
    on_call: CallObserver | None = None,
    taken: int = 0,
) -> Flow[TurnResult]:
    """Respond and run the calls of each response, until a response asks for
    nothing, ``max_steps`` steps ran (``taken`` already), or a step must
    wait for decisions (turn end ``awaiting-approval``/``awaiting-results``)."""
    conv = engine.conversation
    while True:
        record = yield from engine.respond()
        end = engine.end_of(record)
        if end is None:
            continue
        work = _response_work(conv, record)
        if not work.calls and not work.approvals:
            return engine.result(end)
        if taken >= max_steps:
            note = f"not run: the tool loop stopped at max_steps={max_steps}"
            left = tuple(_error(c, note) for c in work.calls)
            yield Append((_results_draft(engine.turn, left, ()),))
            return engine.result(MAX_STEPS_END)
        awaiting = loop.deferral(work)
        if awaiting is not None:
            yield Append((Draft.of(awaiting, turn=engine.turn),))
            return engine.result(awaiting.state)
        if work.calls and engine.limits is not None:
            yield from _within_limits(engine, work)
        taken += 1
        engine.tool_calls += len(work.calls)
        results, answers = yield Call(execute, (work,), name="tool step")
        yield Append((_results_draft(engine.turn, results, answers),))
        yield from _observe(on_call, work.calls, results)
        if engine.limits is not None:
            # The sampling MCP servers had served during the step is the run's too.
            engine.check(engine.limits.after_tools)


def _within_limits(
    engine: TurnEngine,
    work: _Work,
    calls: Sequence[ToolCallBlock] = (),
    answered: Sequence[ToolResultBlock] = (),
    answers: Sequence[UnknownBlock] = (),
) -> Flow[None]:
    """Raise when the step's calls would go over the run's tool-call limit,
    after answering them with an error naming the limit.  A resumed run
    (:mod:`elelem.turns.deferred`) gives its step's ``calls`` in order with
    the ones its decision ``answered`` and its approval ``answers``: one
    result message answers them all, so the log has no unanswered call."""
    limits = engine.limits
    assert limits is not None
    try:
        engine.check(lambda used: limits.before_tools(used, len(work.calls)))
    except UsageLimitExceeded as exc:
        note = f"not run: the usage limit tool_calls={exc.maximum} was reached"
        by_id = {c.id: _error(c, note) for c in work.calls} | {r.call_id: r for r in answered}
        left = tuple(by_id[c.id] for c in calls or work.calls)
        yield Append((_results_draft(engine.turn, left, tuple(answers)),))
        raise


def _observe(
    on_call: CallObserver | None,
    calls: Sequence[ToolCallBlock],
    results: Sequence[ToolResultBlock],
) -> Flow[None]:
    if on_call is None:
        return
    by_id = {r.call_id: r for r in results}
    for call in calls:
        result = by_id.get(call.id)
        if result is not None:
            yield Call(on_call, (call, result), name="on_call")


# -- the drivers -----------------------------------------------------------------------


class LoopOptions(TurnSettings, total=False):
    """The options of a tool loop (all optional): a turn's
    :class:`~elelem.turns.engine.TurnSettings` and the loop's own.

    ``tools``: Python functions (made into :class:`~elelem.tools.FunctionTool`\\ s),
    tools, or MCP server connections (all their tools); ``max_steps``: the
    bound on requests (default :data:`MAX_STEPS`); ``approve`` sees each call
    first (see :class:`ApprovalRequest`), or ``"defer"`` stops the run at
    its first step for approvals given later (:func:`elelem.resume`); ``tool_timeout`` bounds a call whose
    tool sets no timeout; ``on_call(call, result)`` is told of each finished
    call."""

    tools: Iterable[Any]
    max_steps: int
    approve: Approver | Literal["defer"] | None
    tool_timeout: float | None
    on_call: CallObserver | None


LOOP_KEYS = frozenset({"tools", "max_steps", "approve", "tool_timeout", "on_call"})
"""The keys of :class:`LoopOptions` that are the loop's, not the turn's."""


def loop_engine(
    conv: Conversation,
    target: Target | Model,
    user_input: str | Message | None,
    options: LoopOptions,
) -> tuple[ToolLoop, TurnEngine]:
    """The tool loop ``options`` ask for and the turn engine that asks with
    its tools: where a run (:func:`loop_flow`) and a resumed run
    (:func:`elelem.resume`) both start."""
    loop = ToolLoop(
        options.get("tools", ()),
        approve=options.get("approve"),
        timeout=options.get("tool_timeout"),
        conversation=conv.id,
    )
    settings: TurnSettings = {k: v for k, v in options.items() if k not in LOOP_KEYS}  # type: ignore[assignment]
    engine = TurnEngine.create(conv, target, user_input, **loop.asking(settings, conv.system))
    return loop, engine


def loop_flow(
    conv: Conversation,
    target: Target | Model,
    user_input: str | Message | None,
    options: LoopOptions,
    *,
    sync: bool,
) -> Flow[TurnResult]:
    """The one flow :func:`run` and :func:`run_sync` drive (only the step
    executor differs: ``sync`` runs each call in the calling thread)."""
    check_conversation(conv)  # by name, before anything reads it
    loop, engine = loop_engine(conv, target, user_input, options)
    max_steps, on_call = options.get("max_steps", MAX_STEPS), options.get("on_call")
    execute = loop.step_sync if sync else loop.step
    return tool_loop(engine, loop, execute, max_steps=max_steps, on_call=on_call)


async def run(
    conv: Conversation,
    client: Client,
    model: str | Target | Model,
    user_input: str | Message | None,
    *,
    timeouts: Timeouts | None = None,
    **options: Unpack[LoopOptions],
) -> TurnResult:
    """Run a turn of ``conv`` and its tool calls until the model answers.

    ``options`` are a :class:`LoopOptions`' (the loop's ``tools``,
    ``max_steps``, ``approve``, ``tool_timeout``, ``on_call``, and
    :func:`elelem.send`'s turn options: ``system``, ``hosted_tools``,
    ``options``, ``trigger``, ``max_continuations``, ``recover``,
    ``on_chunk``).  ``user_input`` None resumes: the calls a killed run left
    unanswered are settled and the model is asked to go on.  The result's
    ``end`` is ``max-steps`` when the bound stopped the loop.
    """
    from elelem.turns.drive import drive

    flow = loop_flow(conv, client.target(model), user_input, options, sync=False)
    return await drive(flow, client, conv, timeouts=timeouts)


def run_sync(
    conv: Conversation,
    client: SyncClient,
    model: str | Target | Model,
    user_input: str | Message | None,
    *,
    timeouts: Timeouts | None = None,
    **options: Unpack[LoopOptions],
) -> TurnResult:
    """The blocking :func:`run`, over a :class:`elelem.SyncClient`: the same
    flow; each step runs on its own event loop in the calling thread."""
    from elelem.turns.drive import drive_sync

    flow = loop_flow(conv, client.target(model), user_input, options, sync=True)
    return drive_sync(flow, client, conv, timeouts=timeouts)


__all__ = [
    "INTERRUPTED",
    "MAX_STEPS",
    "MAX_STEPS_END",
    "NO_APPROVER",
    "REFUSED",
    "RERUN_NOTE",
    "ApprovalRequest",
    "Approver",
    "CallObserver",
    "LoopOptions",
    "ToolLoop",
    "loop_engine",
    "loop_flow",
    "result_block",
    "run",
    "run_sync",
    "steps",
    "tool_loop",
    "unanswered",
]
