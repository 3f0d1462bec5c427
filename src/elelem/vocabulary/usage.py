"""Usage counters of one provider response."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from elelem.vocabulary.activity import neutral_activity_name
from elelem.vocabulary.json import JSONValue, require_json

_COUNTER_SUFFIXES = ("_requests", "_calls")

SERVER_SIDE_TOOLS = "server_side_tools"
"""The ``Usage.hosted`` counter of every hosted tool invocation a provider
counted in one (xAI's ``num_server_side_tools_used``), beside the per-tool
counters, which it can exceed: a tool that ran several steps counts each."""

SEARCH_SOURCES = "search_sources"
"""The ``Usage.hosted`` counter of the sources a provider's search read for
the answer (xAI's ``num_sources_used``), which some providers bill."""


def hosted_counter_name(key: str) -> str:
    """The neutral name of a provider's hosted-work counter.

    ``web_search_requests`` (Anthropic, OpenRouter) and ``code_interpreter_calls``
    (OpenAI, xAI) lose their suffix, and the stem goes through the one table of
    :func:`~elelem.vocabulary.activity.neutral_activity_name`: ``web_search``,
    ``code_execution``.  A stem nobody mapped is kept (``document_search``).
    """
    for suffix in _COUNTER_SUFFIXES:
        if key.endswith(suffix) and len(key) > len(suffix):
            return neutral_activity_name(key[: -len(suffix)])
    return neutral_activity_name(key)


def hosted_counts(counters: Mapping[str, object], suffix: str) -> dict[str, int]:
    """``Usage.hosted`` from a provider's counter object, in wire order.

    A counter is an integer whose key ends in the wire's ``suffix``
    (``_requests`` for Anthropic and OpenRouter, ``_calls`` for Responses); it
    is kept (zeros included) under its :func:`hosted_counter_name`, and two
    counters of one neutral name add up.  Any other key counts something else
    (OpenRouter's ``tool_calls_executed``) and is left to ``Usage.raw``.
    """
    out: dict[str, int] = {}
    for key, value in counters.items():
        if not isinstance(value, int) or isinstance(value, bool):
            continue
        if key.endswith(suffix) and len(key) > len(suffix):
            name = neutral_activity_name(key[: -len(suffix)])
            out[name] = out.get(name, 0) + value
    return out


class Usage(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    """Token and hosted-activity counters of one provider response.

    Counts are disjoint: ``input`` excludes ``cache_read`` and ``cache_write``;
    ``output`` excludes ``reasoning`` (where a provider reports no split, all
    generated tokens are ``output`` and ``reasoning`` is 0).  ``hosted`` maps a neutral counter name
    (``web_search``, ``web_fetch``, ``code_execution``, ``file_search``, … the
    names of :data:`~elelem.vocabulary.activity.HOSTED_ACTIVITY_NAMES`, see
    :func:`hosted_counter_name`) to a count.  ``raw`` is the provider's usage object as received.
    """

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0
    hosted: dict[str, int] = msgspec.field(default_factory=dict)
    raw: JSONValue = None

    def __post_init__(self) -> None:
        if self.raw is not None:
            require_json(self.raw, "$.raw", "usage raw value")

    @property
    def total(self) -> int:
        """All tokens counted: input, cache reads and writes, output and reasoning."""
        return self.input + self.cache_read + self.cache_write + self.output + self.reasoning


def decoded_usage(
    raw: dict[str, JSONValue],
    input: int = 0,
    output: int = 0,
    cache_read: int = 0,
    cache_write: int = 0,
    reasoning: int = 0,
) -> Usage:
    """A :class:`Usage` of the counts whose ``raw`` is an object that
    :func:`msgspec.json.decode` returned, taken as it is (not copied: the
    caller holds no other reference it changes).

    Such a value is JSON by construction (the decoder builds only JSON types
    and string keys, and rejects numbers out of range), so the check every
    other construction runs is not run again: a stream that sends a new usage
    object on every chunk (Gemini, Perplexity) would spend most of its
    mapping on it.
    """
    usage = Usage(input, output, cache_read, cache_write, reasoning)
    msgspec.structs.force_setattr(usage, "raw", raw)
    return usage


__all__ = [
    "SEARCH_SOURCES",
    "SERVER_SIDE_TOOLS",
    "Usage",
    "decoded_usage",
    "hosted_counter_name",
    "hosted_counts",
]
