"""How each wire spells the neutral :class:`~elelem.vocabulary.PromptCache`.

The encoders share these rules so that the same request reports the same
shortfall in the same words on every wire:

- breakpoint wires (Anthropic ``cache_control``, Bedrock ``cachePoint``) keep
  a prefix for ``5m`` or ``1h``; a wanted ``24h`` is sent as ``1h`` and reported;
- OpenAI's retention is ``in_memory`` (minutes, at most an hour) or ``24h``,
  so ``5m`` maps to ``in_memory`` and ``1h``/``24h`` to ``24h``;
- a ``key`` goes where the wire routes on one (OpenAI's ``prompt_cache_key``,
  xAI Chat's ``x-grok-conv-id`` header) and is reported everywhere else;
- a wire that caches on its own with nothing to set reports only what was
  asked and cannot be set (a ``ttl``, a ``key``); a wire with no caching
  control at all reports the whole option.

Sans-IO: each function reads the option and writes only the body, headers
or drop list it is given.
"""

from __future__ import annotations

from typing import Literal

from elelem.vocabulary import Drop, PromptCache
from elelem.vocabulary.drop import ADJUSTED, INVALID, UNSUPPORTED
from elelem.vocabulary.json import JSONValue

WHERE = "options.cache"
"""The ``where`` of every drop about :attr:`GenerationOptions.cache`."""

BreakpointTTL = Literal["5m", "1h"]

MAX_BREAKPOINTS = 4
"""``cache_control`` markers one Anthropic request may carry, the automatic one
included (Bedrock allows as many ``cachePoint`` blocks)."""


def breakpoint_ttl(cache: PromptCache, label: str, dropped: list[Drop]) -> BreakpointTTL | None:
    """The ``ttl`` of a ``cache_control`` / ``cachePoint`` marker for ``cache``.

    None when the caller left the lifetime to the provider.  ``24h`` is longer
    than any breakpoint lives: the longest (``1h``) is sent and the shortfall
    reported in ``dropped``, naming the wire by ``label``.
    """
    if cache.ttl == "24h":
        dropped.append(
            Drop(
                f"{WHERE}.ttl",
                "ttl",
                ADJUSTED,
                f"'24h': {label} keeps a prefix at most 1h; 1h sent",
            )
        )
        return "1h"
    return cache.ttl


def openai_retention(cache: PromptCache) -> str | None:
    """OpenAI's ``prompt_cache_retention`` for ``cache``: the shortest that lasts
    at least ``cache.ttl`` (in-memory prefixes live minutes, at most an hour)."""
    if cache.ttl is None:
        return None
    return "in_memory" if cache.ttl == "5m" else "24h"


def openai_cache_fields(cache: PromptCache, body: dict[str, JSONValue]) -> None:
    """Set OpenAI's ``prompt_cache_key`` / ``prompt_cache_retention`` (Responses
    and Chat Completions spell them alike); caching itself is automatic."""
    if cache.key is not None:
        body["prompt_cache_key"] = cache.key
    retention = openai_retention(cache)
    if retention is not None:
        body["prompt_cache_retention"] = retention


def key_not_sent(cache: PromptCache, label: str, dropped: list[Drop]) -> None:
    """Report ``cache.key`` (if any) on a wire with no cache-key field."""
    if cache.key is not None:
        dropped.append(
            Drop(f"{WHERE}.key", "key", UNSUPPORTED, f"{cache.key!r}: {label} has no cache key")
        )


def automatic(cache: PromptCache, label: str, dropped: list[Drop]) -> None:
    """Report what a wire that caches on its own, with nothing to set, cannot honour."""
    if cache.ttl is not None:
        dropped.append(
            Drop(
                f"{WHERE}.ttl",
                "ttl",
                UNSUPPORTED,
                f"{cache.ttl!r}: {label} caches automatically with no lifetime to set",
            )
        )
    key_not_sent(cache, label, dropped)


CONVERSATION_HEADER = "x-grok-conv-id"
"""xAI's Chat Completions cache-routing header (``prompt_cache_key`` on its Responses API)."""


def conversation_header(cache: PromptCache, label: str, dropped: list[Drop]) -> dict[str, str]:
    """xAI Chat Completions: caching is automatic and ``key`` routes requests to
    the server holding the prefix, sent as a header.  A ``ttl`` is reported; so
    is a key that cannot be a header value (non-ASCII or control characters)."""
    if cache.ttl is not None:
        automatic(PromptCache(ttl=cache.ttl), label, dropped)
    key = cache.key
    if key is None:
        return {}
    if not (key.isascii() and key.isprintable()):
        dropped.append(
            Drop(
                f"{WHERE}.key", "key", INVALID, f"{key!r}: not a valid {CONVERSATION_HEADER} header"
            )
        )
        return {}
    return {CONVERSATION_HEADER: key}


def unsupported(label: str, dropped: list[Drop]) -> None:
    """Report the whole option on a wire with no caching control."""
    dropped.append(Drop(WHERE, "cache", UNSUPPORTED, f"{label} has no prompt-cache control"))


def cache_control(ttl: BreakpointTTL | None) -> dict[str, str]:
    """Anthropic's ``cache_control`` object (also OpenRouter's)."""
    out = {"type": "ephemeral"}
    if ttl is not None:
        out["ttl"] = ttl
    return out


def top_level_marker(
    cache: PromptCache,
    extra: dict[str, JSONValue],
    label: str,
    body: dict[str, JSONValue],
    dropped: list[Drop],
    *,
    explicit: int = 0,
) -> None:
    """Automatic caching (Anthropic, and OpenRouter after it): one top-level
    ``cache_control`` the server moves to the last cacheable block, so a growing
    conversation keeps hitting its prefix.  A caller's own ``cache_control`` in
    ``extra`` wins (and nothing about the ttl is reported: it is not ours).

    The marker takes one of the :data:`MAX_BREAKPOINTS` a request may carry;
    with ``explicit`` block-level markers already using them all it is not
    sent (the API would refuse the request) and that is reported."""
    if "cache_control" not in extra:
        if explicit >= MAX_BREAKPOINTS:
            dropped.append(
                Drop(
                    WHERE,
                    "automatic marker",
                    UNSUPPORTED,
                    f"the request already has {explicit} cache_control breakpoints "
                    f"({label} allows {MAX_BREAKPOINTS})",
                )
            )
        else:
            body["cache_control"] = cache_control(breakpoint_ttl(cache, label, dropped))
    key_not_sent(cache, label, dropped)


__all__ = [
    "CONVERSATION_HEADER",
    "MAX_BREAKPOINTS",
    "WHERE",
    "BreakpointTTL",
    "automatic",
    "breakpoint_ttl",
    "cache_control",
    "conversation_header",
    "key_not_sent",
    "openai_cache_fields",
    "openai_retention",
    "top_level_marker",
    "unsupported",
]
