"""History the provider keeps: continuing from a stored response, a
conversation or an interaction instead of replaying every turn.

The rule is the same on every wire whose provider keeps state (Responses:
:mod:`elelem.shapes.openai_responses.state`; Gemini Interactions:
``previous_interaction_id``, ai.google.dev/gemini-api/docs/interactions,
stored unless ``store: false``); each wire says only which envelope names
the state and how.

The Responses API keeps what a response saw and said when it is stored
(``store: true``): the next request may name it as ``previous_response_id``
and send only its new input, the provider prepending the rest
(platform.openai.com/docs/guides/conversation-state, "Passing context from
the previous response"); a response made in a conversation of the
Conversations API (``conversation``) adds its items to that conversation,
and the next request naming it sends only its new input too
(platform.openai.com/docs/api-reference/conversations).  OpenAI, xAI and
Azure's Responses keep state this way.

Sans-IO and decided from the request alone: the provider's latest response
envelope (the ``response`` finish payload the log keeps on each response
record, its ``id``, ``store`` and ``conversation``) and the history.  The
state is used when the history's last assistant message is this provider's
and its latest response was stored (or belongs to a conversation); the new
input is every message after that assistant message.  Otherwise, and when a
request already failed because the provider no longer held the state (a
:data:`STATE_LOST` payload among the response payloads: expired, deleted,
made with another key), the whole history is replayed natively, which is
always correct, and a lost state is reported as an ``expired`` drop, so the
response record says the request fell back.

On by default, for stored conversations only: a request is stateless
(``store: false``) unless the caller stores it, since a stored response is
kept by the provider (30 days on OpenAI) and elelem's own log is the
history; once a conversation is stored, its state is there to use, and
sending twenty turns again on each turn only costs bytes and time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

from elelem.errors import FULL_REPLAY, STATE_LOST
from elelem.vocabulary import Drop, Message, ProviderPayload
from elelem.vocabulary.drop import EXPIRED

ANY_STATE = "*"
"""The id of a lost state when the error did not name it: whatever the
provider held when the error came."""

_CALLER_FIELDS = ("previous_response_id", "conversation", "previous_interaction_id")

_RESPONSE_ID = re.compile(r"\b((?:resp|conv)_[A-Za-z0-9_-]+)")


class Continuation(msgspec.Struct, frozen=True):
    """How a request continues the provider's state: from message ``start``
    on (the new input), with ``fields`` set on the body
    (``previous_response_id`` or ``conversation``)."""

    start: int
    fields: Mapping[str, Any]


def _latest_envelope(
    payloads: Sequence[ProviderPayload], provider: str, envelope_format: str
) -> Mapping[str, Any] | None:
    for payload in reversed(payloads):
        if payload.provider == provider and payload.format == envelope_format:
            value = payload.value
            return value if isinstance(value, dict) else None
    return None


def _lost(payloads: Sequence[ProviderPayload], provider: str) -> set[str]:
    lost = set()
    for payload in payloads:
        if payload.provider == provider and payload.format == STATE_LOST:
            value = payload.value
            if isinstance(value, dict) and isinstance(value.get("id"), str):
                lost.add(value["id"])
    return lost


def continues(
    messages: Sequence[Message],
    payloads: Sequence[ProviderPayload],
    provider: str,
    extra: Mapping[str, Any],
    envelope_format: str,
    held_by: Callable[[Mapping[str, Any]], tuple[str, str] | None],
) -> tuple[Continuation | None, list[Drop]]:
    """The rule of every wire whose provider keeps state: the latest
    envelope of ``provider`` (finish payload ``envelope_format``) names the
    state ``held_by`` reads from it (the body field and the id), used when
    the history's last assistant message is ``provider``'s, there is new
    input after it, the caller did not name a state itself and the
    provider did not say it lost that state."""
    if any(field in extra for field in _CALLER_FIELDS) or "input" in extra:
        return None, []  # the caller says how, in the body itself
    last = next(
        (i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "assistant"), None
    )
    if last is None or messages[last].provider != provider:
        return None, []
    envelope = _latest_envelope(payloads, provider, envelope_format)
    held = held_by(envelope) if envelope is not None else None
    if held is None:
        return None, []
    field, state_id = held
    lost = _lost(payloads, provider)
    if state_id in lost or ANY_STATE in lost:
        detail = f"{provider} no longer holds {state_id}: the whole history was sent"
        return None, [Drop(field, field, EXPIRED, detail)]
    if last == len(messages) - 1:
        return None, []  # no new input: nothing to continue with
    return Continuation(last + 1, {field: state_id}), []


def lost_state(message: str) -> str | None:
    """The response or conversation id an error message says is gone."""
    found = _RESPONSE_ID.search(message)
    return found.group(1) if found else None


__all__ = [
    "ANY_STATE",
    "FULL_REPLAY",
    "STATE_LOST",
    "Continuation",
    "continues",
    "lost_state",
]
