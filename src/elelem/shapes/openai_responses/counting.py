"""OpenAI's token counting: ``POST /responses/input_tokens`` takes the
Responses request's input side (``model``, ``input``, ``instructions``,
``tools``, ``tool_choice``, ``parallel_tool_calls``, ``reasoning``, ``text``,
``truncation``, ``previous_response_id``, ``conversation``) and answers
``{"object": "response.input_tokens", "input_tokens": N}``."""

from __future__ import annotations

from elelem.shapes.counting import endpoint_beside
from elelem.wire.counting import TokenCounter

KEYS = frozenset(
    {"model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls",
     "reasoning", "text", "truncation", "previous_response_id", "conversation"}
)  # fmt: skip
"""The body fields the counting endpoint takes."""

COUNTER = TokenCounter(
    "OpenAI responses/input_tokens",
    endpoint_beside("/input_tokens", KEYS),
    lambda answer: answer.get("input_tokens"),
)
"""How the Responses wire counts."""

__all__ = ["COUNTER", "KEYS"]
