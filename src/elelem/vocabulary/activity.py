"""Hosted activity: work a provider ran on its own servers."""

from __future__ import annotations

from typing import Literal

import msgspec

from elelem.vocabulary.ids import ActivityId
from elelem.vocabulary.json import JSONValue
from elelem.vocabulary.payload import ProviderPayload

ActivityState = Literal["started", "completed", "failed"]

TERMINAL_STATES: frozenset[str] = frozenset({"completed", "failed"})


class HostedActivity(msgspec.Struct, frozen=True, tag_field="type", tag="hosted"):
    """One transition of a hosted activity (web search, web fetch, code execution, …).

    Hosted activity is not a tool call and not assistant content: the caller
    never executes it.  Each value is a *transition*; the activity's history is
    the append-only sequence of transitions sharing ``id``.  A ``started``
    transition with no terminal one means it began and never finished.

    ``name`` is the neutral capability name (``web_search``); ``input`` the
    normalized invocation input (``{"query": …}``); ``summary`` a short,
    untrusted, human-readable description (``5 results``); ``payload`` the
    provider's raw block for exact replay.
    """

    id: ActivityId
    name: str
    state: ActivityState
    input: JSONValue = None
    summary: str = ""
    payload: ProviderPayload | None = None

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
