"""Loopback HTTP servers for tests: replay a recorded response, or inject faults.

The server itself (:class:`~elelem.recordings.loopback.LoopbackServer`, its
script actions and body builders) lives in :mod:`elelem.recordings.loopback`
and is re-exported here; this module adds the fault helpers the
stream-contract suite needs: reset after N bytes, a stall, truncation, a
malformed frame, an error event mid-stream, error statuses with
``retry-after``, a slow drip, and headers that never arrive.
"""

from __future__ import annotations

from collections.abc import Mapping

from elelem.recordings.loopback import (
    Action,
    Await,
    Drip,
    LoopbackServer,
    Pause,
    RecordedRequest,
    Reply,
    Reset,
    Send,
    anthropic_text_body,
    frame_ends,
    replay,
    sse_body,
)


def reset_after(body: bytes, n: int, *, content_type: str = "text/event-stream") -> Reply:
    """Send the first ``n`` bytes of ``body``, then reset the connection."""
    return Reply(200, {"content-type": content_type}, (Send(body[:n]), Reset()))


def stall(
    body: bytes, at: int, seconds: float, *, content_type: str = "text/event-stream"
) -> Reply:
    """Send ``body[:at]``, go silent for ``seconds``, then send the rest."""
    return Reply(
        200, {"content-type": content_type}, (Send(body[:at]), Pause(seconds), Send(body[at:]))
    )


def truncate(body: bytes, at: int, *, content_type: str = "text/event-stream") -> Reply:
    """Send ``body[:at]`` and close cleanly, as a stream cut short."""
    return Reply(200, {"content-type": content_type}, (Send(body[:at]),))


def insert(body: bytes, at: int, frame: bytes, *, content_type: str = "text/event-stream") -> Reply:
    """Send ``body`` with ``frame`` inserted at byte ``at`` (a malformed frame,
    a provider error event, …)."""
    return Reply(200, {"content-type": content_type}, (Send(body[:at] + frame + body[at:]),))


def slow_drip(
    body: bytes, *, interval: float = 0.0, content_type: str = "text/event-stream"
) -> Reply:
    """Send ``body`` one byte per write."""
    return Reply(200, {"content-type": content_type}, (Drip(body, interval),))


def no_headers(seconds: float) -> Reply:
    """Accept the request and send nothing for ``seconds``, then close."""
    return Reply(send_headers=False, script=(Pause(seconds),))


def status(
    code: int,
    body: bytes = b"",
    *,
    headers: Mapping[str, str] | None = None,
    content_type: str = "application/json",
) -> Reply:
    """An error (or any) status with a body, e.g. ``status(429, b'{...}',
    headers={"retry-after": "7"})``."""
    return Reply(code, {"content-type": content_type, **(headers or {})}, (Send(body),))


__all__ = [
    "Action",
    "Await",
    "Drip",
    "LoopbackServer",
    "Pause",
    "RecordedRequest",
    "Reply",
    "Reset",
    "Send",
    "anthropic_text_body",
    "frame_ends",
    "insert",
    "no_headers",
    "replay",
    "reset_after",
    "slow_drip",
    "sse_body",
    "stall",
    "status",
    "truncate",
]
