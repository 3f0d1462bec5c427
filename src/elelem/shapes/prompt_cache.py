"""How each wire spells the neutral :class:`~elelem.vocabulary.PromptCache`.

The encoders share these rules so that the same request reports the same
shortfall in the same words on every wire:

- breakpoint wires (Anthropic ``cache_control``, Bedrock ``cachePoint``) keep
  a prefix for ``5m`` or ``1h``; a wanted ``24h`` is sent as ``1h`` and reported;
- OpenAI's retention is ``in_memory`` (minutes, at most an hour) or ``24h``,
  so ``5m`` maps to ``in_memory`` and ``1h``/``24h`` to ``24h``;
- a wire that caches on its own with nothing to set reports only what was
  asked and cannot be set (a ``ttl``, a ``key``); a wire with no caching
  control at all reports the whole option.

Sans-IO, pure functions of the option.
"""

from __future__ import annotations

from typing import Literal

from elelem.vocabulary import PromptCache
from elelem.vocabulary.json import JSONValue

WHERE = "prompt cache"
"""The ``where`` of every dropped line about :attr:`GenerationOptions.cache`."""

BreakpointTTL = Literal["5m", "1h"]


def breakpoint_ttl(cache: PromptCache, label: str, dropped: list[str]) -> BreakpointTTL | None:
    """The ``ttl`` of a ``cache_control`` / ``cachePoint`` marker for ``cache``.

    None when the caller left the lifetime to the provider.  ``24h`` is longer
    than any breakpoint lives: the longest (``1h``) is sent and the shortfall
    reported in ``dropped``, naming the wire by ``label``.
    """
    if cache.ttl == "24h":
        dropped.append(f"{WHERE}: ttl '24h' ({label} keeps a prefix at most 1h; 1h sent)")
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


def key_not_sent(cache: PromptCache, label: str, dropped: list[str]) -> None:
    """Report ``cache.key`` (if any) on a wire with no cache-key field."""
    if cache.key is not None:
        dropped.append(f"{WHERE}: key {cache.key!r} ({label} has no cache key; not sent)")


def automatic(cache: PromptCache, label: str, dropped: list[str]) -> None:
    """Report what a wire that caches on its own, with nothing to set, cannot honour."""
    if cache.ttl is not None:
        dropped.append(
            f"{WHERE}: ttl {cache.ttl!r} ({label} caches automatically with no lifetime "
            "to set; not sent)"
        )
    key_not_sent(cache, label, dropped)


def unsupported(label: str, dropped: list[str]) -> None:
    """Report the whole option on a wire with no caching control."""
    dropped.append(f"{WHERE}: {label} has no prompt-cache control (not sent)")


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
    dropped: list[str],
) -> None:
    """Automatic caching (Anthropic, and OpenRouter after it): one top-level
    ``cache_control`` the server moves to the last cacheable block, so a growing
    conversation keeps hitting its prefix.  A caller's own ``cache_control`` in
    ``extra`` wins (and nothing about the ttl is reported: it is not ours)."""
    if "cache_control" not in extra:
        body["cache_control"] = cache_control(breakpoint_ttl(cache, label, dropped))
    key_not_sent(cache, label, dropped)


__all__ = [
    "WHERE",
    "BreakpointTTL",
    "automatic",
    "breakpoint_ttl",
    "cache_control",
    "key_not_sent",
    "openai_cache_fields",
    "openai_retention",
    "top_level_marker",
    "unsupported",
]
