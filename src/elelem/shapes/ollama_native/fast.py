"""Typed decoding of the hot Ollama NDJSON line: a piece of text or thinking.

Nearly every line of a streamed ``/api/chat`` answer is
``{"model", "created_at", "message": {"role", "content", "thinking"}, "done": false}``.
Decoding it straight into structs (:func:`hot_decoder`) skips building a
dict per line.  The message struct forbids unknown fields, so a line whose
message holds anything else (``tool_calls``, ``images``, a field Ollama adds
later) fails to decode and goes through the dict path, which keeps it all;
the line's other top-level fields are passed over, as the dict path passes
them over on every line but the first and the ``done`` one (which the parser
leaves to the dict path).
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


class HotLine(msgspec.Struct, gc=False):
    """One streamed line; its fields beside ``message`` and ``done`` are passed over."""

    message: HotMessage
    done: bool = False


@lru_cache(maxsize=1)
def hot_decoder() -> msgspec.json.Decoder[HotLine]:
    """The decoder of a :class:`HotLine`.  A line of any other shape raises
    :class:`msgspec.ValidationError` (text that is not JSON
    :class:`msgspec.DecodeError`), leaving it to the dict path."""
    return msgspec.json.Decoder(HotLine)
