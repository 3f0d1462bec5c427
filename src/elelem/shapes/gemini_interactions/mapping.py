"""Gemini Interactions wire values -> neutral values: finish reasons, usage,
the hosted tools a step names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from elelem.shapes.common import wire_int
from elelem.vocabulary import (
    Usage,
    neutral_activity_name,
)

HOSTED_NAMES: dict[str, str] = {
    tool: neutral_activity_name(tool)
    for tool in ("google_search", "url_context", "code_execution", "file_search", "google_maps")
}
"""Interactions hosted tool (the step type without ``_call``/``_result``) -> neutral
name, through the one table of :func:`elelem.vocabulary.neutral_activity_name`."""


FINISH_REASONS: dict[str, str] = {
    "completed": "stop",
    "requires_action": "tool-calls",
    "incomplete": "max-tokens",
    "failed": "error",
    "cancelled": "aborted",
}
"""Final interaction ``status`` -> neutral finish reason (unknown ones kept)."""


def finish_reason(status: str) -> str:
    """The neutral finish reason of a final interaction ``status`` (unknown ones kept)."""
    return FINISH_REASONS.get(status, status)


def map_usage(raw: Mapping[str, Any]) -> Usage:
    """A :class:`Usage` from an interaction's ``usage`` (cached input counted
    once; the tool-use prompt tokens are ``input``, as in ``usageMetadata``)."""
    cached = wire_int(raw.get("total_cached_tokens"))
    tool_prompt = wire_int(raw.get("total_tool_use_tokens"))
    return Usage(
        input=max(wire_int(raw.get("total_input_tokens")) - cached, 0) + tool_prompt,
        output=wire_int(raw.get("total_output_tokens")),
        cache_read=cached,
        reasoning=wire_int(raw.get("total_thought_tokens")),
        raw=dict(raw),
    )
