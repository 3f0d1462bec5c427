"""Which state of the provider a Responses request continues.

A stored response (``store: true``) is continued with
``previous_response_id``, a response made in a conversation of the
Conversations API with ``conversation``; the rule is
:func:`elelem.shapes.provider_state.continues`, this module says only which
envelope names the state.  On by default for stored conversations (see
:mod:`elelem.shapes.provider_state`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from elelem.shapes.provider_state import Continuation, continues
from elelem.vocabulary import Drop, Message, ProviderPayload

RESPONSE_FORMAT = "response"
"""The finish payload holding a response's envelope (its output left out)."""


def _held(envelope: Mapping[str, Any]) -> tuple[str, str] | None:
    """The body field and id naming the state ``envelope``'s response left
    on the provider, if it left one."""
    conversation = envelope.get("conversation")
    if isinstance(conversation, dict) and isinstance(conversation.get("id"), str):
        return "conversation", conversation["id"]
    if isinstance(conversation, str) and conversation:
        return "conversation", conversation
    response_id = envelope.get("id")
    if envelope.get("store") is True and isinstance(response_id, str) and response_id:
        return "previous_response_id", response_id
    return None


def continuation(
    messages: Sequence[Message],
    payloads: Sequence[ProviderPayload],
    provider: str,
    extra: Mapping[str, Any],
) -> tuple[Continuation | None, list[Drop]]:
    """How a Responses request continues ``provider``'s state, or None to
    replay the whole history; and the drop that says a lost state was
    replayed."""
    return continues(messages, payloads, provider, extra, RESPONSE_FORMAT, _held)


__all__ = ["RESPONSE_FORMAT", "continuation"]
