"""Value mappings of the Responses wire: finish reasons and usage.  Pure functions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from elelem.shapes.common import wire_int
from elelem.vocabulary import (
    HOSTED_ACTIVITY_NAMES,
    SEARCH_SOURCES,
    SERVER_SIDE_TOOLS,
    Usage,
    hosted_counts,
    neutral_activity_name,
)

FINISH_REASONS: Mapping[str, str] = {
    "max_output_tokens": "max-tokens",
    "content_filter": "content-filter",
}
"""An ``incomplete`` response's ``incomplete_details.reason`` -> neutral finish
reason; any other value is kept as-is (a ``completed`` response finishes
``stop``, ``tool-calls`` or ``refused`` by what it holds, a ``cancelled`` one
``aborted``)."""


def finish_reason(raw: str) -> str:
    """The neutral finish reason of an ``incomplete_details.reason`` (unknown ones kept)."""
    return FINISH_REASONS.get(raw, raw)


def hosted_calls(output: Sequence[Any]) -> dict[str, int]:
    """The hosted tool calls a response's ``output`` holds (``web_search_call``,
    ``file_search_call``, …, not failed), by neutral name: OpenAI bills them per
    call but its usage object does not count them."""
    counts: dict[str, int] = {}
    for item in output:
        kind = item.get("type") if isinstance(item, dict) else None
        if not isinstance(kind, str) or not kind.endswith("_call"):
            continue
        name = neutral_activity_name(kind.removesuffix("_call"))
        if name in HOSTED_ACTIVITY_NAMES and item.get("status") != "failed":
            counts[name] = counts.get(name, 0) + 1
    return counts


def map_usage(raw: Mapping[str, Any], output: Sequence[Any] = ()) -> Usage:
    """A Responses usage object as disjoint :class:`Usage` counters.

    Where the usage has no per-tool counters (OpenAI's has none; xAI's
    ``server_side_tool_usage_details`` has), ``hosted`` counts the hosted
    calls of the response's ``output`` (:func:`hosted_calls`).

    ``input_tokens`` includes cached (and cache-write) tokens and
    ``output_tokens`` includes reasoning tokens; they are split out so the
    counts are disjoint.  xAI's ``num_server_side_tools_used`` is
    ``hosted["server_side_tools"]`` and ``num_sources_used`` is
    ``hosted["search_sources"]``.
    """
    in_details = raw.get("input_tokens_details")
    out_details = raw.get("output_tokens_details")
    cached = wire_int(in_details.get("cached_tokens")) if isinstance(in_details, dict) else 0
    written = wire_int(in_details.get("cache_write_tokens")) if isinstance(in_details, dict) else 0
    reasoning = (
        wire_int(out_details.get("reasoning_tokens")) if isinstance(out_details, dict) else 0
    )
    details = raw.get("server_side_tool_usage_details")
    hosted = hosted_counts(details, "_calls") if isinstance(details, dict) else hosted_calls(output)
    # xAI also counts every server-side tool invocation it bills, which is
    # more than the per-tool counters when a tool ran several steps.
    invocations = raw.get("num_server_side_tools_used")
    if isinstance(invocations, int) and not isinstance(invocations, bool):
        hosted[SERVER_SIDE_TOOLS] = invocations
    sources = raw.get("num_sources_used")
    if isinstance(sources, int) and not isinstance(sources, bool):
        hosted[SEARCH_SOURCES] = sources
    return Usage(
        input=max(wire_int(raw.get("input_tokens")) - cached - written, 0),
        output=max(wire_int(raw.get("output_tokens")) - reasoning, 0),
        cache_read=cached,
        cache_write=written,
        reasoning=reasoning,
        hosted=hosted,
        raw=dict(raw),
    )


__all__ = ["FINISH_REASONS", "finish_reason", "hosted_calls", "map_usage"]
