"""Anthropic's token counting: ``POST /v1/messages/count_tokens`` takes the
Messages request's ``model``, ``messages``, ``system``, ``tools``,
``tool_choice``, ``thinking`` and ``mcp_servers`` and answers
``{"input_tokens": N}``."""

from __future__ import annotations

from elelem.shapes.counting import endpoint_beside
from elelem.wire.counting import TokenCounter

KEYS = frozenset({"model", "messages", "system", "tools", "tool_choice", "thinking", "mcp_servers"})
"""The body fields the counting endpoint takes."""

COUNTER = TokenCounter(
    "Anthropic count_tokens",
    endpoint_beside("/count_tokens", KEYS),
    lambda answer: answer.get("input_tokens"),
)
"""How the Messages wire counts."""

__all__ = ["COUNTER", "KEYS"]
