"""Typed decoding of the hot Anthropic event, ``content_block_delta`` of text,
thinking or tool-input JSON.

Nearly every event of a streamed answer is one of these deltas.  Decoding it
straight into structs skips building a dict per event.  Any other event, an
extra field in the delta or a value of the wrong type fails the typed decode
and takes the dict path, which keeps unknown deltas and fields and raises
every error; a top-level field beside the declared ones is learned by
:func:`hot_decoder`'s :class:`~elelem.shapes.skeleton.HotFields` once the
dict path has kept it, so the rest of the stream stays typed.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from elelem.shapes.skeleton import HotFields

DELTA_EVENT = "content_block_delta"
"""The hot event's type."""


# The hot frame, decoded straight to typed values.  Any other event, an extra
# field in the delta or a value of the wrong type fails the typed decode and
# takes the dict path, which keeps unknown deltas and raises every error.
class HotText(msgspec.Struct, tag="text_delta", forbid_unknown_fields=True):
    """A ``text_delta``: more text for the open block."""

    text: str


class HotThinking(msgspec.Struct, tag="thinking_delta", forbid_unknown_fields=True):
    """A ``thinking_delta``: more reasoning for the open block."""

    thinking: str


class HotJson(msgspec.Struct, tag="input_json_delta", forbid_unknown_fields=True):
    """An ``input_json_delta``: more of a tool call's arguments."""

    partial_json: str


class HotDeltaFrame(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A ``content_block_delta`` frame holding one of the hot deltas."""

    # A plain field, not a tag: msgspec accepts a lone tagged struct without
    # its tag, and a frame with no ``type`` is the dict path's to judge.  A
    # top-level field beside these fails the decode until the dict path has
    # kept it once (see HotFields).
    type: Literal["content_block_delta"]
    index: int
    delta: HotText | HotThinking | HotJson


def hot_decoder() -> HotFields:
    """A parser's typed decoder of :class:`HotDeltaFrame` (one per parser: it
    learns the fields nobody modelled that its stream carries)."""
    return HotFields(DELTA_EVENT, HotDeltaFrame)


__all__ = ["DELTA_EVENT", "HotDeltaFrame", "HotJson", "HotText", "HotThinking", "hot_decoder"]
