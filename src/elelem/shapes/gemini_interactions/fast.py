"""Typed decoding of the hot Interactions frame: a piece of text or thought.

Nearly every frame of a streamed interaction is ``{"event_type":
"step.delta", "index": N, "delta": {"type": "text", "text": "…"}}``.
Decoding it straight into structs (:func:`hot_decoder`) skips building a
dict per frame.  Both structs forbid unknown fields, so a delta holding
anything else (``annotations``, a signature, arguments, a field the API adds
later) fails to decode and goes through the dict path, which keeps it all.
"""

from __future__ import annotations

from functools import lru_cache

import msgspec

__all__ = ["HotDelta", "HotStepDelta", "hot_decoder"]


class HotDelta(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A delta holding a type and a piece of text, nothing else."""

    type: str
    text: str


class HotStepDelta(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """One ``step.delta`` frame of text (the parser checks ``event_type``)."""

    event_type: str
    index: int
    delta: HotDelta


@lru_cache(maxsize=1)
def hot_decoder() -> msgspec.json.Decoder[HotStepDelta]:
    """The decoder of a :class:`HotStepDelta`.  A frame of any other shape
    raises :class:`msgspec.ValidationError` (text that is not JSON
    :class:`msgspec.DecodeError`), leaving it to the dict path."""
    return msgspec.json.Decoder(HotStepDelta)
