"""What every body decoder hands over and is bounded by: the
:class:`SSEEvent` frame (the SSE, NDJSON and AWS event-stream decoders all
give ``(event, data)`` frames of it) and the limit on one frame."""

from __future__ import annotations

from typing import NamedTuple

from elelem.errors import LimitExceededError

DEFAULT_MAX_EVENT_BYTES = 64 * 1024 * 1024
"""Largest event (or unterminated line) buffered before the stream is rejected
(the driver passes its ``Limits.frame``)."""
FRAME_LIMIT = "Limits.frame"

MAX_NAMES = 256
"""The most distinct event names a decoder keeps interned (a hostile stream
cannot grow the table without bound)."""


def too_large(what: str, limit: int) -> LimitExceededError:
    """The error for ``what`` (an event, a line, a message) past ``limit`` bytes."""
    return LimitExceededError(f"{what} exceeds {limit} bytes", limit=FRAME_LIMIT, value=limit)


# ``tuple.__new__`` skips the named tuple's Python-level ``__new__``: one call
# less per event on the hot path, the same object.
new_event = tuple.__new__


class SSEEvent(NamedTuple):
    """One dispatched server-sent event.

    ``event`` is ``""`` when the frame named none; ``id`` is the last event id
    in force when it was dispatched; ``retry`` the latest reconnection time
    the stream announced, in milliseconds.
    """

    event: str
    data: str
    id: str = ""
    retry: int | None = None


__all__ = [
    "DEFAULT_MAX_EVENT_BYTES",
    "FRAME_LIMIT",
    "MAX_NAMES",
    "SSEEvent",
    "new_event",
    "too_large",
]
