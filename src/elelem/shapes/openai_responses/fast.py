"""Typed decoding of the hot Responses event, ``response.output_text.delta``.

Nearly every event of a streamed answer is a text delta.  Decoding it
straight into a struct skips building a dict per event; the struct forbids
fields it does not declare, so a delta carrying one goes down the dict path,
which keeps it, and :func:`hot_decoder`'s
:class:`~elelem.shapes.skeleton.HotFields` then learns the field, so the rest
of the stream stays typed.
"""

from __future__ import annotations

import msgspec

from elelem.shapes.skeleton import HotFields

TEXT_DELTA = "response.output_text.delta"
"""The hot event's type."""


class HotTextDelta(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """What the parser reads of the stream's hot event, ``response.output_text.delta``.

    ``sequence_number``, ``logprobs`` and ``obfuscation`` are passed over (raw,
    never decoded), as the dict path passes them over; anything not shaped
    like this (a wrong type, a missing delta, a field nobody modelled) goes
    down the dict path, which names the problem or keeps the field.
    """

    delta: str
    type: str = ""
    item_id: str | None = None
    output_index: int | None = None
    content_index: int | None = None
    # Raw with a None default, not ``Raw | None``: msgspec reads that union
    # as "null only".
    sequence_number: msgspec.Raw = None  # type: ignore[assignment]
    logprobs: msgspec.Raw = None  # type: ignore[assignment]
    obfuscation: msgspec.Raw = None  # type: ignore[assignment]


def hot_decoder() -> HotFields:
    """A parser's typed decoder of :class:`HotTextDelta` (one per parser: it
    learns the fields nobody modelled that its stream carries)."""
    return HotFields(TEXT_DELTA, HotTextDelta)


__all__ = ["TEXT_DELTA", "HotTextDelta", "hot_decoder"]
