"""Context editing (:class:`~elelem.vocabulary.ContextEditing`) on the wires.

Anthropic's Messages API is the one wire that takes it: a top-level
``context_management`` object listing its edits, behind the
``context-management-2025-06-27`` beta flag
(https://platform.claude.com/docs/en/build-with-claude/context-editing).
Every other shape reports the option dropped, once.  The edits the server
applied come back as ``context_management.applied_edits`` on the response
(``message_delta`` when streamed) and are kept in the response's message
payload (:func:`applied_edits` reads them from the response record).  Sans-IO.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from elelem.shapes.common import Dropped
from elelem.vocabulary import ContextEditing, ProviderPayload
from elelem.vocabulary.drop import UNSUPPORTED
from elelem.vocabulary.json import thaw

CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"
"""The ``anthropic-beta`` flag context editing needs."""


def anthropic_context_management(editing: ContextEditing) -> dict[str, Any]:
    """The Anthropic ``context_management`` object for ``editing``.

    The thinking edit comes first: the API refuses the two in the other order.
    """
    edits: list[dict[str, Any]] = []
    thinking = editing.clear_thinking
    if thinking is not None:
        edit: dict[str, Any] = {"type": "clear_thinking_20251015"}
        if thinking.keep_all:
            edit["keep"] = "all"
        elif thinking.keep_turns is not None:
            edit["keep"] = {"type": "thinking_turns", "value": thinking.keep_turns}
        edits.append(edit)
    uses = editing.clear_tool_uses
    if uses is not None:
        edit = {"type": "clear_tool_uses_20250919"}
        if uses.trigger_input_tokens is not None:
            edit["trigger"] = {"type": "input_tokens", "value": uses.trigger_input_tokens}
        if uses.keep_tool_uses is not None:
            edit["keep"] = {"type": "tool_uses", "value": uses.keep_tool_uses}
        if uses.clear_at_least_input_tokens is not None:
            edit["clear_at_least"] = {
                "type": "input_tokens",
                "value": uses.clear_at_least_input_tokens,
            }
        if uses.exclude_tools:
            edit["exclude_tools"] = list(uses.exclude_tools)
        if uses.clear_tool_inputs is not None:
            edit["clear_tool_inputs"] = uses.clear_tool_inputs
        edits.append(edit)
    return {"edits": edits}


def not_taken(editing: ContextEditing | None, wire: str, dropped: Dropped) -> None:
    """Report ``editing`` (if set) dropped by a wire that has no context editing."""
    if editing is not None:
        dropped.add(
            "options.context_editing",
            "context_editing",
            UNSUPPORTED,
            f"{wire} has no server-side context editing; the full prompt is sent",
        )


def applied_edits(payloads: Iterable[ProviderPayload]) -> list[dict[str, Any]]:
    """The context edits the server says it applied, read from a response's
    payloads (a :class:`~elelem.conversation.events.ResponseRecord`'s
    ``payloads``: the Anthropic ``message`` envelope), in the server's order;
    [] if it applied none."""
    edits: list[dict[str, Any]] = []
    for payload in payloads:
        value = payload.value
        if payload.format != "message" or not isinstance(value, dict):
            continue
        management = value.get("context_management")
        if isinstance(management, dict) and isinstance(management.get("applied_edits"), list):
            edits.extend(thaw(e) for e in management["applied_edits"] if isinstance(e, dict))
    return edits


__all__ = [
    "CONTEXT_MANAGEMENT_BETA",
    "anthropic_context_management",
    "applied_edits",
    "not_taken",
]
