"""What a body's framing hands a shape's parser, besides ``(event, data)`` frames.

The transport's decoders produce frames and the shapes' parsers consume
them; neither layer imports the other, so the one frame type they share
that is not a plain tuple is defined here, below both.
"""

from __future__ import annotations

from typing import NamedTuple


class DataRun(NamedTuple):
    """Consecutive events of one ``data: …`` line each and no other field
    (nearly every read of a Chat Completions or Gemini stream), as the bytes
    of their data, in order: each is valid UTF-8 and holds no line end.

    :meth:`~elelem.transport.framing.SSEDecoder.feed_runs` hands them over so
    that a parser can decode the bytes straight away, with no string and no
    event object per event.  :meth:`frames` gives the ``(event, data)``
    frames they stand for; ``id`` and ``retry`` are the event-stream's in
    force, as for :class:`~elelem.transport.framing.SSEEvent`.
    """

    data: list[bytes]
    id: str = ""
    retry: int | None = None

    def frames(self) -> list[tuple[str, str]]:
        """The run's ``(event, data)`` frames: unnamed, the data decoded."""
        return [("", value.decode()) for value in self.data]


__all__ = ["DataRun"]
