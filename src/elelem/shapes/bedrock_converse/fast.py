"""Typed decoding of the hot Converse event: a ``contentBlockDelta`` of text or reasoning text.

Nearly every event of a streamed answer is
``contentBlockDelta {"contentBlockIndex": n, "delta": {"text": "…"}}`` (or
``{"reasoningContent": {"text": "…"}}``), named by the event-stream message
or, as recordings keep it, the one key of ``{"contentBlockDelta": {...}}``.
Decoding it straight into structs (:func:`hot_decoder`) skips building a
dict per event.  The delta structs forbid unknown fields and take no
``null``, so a delta holding anything else (a tool input, a citation, a
signature, a field AWS adds later) fails to decode and goes through the
dict path, which keeps it all.  So does a body with a field beside the
index, the delta and the padding ``p`` (the dict path keeps it, see
:data:`~elelem.shapes.bedrock_converse.parser.PADDING`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import msgspec

__all__ = ["HotBody", "HotDecoder", "HotDelta", "HotReasoning", "HotUnion", "hot_decoder"]


class HotReasoning(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A ``reasoningContent`` piece holding only text."""

    text: str


class HotDelta(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A delta holding text or reasoning text (the parser takes exactly one)."""

    text: str | msgspec.UnsetType = msgspec.UNSET
    reasoningContent: HotReasoning | msgspec.UnsetType = msgspec.UNSET


class HotBody(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A ``contentBlockDelta`` event body: the index, the delta and AWS's
    padding ``p`` (random letters, passed over); a body with any other field
    is the dict path's, which keeps the field."""

    contentBlockIndex: int
    delta: HotDelta
    p: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)  # never decoded


class HotUnion(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """The one-key event union of a recording: ``{"contentBlockDelta": {...}}``."""

    contentBlockDelta: HotBody


class HotDecoder(NamedTuple):
    """Decoders of a hot event: its body (the frame named the event) or the union."""

    body: msgspec.json.Decoder[HotBody]
    union: msgspec.json.Decoder[HotUnion]


@lru_cache(maxsize=1)
def hot_decoder() -> HotDecoder:
    """The decoders of a hot event.  An event of any other shape raises
    :class:`msgspec.ValidationError` (text that is not JSON
    :class:`msgspec.DecodeError`), leaving it to the dict path."""
    return HotDecoder(msgspec.json.Decoder(HotBody), msgspec.json.Decoder(HotUnion))
