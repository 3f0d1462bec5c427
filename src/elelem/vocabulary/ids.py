"""Branded identifiers.

Each id is a ``NewType`` over ``str``: free at run time, distinct to the type
checker, so a bare ``str`` never crosses a package boundary where an id is meant.
"""

from __future__ import annotations

from typing import NewType

ConversationId = NewType("ConversationId", str)
"""Identity of one conversation log."""

EventId = NewType("EventId", str)
"""Stable identity of one event in a conversation log."""

ResponseId = NewType("ResponseId", str)
"""The provider's identity of one response (``msg_…``, ``resp_…``)."""

CallId = NewType("CallId", str)
"""Identity of a client tool call, linking the call to its result."""

ActivityId = NewType("ActivityId", str)
"""Provider-assigned identity of one hosted activity (correlation key)."""

ProviderId = NewType("ProviderId", str)
"""Name of a provider in the catalog (``anthropic``, ``openai``, …)."""

__all__ = ["ActivityId", "CallId", "ConversationId", "EventId", "ProviderId", "ResponseId"]
