"""What a driver is set up with: its timeouts, and the hooks told of every response."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

import httpx2

from elelem.stream import AssembledResponse
from elelem.transport.endpoint import Endpoint
from elelem.transport.limits import Limits
from elelem.wire import ModelRequest

CHAT = "chat"
"""The operation of a model response: what a request is unless its caller
names another.  The operation names are OpenTelemetry's GenAI operation
names where the conventions have one (``chat``, ``embeddings``) and the
client method's name where they have none."""
EMBEDDINGS = "embeddings"
"""An embedding request (:meth:`elelem.Client.embed`)."""
BATCH = "batch"
"""A request submitting a batch (:meth:`elelem.Client.batch`: an upload, the batch)."""
BATCH_STATUS = "batch_status"
"""A request reading a batch's state (:meth:`elelem.Client.batch_status`)."""
BATCH_RESULTS = "batch_results"
"""A request reading a batch's results (:meth:`elelem.Client.batch_results`)."""
SPEAK = "speak"
"""A text-to-speech request (:meth:`elelem.Client.speak`)."""
TRANSCRIBE = "transcribe"
"""A transcription request (:meth:`elelem.Client.transcribe`)."""


class StartedRequest(Protocol):
    """What a :class:`RequestHook` is shown of a response whose request is
    being sent (a :class:`~elelem.transport.ResponseStream` is one)."""

    @property
    def endpoint(self) -> Endpoint:
        """The provider endpoint the request goes to."""
        ...

    @property
    def request(self) -> ModelRequest:
        """The neutral request."""
        ...

    @property
    def operation(self) -> str:
        """The kind of request (:data:`CHAT`, ``embeddings``, …)."""
        ...


class RequestSpan(Protocol):
    """What a :class:`RequestHook` keeps for one response."""

    def end(self, result: AssembledResponse, error: BaseException | None) -> None:
        """The response ended: ``result`` is what was assembled (whole, or the
        partial an interruption keeps), ``error`` what ended it, if anything."""
        ...


class RequestHook(Protocol):
    """Told of every response a :class:`~elelem.transport.Driver` streams
    (tracing, metrics): :meth:`start` when the request is first sent, then
    the span's ``end`` exactly once (retries belong to the same response).
    A hook must not raise: its exception would propagate from the stream."""

    def start(self, stream: StartedRequest) -> RequestSpan:
        """The request of ``stream`` is being sent."""
        ...


@dataclass(frozen=True)
class Timeouts:
    """Transport timeouts in seconds; 0 disables one.

    ``pool`` bounds the wait for a free connection when every connection
    the pool may hold (``Limits.connections``) is busy: a queue, not a
    failing network, so it is distinct from ``connect`` and long by
    default (the official SDKs wait 600 s too); past it the request fails
    with :class:`~elelem.errors.PoolTimeoutError`.
    ``connect`` bounds making the connection; ``idle`` bounds every wait for
    the next bytes, the response headers included; ``write`` bounds sending
    the request body; ``total`` bounds the whole request, from sending it to
    the terminal event, however steadily the server sends (keep-alive
    comments reset ``idle``, never ``total``).  A blocking stream cannot
    interrupt a read: it checks ``total`` at every read and waits at most
    ``min(idle, total)`` for one.
    """

    connect: float = 10.0
    idle: float = 300.0
    write: float = 60.0
    total: float = 3600.0
    pool: float = 600.0

    def as_httpx(self, read: float | None = None) -> httpx2.Timeout:
        """The same limits as an ``httpx2.Timeout``; ``read``, when given, in
        place of ``idle`` as the read limit."""

        def value(v: float) -> float | None:
            return v if v > 0 else None

        return httpx2.Timeout(
            connect=value(self.connect),
            read=value(self.idle if read is None else read),
            write=value(self.write),
            pool=value(self.pool),
        )


class Settings(Protocol):
    """What a stream reads of the driver that made it: its hooks, limits,
    clock and pool, and the HTTP client of its shell."""

    hooks: list[RequestHook]
    limits: Limits
    clock: Callable[[], datetime]

    def http(self) -> httpx2.AsyncClient:
        """The async HTTP client."""
        ...

    def sync_http(self) -> httpx2.Client:
        """The blocking HTTP client."""
        ...

    def pool_size(self, blocking: bool) -> int | None:
        """``Limits.connections`` of the pool the async (or ``blocking``)
        streams use; None when that HTTP client is the caller's (its pool is
        its own)."""
        ...


__all__ = [
    "BATCH",
    "BATCH_RESULTS",
    "BATCH_STATUS",
    "CHAT",
    "EMBEDDINGS",
    "SPEAK",
    "TRANSCRIBE",
    "RequestHook",
    "RequestSpan",
    "Settings",
    "StartedRequest",
    "Timeouts",
]
