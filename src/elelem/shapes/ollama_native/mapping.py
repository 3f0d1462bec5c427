"""Value mappings of Ollama's ``/api/chat`` wire: finish reasons and the token
counters of the final line.  Pure functions."""

from __future__ import annotations

from collections.abc import Mapping

from elelem.vocabulary import Usage

FINISH_REASONS: Mapping[str, str] = {"stop": "stop", "length": "max-tokens"}
"""Ollama ``done_reason`` -> finish reason; others (``load``, ``unload``) pass through."""

USAGE_FIELDS = ("prompt_eval_count", "eval_count")
"""The final line's token counters (input, output)."""


def finish_reason(raw: str, called: bool) -> str:
    """The neutral finish reason of a ``done_reason`` (unknown ones kept):
    ``stop`` after a tool call is ``tool-calls``."""
    reason = FINISH_REASONS.get(raw, raw)
    return "tool-calls" if reason == "stop" and called else reason


def map_usage(counts: Mapping[str, int]) -> Usage:
    """A :class:`Usage` from the final line's :data:`USAGE_FIELDS` (checked counts)."""
    return Usage(
        input=counts.get("prompt_eval_count", 0),
        output=counts.get("eval_count", 0),
        raw=dict(counts),
    )


__all__ = ["FINISH_REASONS", "USAGE_FIELDS", "finish_reason", "map_usage"]
