"""The states of a response stream and every move between them: the whole
machine on one screen.  :class:`~elelem.transport.stream_core.StreamCore`
moves through them (its ``_move`` refuses a move this table does not hold);
the shells' I/O steps are the states of :data:`SHELL_STEPS`.
"""

from __future__ import annotations

from enum import StrEnum


class StreamState(StrEnum):
    """Where a response stream is; every change goes through :data:`TRANSITIONS`."""

    NEW = "new"
    """The request is to be sent (the shell's next step: open)."""
    OPEN = "open"
    """The body is being read (the shell's next step: read)."""
    WAIT = "wait"
    """A retry waits out its delay (the shell's next step: pause), then NEW."""
    FINISHED = "finished"
    """The terminal event arrived, or a fault was deferred until the frames
    before it are handed out."""
    EOF = "eof"
    """The body ended without the terminal event."""
    CLOSED = "closed"
    """The caller closed the stream before it ended."""
    FAILED = "failed"
    """An error ended the stream (kept, raised again on every step)."""


NEW, OPEN, WAIT, FINISHED, EOF, CLOSED, FAILED = StreamState

TRANSITIONS: dict[StreamState, frozenset[StreamState]] = {
    NEW: frozenset({OPEN, FINISHED, CLOSED, FAILED, WAIT}),  # FINISHED: a whole body
    OPEN: frozenset({FINISHED, EOF, CLOSED, FAILED, WAIT}),
    WAIT: frozenset({NEW, CLOSED, FAILED}),
    # OPEN again: a last NDJSON line cut short is read at the body's end as
    # an SSE event cut short is, and so ends in EOF like it.
    FINISHED: frozenset({OPEN, FAILED, WAIT}),
    EOF: frozenset({FAILED, WAIT}),
    CLOSED: frozenset({FAILED}),
    FAILED: frozenset({FAILED, WAIT}),
}
"""Every state a stream may move to from each state: the whole machine on
one screen (a retry goes from the state its error left back through WAIT)."""

SHELL_STEPS = (NEW, OPEN, WAIT)
"""The states whose next step is the shell's I/O."""


__all__ = [
    "CLOSED",
    "EOF",
    "FAILED",
    "FINISHED",
    "NEW",
    "OPEN",
    "SHELL_STEPS",
    "TRANSITIONS",
    "WAIT",
    "StreamState",
]
