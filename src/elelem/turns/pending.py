"""What a deferred run waits for, read from the log.

A run of the tool loop with ``approve="defer"``, or whose model calls an
:class:`~elelem.tools.ExternalTool`, ends with an ``awaiting`` event
(:class:`~elelem.conversation.Awaiting`) naming the calls of its last step.
:func:`pending` reads it back in any process: the calls waiting for an
approval, for results, or for nothing (``ready``), with the turn they
belong to.  A ``decision`` event (:class:`~elelem.conversation.Decision`)
answers it; from then on the calls are the resumed run's, and a process
killed while running them leaves them to be settled like any killed run's,
never run twice (:func:`decided` gives what the decision already answered).
"""

from __future__ import annotations

from dataclasses import dataclass

from elelem.conversation.events import Awaiting, Decision, HostedBody, MessageBody, Rewind
from elelem.conversation.log import Conversation
from elelem.errors import ElelemError
from elelem.vocabulary import (
    CallId,
    HostedActivity,
    ToolCallBlock,
    ToolResultBlock,
    register_turn_end_reason,
)

REFUSED = "refused: the user did not approve this call"
"""The result of a call the approval refused."""

AWAITING_APPROVAL = register_turn_end_reason(
    "awaiting-approval", "the run stopped until calls are approved or refused (resume continues it)"
)
AWAITING_RESULTS = register_turn_end_reason(
    "awaiting-results",
    "the run stopped until external tools' results are given (resume continues it)",
)


@dataclass(frozen=True)
class Pending:
    """The decisions a stopped run waits for (see the module docs).

    ``turn`` is the turn the calls belong to; ``calls`` every client call of
    the stopped step, in the order the model made them; ``approval`` those
    waiting for a yes or no, ``results`` the calls of external tools,
    ``ready`` the calls that will run without asking; ``approvals`` the
    provider's hosted MCP approval requests.  ``state`` is
    ``awaiting-approval`` or ``awaiting-results``.
    """

    turn: int
    awaiting: Awaiting
    calls: tuple[ToolCallBlock, ...]
    approvals: tuple[HostedActivity, ...]

    @property
    def state(self) -> str:
        """``awaiting-approval`` or ``awaiting-results``."""
        return self.awaiting.state

    @property
    def approval(self) -> tuple[ToolCallBlock, ...]:
        """The client calls waiting for an approval."""
        return tuple(c for c in self.calls if c.id in self.awaiting.approval)

    @property
    def results(self) -> tuple[ToolCallBlock, ...]:
        """The external tools' calls waiting for results."""
        return tuple(c for c in self.calls if c.id in self.awaiting.results)

    @property
    def ready(self) -> tuple[ToolCallBlock, ...]:
        """The calls that run on resume without asking."""
        return tuple(c for c in self.calls if c.id in self.awaiting.ready)


class AwaitingError(ElelemError):
    """The conversation waits for decisions: resume it (:func:`elelem.resume`)
    rather than run it.  ``pending`` says what it waits for."""

    def __init__(self, pending: Pending) -> None:
        ids = ", ".join(c.id for c in (*pending.approval, *pending.results)) or ", ".join(
            a.id for a in pending.approvals
        )
        super().__init__(
            f"the conversation is {pending.state} (calls {ids}): resume it with elelem.resume"
        )
        self.pending = pending


class ResumeError(ElelemError, ValueError):
    """What :func:`elelem.resume` was given does not answer what the run
    waits for (a call left without an answer, an unknown call id), or the
    conversation waits for nothing.  Nothing was stored."""


def pending(conversation: Conversation) -> Pending | None:
    """What the conversation's last run waits for, or None when it waits for nothing."""
    events = conversation.events
    at = next(
        (i for i in range(len(events) - 1, -1, -1) if isinstance(events[i].body, Awaiting)),
        None,
    )
    if at is None:
        return None
    turn = events[at].turn
    for e in events[at + 1 :]:
        # Answered, or its turn taken back (a rewind: a retry, an edit).
        if isinstance(e.body, Decision) or (
            isinstance(e.body, Rewind) and e.body.first_turn <= turn
        ):
            return None
    awaiting: Awaiting = events[at].body
    answered = {
        p.call_id
        for e in events[at + 1 :]
        if isinstance(e.body, MessageBody)
        for p in e.body.content
        if isinstance(p, ToolResultBlock)
    }
    ids = {*awaiting.approval, *awaiting.results, *awaiting.ready}
    calls: list[ToolCallBlock] = []
    activities: dict[str, HostedActivity] = {}
    for e in events[:at]:
        if e.turn != events[at].turn:
            continue
        if isinstance(e.body, MessageBody):
            calls.extend(p for p in e.body.content if isinstance(p, ToolCallBlock) and p.id in ids)
        elif isinstance(e.body, HostedBody) and e.body.activity.id in ids:
            activities[e.body.activity.id] = e.body.activity
    if answered & {c.id for c in calls}:
        return None  # answered some other way: nothing to resume
    return Pending(events[at].turn, awaiting, tuple(calls), tuple(activities.values()))


def decided(conversation: Conversation) -> dict[str, ToolResultBlock]:
    """The results the last decision gave (external results, refusals), by
    call id: what settling a killed resume answers without running."""
    events = conversation.events
    for e in reversed(events):
        if isinstance(e.body, Decision):
            out: dict[str, ToolResultBlock] = {
                b.call_id: b for b in e.body.results if isinstance(b, ToolResultBlock)
            }
            for call_id in e.body.refused:
                out[call_id] = ToolResultBlock(CallId(call_id), REFUSED, True)
            return out
    return {}


__all__ = [
    "AWAITING_APPROVAL",
    "AWAITING_RESULTS",
    "REFUSED",
    "AwaitingError",
    "Pending",
    "ResumeError",
    "decided",
    "pending",
]
