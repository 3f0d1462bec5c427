"""Typed decoding of the hot Ollama NDJSON line: a piece of text or thinking.

Nearly every line of a streamed ``/api/chat`` answer is
``{"model", "created_at", "message": {"role", "content", "thinking"}, "done": false}``.
Decoding it straight into structs (:func:`hot_decoder`) skips building a
dict per line.  The message struct forbids unknown fields, so a line whose
message holds anything else (``tool_calls``, ``images``, a field Ollama adds
later) fails to decode and goes through the dict path, which keeps it all;
the line's other top-level fields are passed over, as the dict path passes
them over on every line but the first and the ``done`` one (which the parser
leaves to the dict path); a field nobody listed is kept by the parser's
:class:`~elelem.shapes.skeleton.HotFields`, as the dict path keeps it.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import msgspec

__all__ = ["HotLine", "HotMessage", "hot_decoder"]


class HotMessage(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A message piece holding at most text and thinking."""

    role: Any = None
    content: str | None = None
    thinking: str | None = None


class HotLine(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """One streamed line.  ``model`` and ``created_at`` are passed over (raw,
    never decoded), as the dict path passes them over on every line but the
    first and the ``done`` one; any other top-level field fails the decode
    until the parser has kept it once and its
    :class:`~elelem.shapes.skeleton.HotFields` holds it."""

    message: HotMessage
    done: bool = False
    # Raw with a None default, not ``Raw | None``: msgspec reads that union
    # as "null only".
    model: msgspec.Raw = None  # type: ignore[assignment]
    created_at: msgspec.Raw = None  # type: ignore[assignment]


@lru_cache(maxsize=1)
def hot_decoder() -> msgspec.json.Decoder[HotLine]:
    """The decoder of a :class:`HotLine`.  A line of any other shape raises
    :class:`msgspec.ValidationError` (text that is not JSON
    :class:`msgspec.DecodeError`), leaving it to the dict path."""
    return msgspec.json.Decoder(HotLine)
