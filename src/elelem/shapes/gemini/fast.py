"""Typed decoding of the common Gemini stream chunk: text (or thought) parts only.

Nearly every chunk of a streamed reply has exactly one shape: one candidate
at index 0 whose content holds only text parts, plus ``usageMetadata``,
``modelVersion`` and ``responseId``.  Decoding that shape straight into
structs (:func:`hot_decoder`) skips building and walking a dict per chunk.
Every struct forbids unknown fields, so a chunk with anything else (a finish
reason, grounding, function calls, prompt feedback, an error, a field Google
adds later) fails to decode and goes through the general dict path, which
keeps it all.  A top-level field nobody listed that the dict path kept in
the envelope is learnt: the parser takes a decoder that also holds it, raw,
so the rest of the stream stays typed.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import msgspec

from elelem.vocabulary.json import decode_json

__all__ = [
    "HotCandidate",
    "HotChunk",
    "HotContent",
    "HotPart",
    "decode_usage",
    "extra_fields",
    "hot_decoder",
]


class HotPart(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A part with text, maybe a thought, maybe signed; nothing else."""

    text: str
    thought: bool = False
    thoughtSignature: str | None = None  # the wire's camelCase names, as msgspec matches them


class HotContent(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """Content of text parts (the role is not used by the parser)."""

    parts: list[HotPart]
    role: Any = None


class HotCandidate(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A candidate with content and an index, and no finish reason yet."""

    content: HotContent
    index: int


class HotChunk(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A response chunk of text-only candidates with the usual envelope."""

    candidates: list[HotCandidate]
    usageMetadata: msgspec.Raw  # decoded only when it differs from the last one
    modelVersion: str
    responseId: str


@lru_cache(maxsize=64)
def hot_decoder(extra: frozenset[str] = frozenset()) -> msgspec.json.Decoder[HotChunk]:
    """The decoder of a :class:`HotChunk` whose envelope may also hold the
    top-level fields ``extra`` (each as raw JSON, attribute ``x<i>`` in
    :func:`extra_fields` order).  A frame of any other shape raises
    :class:`msgspec.ValidationError` (text that is not JSON
    :class:`msgspec.DecodeError`): the general path decodes it again and
    raises the error that names what is wrong."""
    if not extra:
        return msgspec.json.Decoder(HotChunk)
    names = dict(extra_fields(extra))
    none = msgspec.field(default=None)
    struct = msgspec.defstruct(
        "HotChunk",
        [(attr, msgspec.Raw, none) for attr in names],
        bases=(HotChunk,),
        forbid_unknown_fields=True,
        rename=names,
        gc=False,
    )
    return msgspec.json.Decoder(struct)


def extra_fields(extra: frozenset[str]) -> tuple[tuple[str, str], ...]:
    """(attribute, wire name) of the fields :func:`hot_decoder` adds for ``extra``."""
    return tuple((f"x{i}", name) for i, name in enumerate(sorted(extra)))


def decode_usage(raw: msgspec.Raw) -> dict[str, Any] | None:
    """The ``usageMetadata`` object in ``raw``, or None when it is not an object."""
    value = decode_json(raw)
    return value if isinstance(value, dict) else None
