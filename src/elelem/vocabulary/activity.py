"""Hosted activity: work a provider ran on its own servers."""

from __future__ import annotations

from typing import Literal

import msgspec

from elelem.errors import DecodeError
from elelem.vocabulary.ids import ActivityId
from elelem.vocabulary.json import JSONValue, check_json
from elelem.vocabulary.payload import ProviderPayload

ActivityState = Literal["started", "completed", "failed"]

TERMINAL_STATES: frozenset[str] = frozenset({"completed", "failed"})
_STATES: frozenset[str] = frozenset({"started", *TERMINAL_STATES})


class HostedActivity(
    msgspec.Struct,
    frozen=True,
    gc=False,
    tag_field="type",
    tag="hosted",
    forbid_unknown_fields=True,
):
    """One transition of a hosted activity (web search, web fetch, code execution, …).

    Hosted activity is not a tool call and not assistant content: the caller
    never executes it.  Each value is a *transition*; the activity's history is
    the append-only sequence of transitions sharing ``id``.  A ``started``
    transition with no terminal one means it began and never finished.

    ``name`` is the neutral capability name (``web_search``); ``input`` the
    normalized invocation input (``{"query": …}``); ``summary`` a short,
    untrusted, human-readable description (``5 results``); ``payload`` the
    provider's raw block for exact replay.

    A state outside started/completed/failed or an ``input`` that is not
    JSON raises :class:`~elelem.errors.DecodeError` naming the field.
    """

    id: ActivityId
    name: str
    state: ActivityState
    input: JSONValue = None
    summary: str = ""
    payload: ProviderPayload | None = None

    def __post_init__(self) -> None:
        if self.state not in _STATES:
            raise DecodeError(f"unknown hosted activity state {self.state!r}", "$.state")
        if self.input is not None:
            bad = check_json(self.input, "$.input")
            if bad is not None:
                raise DecodeError("hosted activity input is not JSON", bad)

    @property
    def terminal(self) -> bool:
        """True for ``completed`` and ``failed`` transitions."""
        return self.state in TERMINAL_STATES

    def transition(
        self,
        state: ActivityState,
        *,
        summary: str = "",
        payload: ProviderPayload | None = None,
    ) -> HostedActivity:
        """A new transition of the same activity (``self`` is never mutated)."""
        return HostedActivity(
            id=self.id,
            name=self.name,
            state=state,
            input=self.input,
            summary=summary,
            payload=payload,
        )


__all__ = ["TERMINAL_STATES", "ActivityState", "HostedActivity"]
