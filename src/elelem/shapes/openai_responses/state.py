"""Which state of the provider a Responses request continues.

A stored response (``store: true``) is continued with
``previous_response_id``, a response made in a conversation of the
Conversations API with ``conversation``; the rule is
:func:`elelem.shapes.provider_state.continues`, which the encoder calls
with this module's two answers: the finish payload holding the envelope
(:data:`RESPONSE_FORMAT`) and the state it names (:func:`held_state`).  On by default for stored conversations (see
:mod:`elelem.shapes.provider_state`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

RESPONSE_FORMAT = "response"
"""The finish payload holding a response's envelope (its output left out)."""


def held_state(envelope: Mapping[str, Any]) -> tuple[str, str] | None:
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


__all__ = ["RESPONSE_FORMAT", "held_state"]
