"""Resuming a run that stopped for approvals or external results.

:func:`resume` (async) and :func:`resume_sync` continue a conversation whose
last run ended ``awaiting-approval`` or ``awaiting-results`` (see
:mod:`elelem.turns.pending`), in this process or any other, from the log
alone:

1. the answers are checked against what the run waits for (every approval
   and every result given, no unknown call id, the tool of every approved
   call among ``tools``; :func:`check_resume`): a
   :class:`~elelem.turns.pending.ResumeError` otherwise, before anything is
   stored;
2. the decision (approved and refused ids, the results given) is appended,
   **before any call runs**: a process killed from here on leaves the calls
   to be settled as a killed run's are (an approved call of a tool that is
   not idempotent is answered "interrupted", never run a second time; what
   the decision answered is answered so);
3. the approved and ready calls run (concurrently, as a step of the tool
   loop), refused ones are answered ``refused``, external ones with the
   results given; all of them in one tool message, in the model's order;
4. the tool loop goes on in the same turn until the model answers (or stops
   again for new decisions).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Unpack

from elelem.conversation.events import Decision, Draft, TurnStart
from elelem.conversation.log import Conversation
from elelem.errors import ConfigError
from elelem.tools import render_result
from elelem.turns.engine import Append, Call, Flow, TurnEngine, TurnResult
from elelem.turns.pending import REFUSED, Pending, ResumeError, pending
from elelem.turns.toolloop import (
    MAX_STEPS,
    CallObserver,
    Executor,
    LoopOptions,
    ToolLoop,
    _observe,
    _results_draft,
    _within_limits,
    _Work,
    loop_engine,
    result_block,
    steps,
)
from elelem.vocabulary import (
    ToolCallBlock,
    ToolResultBlock,
    UnknownBlock,
    approval_response,
)

if TYPE_CHECKING:
    from elelem.client import Client, SyncClient
    from elelem.providers import Target
    from elelem.providers.protocol import Model
    from elelem.transport import Timeouts


def _check(waiting: Pending, approvals: Mapping[str, bool], results: Mapping[str, Any]) -> None:
    want_approval = {*waiting.awaiting.approval}
    want_results = {*waiting.awaiting.results}
    for key in approvals:
        if key not in want_approval:
            raise ResumeError(f"approvals names {key!r}, which awaits no approval")
        if not isinstance(approvals[key], bool):
            raise ResumeError(f"approvals[{key!r}] must be True or False")
    for key in results:
        if key not in want_results:
            raise ResumeError(f"results names {key!r}, which awaits no result")
    names: dict[str, str] = {c.id: c.name for c in waiting.calls}
    names.update((a.id, a.name) for a in waiting.approvals)
    missing = [i for i in waiting.awaiting.approval if i not in approvals]
    if missing:
        told = ", ".join(f"{i} ({names.get(i, '?')})" for i in missing)
        raise ResumeError(f"calls await approval: {told}; give approvals={{id: True or False}}")
    missing = [i for i in waiting.awaiting.results if i not in results]
    if missing:
        told = ", ".join(f"{i} ({names.get(i, '?')})" for i in missing)
        raise ResumeError(f"calls await results: {told}; give results={{id: result}}")


def lacking_tools(
    waiting: Pending, approvals: Mapping[str, bool], names: Iterable[str]
) -> list[str]:
    """The tools the approved calls of ``waiting`` need and ``names`` (the
    resumed run's tools) lacks, sorted: an approved call of a tool that is
    not there could only be answered "no tool named …".  (A ready call of an
    unknown tool is the model's mistake the stopped run would have answered
    so too: it is not checked.)"""
    have = set(names)
    return sorted({c.name for c in waiting.approval if approvals.get(c.id)} - have)


def check_resume(
    conv: Conversation,
    approvals: Mapping[str, bool],
    results: Mapping[str, Any],
    tools: Iterable[str] | None = None,
) -> Pending:
    """What ``conv`` waits for, once ``approvals`` and ``results`` are checked
    to answer it (and, given ``tools``' names, every approved call's tool is
    among them); a :class:`~elelem.turns.pending.ResumeError` naming
    what is wrong otherwise.  Reads only: nothing is stored."""
    waiting = pending(conv)
    if waiting is None:
        raise ResumeError("the conversation waits for no approval and no result")
    _check(waiting, approvals, results)
    if tools is not None:
        lacking = lacking_tools(waiting, approvals, tools)
        if lacking:
            calls = ", ".join(
                f"{c.id} ({c.name})"
                for c in (*waiting.approval, *waiting.ready)
                if c.name in lacking
            )
            raise ResumeError(
                f"the approved calls need tools this run was not given: {', '.join(lacking)} "
                f"(calls {calls})"
            )
    return waiting


def _result(call: ToolCallBlock, value: Any) -> ToolResultBlock:
    return result_block(call, render_result(value))


def resume_flow(
    engine: TurnEngine,
    loop: ToolLoop,
    execute: Executor,
    approvals: Mapping[str, bool],
    results: Mapping[str, Any],
    *,
    max_steps: int = MAX_STEPS,
    on_call: CallObserver | None = None,
) -> Flow[TurnResult]:
    """The resumed run as one flow of engine actions (see the module docs)."""
    waiting = check_resume(engine.conversation, approvals, results, loop.tools)
    given = {c.id: _result(c, results[c.id]) for c in waiting.results}
    refused = {
        c.id: ToolResultBlock(c.id, REFUSED, True, c.name)
        for c in waiting.approval
        if not approvals[c.id]
    }
    decision = Decision(
        approved=tuple(i for i, yes in approvals.items() if yes),
        refused=tuple(i for i, yes in approvals.items() if not yes),
        results=tuple(given.values()),
    )
    yield Append((Draft.of(decision, turn=waiting.turn),))
    engine.turn = waiting.turn
    runnable = tuple(c for c in waiting.calls if c.id not in given and c.id not in refused)
    answers: list[UnknownBlock] = []
    for activity in waiting.approvals:
        yes = approvals[activity.id]
        answers.append(approval_response(activity, yes, None if yes else "refused by the user"))
    ran: tuple[ToolResultBlock, ...] = ()
    if runnable:
        work = _Work(runnable)
        if engine.limits is not None:
            # As before a tool step of a fresh run: calls over the limit are
            # not run, and answered with the decided ones.
            decided = (*given.values(), *refused.values())
            yield from _within_limits(engine, work, waiting.calls, decided, answers)
        ran, _ = yield Call(execute, (work,), name="tool step")
        engine.tool_calls += len(runnable)
    by_id = {r.call_id: r for r in ran} | given | refused
    blocks = tuple(by_id[c.id] for c in waiting.calls)
    yield Append((_results_draft(waiting.turn, blocks, answers),))
    yield from _observe(on_call, waiting.calls, blocks)
    if engine.limits is not None:
        # As after a tool step of a fresh run: the sampling served while the
        # approved calls ran is the run's, and a limit it reached ends the run now.
        engine.check(engine.limits.after_tools)
    return (yield from steps(engine, loop, execute, max_steps=max_steps, on_call=on_call, taken=1))


def stopped_model(conv: Conversation) -> str | None:
    """The address the turn waiting for decisions was started with (``""``
    when it names none), or None when the conversation waits for nothing."""
    waiting = pending(conv)
    if waiting is None:
        return None
    for e in conv.events:
        body = e.body
        if e.turn == waiting.turn and isinstance(body, TurnStart):
            return body.model or ""
    return None


def _model_of(conv: Conversation, model: str | Target | Model | None) -> str | Target | Model:
    """``model``, else the address the waiting turn was started with."""
    if model is not None:
        return model
    address = stopped_model(conv)
    if address is None:
        raise ResumeError("the conversation waits for no approval and no result")
    return address


def _target(client: Any, conv: Conversation, model: str | Target | Model | None) -> Target | Model:
    """The model a resumed run answers with: ``model``, else the stopped
    turn's address; an address no provider serves (an in-process model's,
    such as ``test:test-model`` of a :class:`~elelem.testing.TestModel`, whose
    settings an address cannot carry) is a :class:`ResumeError` saying to
    give the model again."""
    chosen = _model_of(conv, model)
    try:
        target: Target | Model = client.target(chosen)
    except ConfigError as exc:
        if model is not None:
            raise
        raise ResumeError(
            f"the stopped turn was run by {chosen!r}, which names no model this client "
            f"can reach ({exc}); an in-process model (a TestModel, a FunctionModel) is "
            "given again: resume(..., model=the_model)"
        ) from None
    return target


def _resume(
    conv: Conversation,
    target: Target | Model,
    sync: bool,
    approvals: Mapping[str, bool] | None,
    results: Mapping[str, Any] | None,
    options: LoopOptions,
) -> Flow[TurnResult]:
    loop, engine = loop_engine(conv, target, None, options)
    execute = loop.step_sync if sync else loop.step
    return resume_flow(
        engine, loop, execute, dict(approvals or {}), dict(results or {}),
        max_steps=options.get("max_steps", MAX_STEPS), on_call=options.get("on_call"),
    )  # fmt: skip


async def resume(
    conv: Conversation,
    client: Client,
    model: str | Target | Model | None = None,
    *,
    approvals: Mapping[str, bool] | None = None,
    results: Mapping[str, Any] | None = None,
    timeouts: Timeouts | None = None,
    **options: Unpack[LoopOptions],
) -> TurnResult:
    """Continue a run that ended ``awaiting-approval`` or ``awaiting-results``
    (see the module docs).

    ``approvals`` maps each waiting call id (a hosted MCP approval request's
    activity id too) to True or False; ``results`` each external call's id to
    its result (text, any JSON value, a :class:`~elelem.tools.ToolOutcome`).
    ``model`` defaults to the address the stopped turn was started with
    (an in-process model's address names no model: give it again).
    ``options`` are :func:`elelem.run`'s: ``tools`` (the run's tools again:
    the approved calls run with them), ``max_steps``, ``approve``
    (``"defer"`` stops again at the next calls), ``tool_timeout``,
    ``on_call`` and the turn options."""
    from elelem.turns.drive import drive

    target = _target(client, conv, model)
    flow = _resume(conv, target, False, approvals, results, options)
    return await drive(flow, client, conv, timeouts=timeouts)


def resume_sync(
    conv: Conversation,
    client: SyncClient,
    model: str | Target | Model | None = None,
    *,
    approvals: Mapping[str, bool] | None = None,
    results: Mapping[str, Any] | None = None,
    timeouts: Timeouts | None = None,
    **options: Unpack[LoopOptions],
) -> TurnResult:
    """The blocking :func:`resume`, over a :class:`elelem.SyncClient`."""
    from elelem.turns.drive import drive_sync

    target = _target(client, conv, model)
    flow = _resume(conv, target, True, approvals, results, options)
    return drive_sync(flow, client, conv, timeouts=timeouts)


__all__ = [
    "check_resume",
    "lacking_tools",
    "resume",
    "resume_flow",
    "resume_sync",
    "stopped_model",
]
