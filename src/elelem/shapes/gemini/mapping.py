"""Value mappings of the Gemini wire: finish reasons and ``usageMetadata``.  Pure functions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from elelem.shapes.common import wire_int
from elelem.vocabulary import Usage, decoded_usage

CONTENT_FILTER = frozenset({"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII"})
"""Gemini finish reasons that mean the output was filtered."""

FINISH_REASONS: Mapping[str, str] = {
    "STOP": "stop",
    "MAX_TOKENS": "max-tokens",
    **dict.fromkeys(sorted(CONTENT_FILTER), "content-filter"),
}
"""Gemini ``finishReason`` -> neutral finish reason; any other value is kept as-is."""


def finish_reason(raw: str, called: bool) -> str:
    """The neutral finish reason of a Gemini ``finishReason`` (unknown ones
    kept): ``STOP`` after a function call is ``tool-calls``."""
    reason = FINISH_REASONS.get(raw, raw)
    return "tool-calls" if reason == "stop" and called else reason


def map_usage(raw: Mapping[str, Any], *, decoded: bool = False) -> Usage:
    """A :class:`Usage` from ``usageMetadata`` (cumulative: the latest one is whole).

    Cached prompt tokens are counted once, in ``cache_read``; thought tokens
    are ``reasoning``, apart from the candidate (``output``) tokens; the
    prompt tokens of hosted tool use (``toolUsePromptTokenCount``: search
    results fed to the model) are ``input``, as they are billed, so the
    counts add up to ``totalTokenCount``.  ``decoded``: ``raw`` is an object
    :func:`msgspec.json.decode` returned, kept as it is (see
    :func:`~elelem.vocabulary.decoded_usage`); any other is checked and copied.
    """
    get = raw.get
    prompt = get("promptTokenCount", 0)
    cached = get("cachedContentTokenCount", 0)
    tool_prompt = get("toolUsePromptTokenCount", 0)
    output = get("candidatesTokenCount", 0)
    thoughts = get("thoughtsTokenCount", 0)
    if not (
        # int counts (a stream's every chunk) skip the general rule
        type(prompt) is int
        and type(cached) is int
        and type(tool_prompt) is int
        and type(output) is int
        and type(thoughts) is int
    ):
        prompt, cached, tool_prompt = wire_int(prompt), wire_int(cached), wire_int(tool_prompt)
        output, thoughts = wire_int(output), wire_int(thoughts)
    input_tokens = max(prompt - cached, 0) + tool_prompt
    if decoded and type(raw) is dict:
        return decoded_usage(raw, input_tokens, output, cached, 0, thoughts)
    return Usage(
        input=input_tokens, output=output, cache_read=cached, reasoning=thoughts, raw=dict(raw)
    )


__all__ = ["CONTENT_FILTER", "FINISH_REASONS", "finish_reason", "map_usage"]
