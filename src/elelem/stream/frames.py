"""What a body's framing hands a shape's parser, besides ``(event, data)`` frames.

The transport's decoders produce frames and the shapes' parsers consume
them; neither layer imports the other, so the one frame type they share
that is not a plain tuple is defined here, below both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple


class DataRun(NamedTuple):
    """Consecutive events of one ``data: …`` line each, or each an ``event:
    …`` line and one ``data: …`` line, and no other field (nearly every read
    of a stream), as the bytes of their data and names, in order: each is
    valid UTF-8 and holds no line end.  (A parser's own loop over frames may
    make one of strings.)

    :meth:`~elelem.transport.sse.SSEDecoder.feed_runs` hands them over so
    that a parser can decode the bytes straight away, with no string and no
    event object per event.  :meth:`frames` gives the ``(event, data)``
    frames they stand for; ``id`` and ``retry`` are the event-stream's in
    force, as for :class:`~elelem.transport.framing.SSEEvent`.
    """

    data: Sequence[str | bytes]
    id: str = ""
    retry: int | None = None
    events: Sequence[str | bytes] | None = None
    """Each event's name (``event: …``), where the events are named."""

    def frame(self, index: int) -> tuple[str, str]:
        """Event ``index`` of the run as an ``(event, data)`` frame."""
        events, data = self.events, self.data[index]
        name = "" if events is None else events[index]
        return (
            name if isinstance(name, str) else name.decode(),
            data if isinstance(data, str) else data.decode(),
        )

    def frames(self) -> list[tuple[str, str]]:
        """The run's ``(event, data)`` frames."""
        return [self.frame(index) for index in range(len(self.data))]


__all__ = ["DataRun"]
