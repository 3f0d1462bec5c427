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
:data:`~elelem.shapes.bedrock_converse.parser.PADDING`) until the dict path
has kept it once: then a named event's decoder takes it raw (see
:class:`HotDecoder`).
"""

from __future__ import annotations

from typing import NamedTuple

import msgspec

from elelem.shapes.skeleton import HotFields

__all__ = [
    "HOT_EVENT",
    "HotBody",
    "HotDecoder",
    "HotDelta",
    "HotReasoning",
    "HotUnion",
    "hot_decoder",
]


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


HOT_EVENT = "contentBlockDelta"
"""The hot event's type."""


class HotDecoder(NamedTuple):
    """Decoders of a hot event: its body, when the frame names the event (a
    live event-stream message; :class:`~elelem.shapes.skeleton.HotFields`
    learns the body fields nobody modelled, so a stream whose every event
    carries one stays typed), or the one-key union of a recording."""

    body: HotFields
    union: msgspec.json.Decoder[HotUnion]


_UNION = msgspec.json.Decoder(HotUnion)


def hot_decoder() -> HotDecoder:
    """A parser's decoders of a hot event (one per parser: the body's learns
    what its stream carries).  An event of any other shape raises
    :class:`msgspec.ValidationError` (text that is not JSON
    :class:`msgspec.DecodeError`), leaving it to the dict path."""
    return HotDecoder(HotFields(HOT_EVENT, HotBody), _UNION)
