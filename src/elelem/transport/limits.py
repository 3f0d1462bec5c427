"""Resource limits on what a response may cost: memory and CPU stay bounded
whatever a server sends (issue #13: a 1 MB gzip body grew a client to 2 GB).

The defaults are far above anything a real provider sends (the largest
recorded response in the corpus is well under 1 MiB; a long answer streams a
few MiB) and each can be changed per driver.  Passing one raises
:class:`~elelem.errors.LimitExceededError` naming it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from elelem.errors import LimitExceededError

MiB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """What one response may cost, and how many connections the driver's
    pool holds; 0 disables a limit.

    ``body`` bounds the decoded bytes of a whole response (a JSON body read
    at once, or every byte of a stream); ``frame`` bounds one event, line or
    event-stream message (and an unterminated line); ``decompression_ratio``
    bounds decoded bytes per byte received once more than
    ``ratio_floor`` bytes were decoded (a compression bomb trips it within
    its first megabytes; real JSON streams compress about 10:1).
    The pool's limits (``connections``, ``keepalive_connections``,
    ``keepalive_expiry``) apply to the HTTP clients the driver makes; a
    client passed in keeps its own.
    """

    body: int = 256 * MiB
    frame: int = 16 * MiB
    decompression_ratio: float = 200.0
    ratio_floor: int = 4 * MiB
    connections: int = 1000
    """Connections the driver's own pool may hold open at once, every
    origin together (a gateway streams hundreds at a time; the official
    SDKs allow 1,000 too).  A request that finds them all busy waits up to
    ``Timeouts.pool`` for one, then fails with
    :class:`~elelem.errors.PoolTimeoutError`."""
    keepalive_connections: int = 1000
    """Idle connections kept for reuse: as many as may be open, so the
    connections of a burst of streams serve the next burst instead of
    paying a new TCP (and TLS) handshake each."""
    keepalive_expiry: float = 30.0
    """Seconds an idle connection is kept: under the 60 s idle timeout of
    the common load balancers in front of the providers, so a kept
    connection is seldom one the server already dropped (one it did drop is
    seen closed when taken from the pool, and a new one is made)."""


DEFAULT_LIMITS = Limits()


class BodyMeter:
    """Counts a body as it is read and raises once it passes a limit."""

    __slots__ = ("_body", "_floor", "_ratio", "decoded", "quiet")

    def __init__(self, limits: Limits) -> None:
        self._body = limits.body
        self._ratio = limits.decompression_ratio
        self._floor = limits.ratio_floor
        self.decoded = 0
        self.quiet = limits.body or sys.maxsize
        """The size an uncompressed body may reach with no call to :meth:`add`:
        a reader that counts the bytes itself calls it only past this size."""

    def add(self, size: int, raw_received: int | None) -> None:
        """``size`` more decoded bytes; ``raw_received`` the bytes that came
        over the wire so far (None when the body is not compressed)."""
        decoded = self.decoded = self.decoded + size
        if self._body and decoded > self._body:
            raise LimitExceededError(
                f"the response body passed {self._body} bytes",
                limit="Limits.body",
                value=self._body,
            )
        if (
            raw_received is not None
            and self._ratio
            and decoded > self._floor
            and decoded > self._ratio * max(raw_received, 1)
        ):
            raise LimitExceededError(
                f"the response body decompressed to {decoded} bytes from {raw_received}",
                limit="Limits.decompression_ratio",
                value=self._ratio,
            )


__all__ = ["DEFAULT_LIMITS", "BodyMeter", "Limits"]
