"""Value mappings of the Converse wire: stop reasons and usage.  Pure functions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from elelem.shapes.common import malformed
from elelem.vocabulary import Usage

FINISH_REASONS: Mapping[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool-calls",
    "max_tokens": "max-tokens",
    "guardrail_intervened": "content-filter",
    "content_filtered": "content-filter",
}
"""Converse ``stopReason`` -> neutral finish reason; any other value is kept as-is."""


def finish_reason(raw: str) -> str:
    """The neutral finish reason of a ``stopReason`` (unknown ones kept)."""
    return FINISH_REASONS.get(raw, raw)


def map_usage(usage: Mapping[str, Any]) -> Usage:
    """Converse ``usage`` -> :class:`Usage` (``inputTokens`` already excludes cache)."""

    def count(name: str) -> int:
        value = usage.get(name, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise malformed(f"bedrock usage {name} is not a count", dict(usage))
        return value

    return Usage(
        input=count("inputTokens"),
        output=count("outputTokens"),
        cache_read=count("cacheReadInputTokens"),
        cache_write=count("cacheWriteInputTokens"),
        raw=dict(usage),
    )


__all__ = ["FINISH_REASONS", "finish_reason", "map_usage"]
