"""The ``context-edits`` overlay: the context edits a provider says it
applied to the prompt of one response (Anthropic's
``context_management.applied_edits``, https://platform.claude.com/docs/en/build-with-claude/context-editing).

The provider clears old tool results and reasoning from what the model
reads, on its side; the client keeps sending the whole history (so the
cached prefix stays the provider's) and the log keeps every event.  This
overlay records what was cleared, next to the response it was cleared for:
``response`` its number in the turn, ``edits`` the provider's entries as
they came (``cleared_tool_uses``, ``cleared_thinking_turns``,
``cleared_input_tokens``), read by ``show``, the exports and the page.  It
changes no projection: the next request is the history as the log holds
it, and the provider applies its edits again, consistently.
"""

from __future__ import annotations

import msgspec

from elelem.conversation.events import register_event_kind
from elelem.vocabulary import ProviderId
from elelem.vocabulary.json import JSONValue


class ContextEdits(msgspec.Struct, frozen=True, gc=False):
    """The edits ``provider`` applied before response ``response`` (see the
    module docstring)."""

    provider: ProviderId
    response: int
    edits: tuple[JSONValue, ...]

    def cleared(self, key: str) -> int:
        """The sum of ``key`` (``cleared_input_tokens``…) over the edits."""
        total = 0
        for edit in self.edits:
            value = edit.get(key) if isinstance(edit, dict) else None
            if isinstance(value, int) and not isinstance(value, bool):
                total += value
        return total


register_event_kind("context-edits", ContextEdits)

__all__ = ["ContextEdits"]
