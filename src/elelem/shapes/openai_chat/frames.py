"""The hot Chat Completions chunk, decoded straight to typed values.

Nearly every chunk of a streamed answer carries one choice whose delta holds
only text or reasoning.  :data:`HOT_CHUNK` decodes exactly that shape; any
other chunk (a field not listed here, a tool call, usage, Perplexity
citations, an error, a value of another type) fails the typed decode and the
parser's dict path handles it, so unknown fields are still kept and every
error stays the same.  The fields listed besides the content are ones the
dict path ignores once the response has started (response metadata, labels),
typed ``Any`` because their value changes nothing.
"""

from __future__ import annotations

from typing import Any

import msgspec


class HotDelta(msgspec.Struct, forbid_unknown_fields=True):
    """A delta holding at most text, reasoning and a refusal."""

    content: str | None = None
    reasoning_content: str | None = None
    reasoning: str | None = None
    refusal: str | None = None
    role: Any = None
    channel: Any = None


class HotChoice(msgspec.Struct, forbid_unknown_fields=True):
    """One choice of a hot chunk."""

    delta: HotDelta
    index: int = 0
    finish_reason: str | None = None
    logprobs: None = None


class HotChunk(msgspec.Struct, forbid_unknown_fields=True):
    """A chunk whose only content is its choices' deltas (no usage, no citations)."""

    choices: list[HotChoice]
    id: Any = None
    object: Any = None
    created: Any = None
    model: Any = None
    system_fingerprint: Any = None
    service_tier: Any = None
    provider: Any = None
    obfuscation: Any = None
    usage: None = None


HOT_CHUNK = msgspec.json.Decoder(HotChunk)
"""Decoder of :class:`HotChunk`; raises ``msgspec.DecodeError`` for anything else."""
