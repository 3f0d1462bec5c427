"""Typed decoding of the common Gemini stream chunk: text (or thought) parts only.

Nearly every chunk of a streamed reply has exactly one shape: one candidate
at index 0 whose content holds only text parts, plus ``usageMetadata``,
``modelVersion`` and ``responseId``.  Decoding that shape straight into
structs skips building and walking a dict per chunk.  Every struct forbids
unknown fields, so a chunk with anything else (a finish reason, grounding,
function calls, prompt feedback, an error, a field Google adds later) fails
to match and goes through the general dict path, which keeps it all.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["TextChunk", "decode_text_chunk", "decode_usage"]


class TextPart(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A part with text, maybe a thought, maybe signed; nothing else."""

    text: str
    thought: bool = False
    thoughtSignature: str | None = None  # the wire's camelCase names, as msgspec matches them


class TextContent(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """Content of text parts (the role is not used by the parser)."""

    parts: list[TextPart]
    role: Any = None


class TextCandidate(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A candidate with content and an index, and no finish reason yet."""

    content: TextContent
    index: int


class TextChunk(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A response chunk of text-only candidates with the usual envelope."""

    candidates: list[TextCandidate]
    usageMetadata: msgspec.Raw  # decoded only when it differs from the last one
    modelVersion: str
    responseId: str


_DECODER = msgspec.json.Decoder(TextChunk)


def decode_text_chunk(data: str | bytes) -> TextChunk | None:
    """``data`` as a :class:`TextChunk`, or None when it has any other shape.

    None also for text that is not JSON: the general path decodes it again
    and raises the error that names what is wrong.
    """
    try:
        return _DECODER.decode(data)
    except msgspec.DecodeError:
        return None


def decode_usage(raw: msgspec.Raw) -> dict[str, Any] | None:
    """The ``usageMetadata`` object in ``raw``, or None when it is not an object."""
    value = msgspec.json.decode(raw)
    return value if isinstance(value, dict) else None
