"""Value mappings of the Chat Completions wire: finish reasons, and usage
objects -> :class:`Usage` with disjoint counts.  Pure functions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from elelem.shapes.common import wire_int
from elelem.vocabulary import SEARCH_SOURCES, Usage, decoded_usage, hosted_counts

FINISH_REASONS: Mapping[str, str] = {
    "stop": "stop",
    "tool_calls": "tool-calls",
    "function_call": "tool-calls",
    "length": "max-tokens",
    "content_filter": "content-filter",
}
"""Chat Completions ``finish_reason`` -> neutral finish reason; any other value is kept as-is."""


def finish_reason(raw: str, *, refused: bool = False) -> str:
    """The neutral finish reason for a ``finish_reason`` (unknown ones kept):
    ``stop`` after a ``refusal`` delta is ``refused``."""
    reason = FINISH_REASONS.get(raw, raw)
    return "refused" if reason == "stop" and refused else reason


_PLAIN_USAGE = frozenset({"prompt_tokens", "completion_tokens", "total_tokens"})


def _sub(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def map_usage(raw: Mapping[str, Any], *, decoded: bool = False) -> Usage:
    """Map one wire usage object.

    ``input`` is ``prompt_tokens`` less cache reads (``prompt_tokens_details.
    cached_tokens``, or DeepSeek's ``prompt_cache_hit_tokens``) and cache
    writes (OpenRouter's ``cache_write_tokens``); ``reasoning`` is
    ``completion_tokens_details.reasoning_tokens`` and ``output`` the rest of
    ``completion_tokens`` (all of it where, as with xAI, ``total_tokens`` shows
    reasoning counted outside it; at most all of it otherwise), so the counts
    are disjoint and add up to ``total_tokens``.  ``decoded``: ``raw`` is an
    object :func:`msgspec.json.decode` returned, kept as it is (see
    :func:`~elelem.vocabulary.decoded_usage`); any other is checked and copied.
    """
    prompt = raw.get("prompt_tokens", 0)
    completion = raw.get("completion_tokens", 0)
    if type(prompt) is int and type(completion) is int and raw.keys() <= _PLAIN_USAGE:
        # Most usage objects hold only the three counts (Perplexity sends one
        # on every chunk): nothing to subtract, nothing hosted.
        reasoning = min(completion, 0)  # as below: never more than completion_tokens
        if decoded and type(raw) is dict:
            return decoded_usage(raw, max(prompt, 0), completion - reasoning, 0, 0, reasoning)
        return Usage(
            input=max(prompt, 0),
            output=completion - reasoning,
            reasoning=reasoning,
            raw=dict(raw),
        )
    prompt = wire_int(raw.get("prompt_tokens"))
    details = _sub(raw, "prompt_tokens_details")
    cache_read = wire_int(details.get("cached_tokens")) or wire_int(
        raw.get("prompt_cache_hit_tokens")
    )
    cache_write = wire_int(details.get("cache_write_tokens"))
    completion = wire_int(raw.get("completion_tokens"))
    reasoning = wire_int(_sub(raw, "completion_tokens_details").get("reasoning_tokens"))
    hosted: dict[str, int] = {}
    # OpenRouter reports ``server_tool_use_details`` (and ``server_tool_use``
    # on some routes), counters named by the one neutral table; Perplexity
    # ``num_search_queries``.
    for key in ("server_tool_use_details", "server_tool_use"):
        counters = _sub(raw, key)
        if not counters:
            continue  # most usage objects have none: spare the table lookup
        for name, count in hosted_counts(counters, "_requests").items():
            if count:
                hosted[name] = count
    searches = wire_int(raw.get("num_search_queries"))
    if searches and "web_search" not in hosted:
        hosted["web_search"] = searches
    sources = raw.get("num_sources_used")  # xAI live search
    if isinstance(sources, int) and not isinstance(sources, bool):
        hosted[SEARCH_SOURCES] = sources
    total = wire_int(raw.get("total_tokens"))
    # xAI counts reasoning outside completion_tokens (total = prompt +
    # completion + reasoning); everyone else inside it.
    outside = reasoning > 0 and total == prompt + completion + reasoning
    if not outside:
        # Inside completion_tokens, reasoning cannot exceed it (OpenRouter
        # passes some upstreams' larger figure on; raw keeps it).
        reasoning = min(reasoning, completion)
    output = completion if outside else completion - reasoning
    return Usage(
        input=max(prompt - cache_read - cache_write, 0),
        output=output,
        cache_read=cache_read,
        cache_write=cache_write,
        reasoning=reasoning,
        hosted=hosted,
        raw=dict(raw),
    )


__all__ = ["FINISH_REASONS", "finish_reason", "map_usage"]
