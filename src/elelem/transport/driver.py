"""The one streaming driver (docs/architecture.md §5): HTTP in, chunks and committed parts out.

The driver knows no shape.  It asks the shape to encode the request, POSTs it
with httpx2, hands the response to the shape's sans-IO parser frame by frame
and feeds every chunk to the one :class:`~elelem.stream.Assembler`.  Its
contract:

- a connect timeout, and a stream-idle timeout (no byte for that long; 0
  disables it) that also bounds the wait for the response headers;
- a transport failure before ``finish`` raises a retryable
  :class:`~elelem.errors.TransportError` (or one of its kinds); a body that
  ends without ``finish`` raises :class:`~elelem.errors.IncompleteStreamError`;
- ``finish`` is last: once the parser produced it nothing more is parsed; the
  body's end is read within :data:`~elelem.transport.stream_core.TAIL_GRACE`
  so the connection goes back to the pool for reuse (bytes after the
  terminal event, or an end that does not come in time, close it instead:
  :attr:`ResponseStream.tail` says why), and the close that follows
  ``finish`` is never an error;
- an HTTP error status goes through the shape's ``classify_error`` with the
  body (at most :data:`~elelem.errors.MAX_ERROR_BODY` bytes) kept;
- it retries only an attempt that failed before any chunk arrived, and only
  as its :class:`~elelem.transport.retry.RetryPolicy` allows (none by
  default; the client's is two retries), each retry a
  :class:`~elelem.stream.Retry` notice on the stream and in
  :attr:`ResponseStream.retries`; it never swallows an exception, and never
  lets the API key into an error message;
- cancelling or closing the stream closes the connection at once; what
  arrived stays available through :meth:`ResponseStream.partial`.

Everything but the I/O is :class:`~elelem.transport.stream_core.StreamCore`'s;
this module is the async shell over it (``httpx2.AsyncClient``), and
:mod:`elelem.transport.blocking` the blocking one (``httpx2.Client``).
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import anyio
import httpx2

from elelem.errors import StreamError
from elelem.stream import AssembledResponse, Chunk
from elelem.transport.blocking import SyncResponseStream
from elelem.transport.bodies import blocking_transport
from elelem.transport.config import CHAT, RequestHook, RequestSpan, Timeouts
from elelem.transport.endpoint import Endpoint
from elelem.transport.faces import AsyncFace
from elelem.transport.failures import parse_retry_after, stamp_error
from elelem.transport.limits import DEFAULT_LIMITS, Limits
from elelem.transport.pool import PooledTransport
from elelem.transport.retry import RetryPolicy
from elelem.transport.stream_core import NEW, OPEN, TAIL_GRACE, StreamCore, StreamState
from elelem.transport.tls import verifying_context
from elelem.vocabulary import Part
from elelem.wire import ModelRequest, Shape

T = TypeVar("T")
S = TypeVar("S", bound=StreamCore)


class ResponseStream(StreamCore, AsyncFace[Chunk, AssembledResponse]):
    """One streamed provider response: an async iterator of chunks.

    Iterate it (``async for chunk in stream``) for chunks, or iterate
    :meth:`with_commits` for ``(chunk, committed)`` pairs, where ``committed``
    is the tuple of blocks and hosted transitions that chunk committed (most
    chunks commit nothing; a ``block-end`` commits its block).  The latest
    such tuple is also :attr:`last_committed`.  :meth:`final` drains the
    stream and returns the assembled response; :meth:`partial` returns what
    an interrupted stream keeps.  Use ``async with`` (or :meth:`aclose`) so
    the connection closes even when iteration stops early.

    The request is sent on the first iteration (or on ``async with``).

    :meth:`text` and :meth:`reasoning` iterate only the text (or reasoning)
    deltas.  With a ``retry`` policy, an attempt that fails before any chunk
    arrived is sent again after a wait; each retry is first a
    :class:`~elelem.stream.Retry` chunk, and all of them are
    :attr:`retries` (and the assembled response's ``retries``).
    """

    _driver: Driver
    # The read that finished the response is handed out before its
    # connection goes back to the pool (a release yields to the loop, and
    # under a burst of streams one turn of the loop can take long): the
    # release waits until the caller asks past that read's chunks.
    _held = False

    # -- public --------------------------------------------------------------

    async def __anext__(self) -> Chunk:
        pending = self._pending
        if pending:
            # A chunk of the read already handled: _ready's own first step,
            # without the coroutine of _next (a gateway iterates every chunk).
            chunk, self.last_committed = pending.popleft()
            return chunk
        chunk, _ = await self._next()
        return chunk

    async def output(self) -> Any:
        """Drain the stream and return the answer as a validated
        :attr:`output_type` instance; :class:`~elelem.outputs.OutputError`
        (with the raw text) when it does not match."""
        return self.parse(await self.final())

    async def step(self) -> tuple[Chunk, tuple[Part, ...]] | None:
        """The next ``(chunk, committed)`` pair, or None at the end of the stream."""
        try:
            return await self._next()
        except StopAsyncIteration:
            return None

    async def final(self) -> AssembledResponse:
        """Drain the stream and return the assembled response."""
        self._drain()
        # One await per network read, not per chunk; the terminal states
        # (errors, end of body, close) are then settled by _next as always.
        while (state := self._draining_step()) is not None:
            await self._guard(self._io(state, drain=True))
        try:
            while True:
                await self._next()
        except StopAsyncIteration:
            pass  # drained: the assembler holds everything
        return self.assembler.result()

    async def start(self) -> None:
        """Send the request and wait for the response headers (idempotent)."""
        if self._state is NEW:
            await self._guard(self._open())

    async def aclose(self) -> None:
        """Close the connection; iteration then ends (or raises if unfinished)."""
        if self._held:
            self._held = False
            await self._release()  # a finished response's connection is reused
        self._closing()
        await self._close_response()
        self._closed()

    # -- the I/O ---------------------------------------------------------------

    async def _next(self) -> tuple[Chunk, tuple[Part, ...]]:
        if self._held and not self._pending:
            self._held = False
            await self._guard(self._release())
        while isinstance(ready := self._ready(), str):
            await self._guard(self._io(ready))
        if ready is None:
            raise StopAsyncIteration
        return ready

    def _io(self, state: StreamState, drain: bool = False) -> Awaitable[None]:
        if state is NEW:
            return self._open()
        if state is OPEN:
            return self._pump(drain)
        return self._pause()

    async def _guard(self, step: Awaitable[None]) -> None:
        # Any failure, cancellation included, closes the connection at once.
        try:
            await step
        except BaseException as exc:
            self._failed(exc)
            await self._close_response()
            if self._retried(exc):
                return
            self._settle(exc)
            raise

    async def _pause(self) -> None:
        await anyio.sleep(self._wait)
        self._move(NEW)

    async def _open(self) -> None:
        refresh = self._refresh_due()
        if refresh is not None:
            # A token fetch blocks on the network: never on the event loop.
            await anyio.to_thread.run_sync(refresh)
        http = self._driver.http()
        request = self._build(http, self._timeouts.idle)
        try:
            response = await self._by_deadline(http.send(request, stream=True))
        except httpx2.RequestError as exc:
            raise self._unsent(exc, request) from exc
        opened = self._headers_in(response)
        if opened == "error":
            await self._raise_http_error(response)
        if opened == "whole":
            body = await self._by_deadline(self._read_all(response))
            await self._close_response()
            self._whole(body)
            return
        stream = response.stream
        if not self._compressed and isinstance(stream, httpx2.AsyncByteStream):
            # Nothing to decode: read the transport's stream itself, which
            # spares two async generators (decoding, re-chunking) per read.
            pieces = stream.__aiter__()
        else:
            pieces = response.aiter_bytes()
        if self._opened(pieces):
            await self._close_response()

    async def _pump(self, drain: bool = False) -> None:
        """Read and handle one piece of the body, or with ``drain`` every piece
        until the stream ends (one coroutine for the whole body, for final())."""
        read, received = self._body.__anext__, self._received
        deadline = self._deadline
        idle = self._timeouts.idle
        # Only a read that could outlast the deadline pays for a cancel scope.
        slack = idle if idle > 0 else float("inf")
        while True:
            try:
                if deadline is not None and deadline - time.monotonic() < slack:
                    data = await self._by_deadline(read())
                else:
                    data = await read()
            except StopAsyncIteration:
                self._ended()
                await self._close_response()
                return
            except httpx2.RequestError as exc:
                raise self._broken(exc, f"after {self.bytes_received} bytes") from exc
            if received(data):
                if drain or not self._pending:
                    await self._release()
                else:
                    self._held = True  # released once its chunks are taken
                return
            if not drain:
                return

    async def _raise_http_error(self, response: httpx2.Response) -> None:
        body = bytearray()
        read_error: Exception | None = None
        try:
            async for piece in response.aiter_bytes():
                if self._error_piece(body, piece):
                    break
        except httpx2.RequestError as exc:
            read_error = exc  # classified below with what did arrive; kept as the cause
        error = self._http_error(body)
        await self._close_response()
        raise error from read_error

    async def _read_all(self, response: httpx2.Response) -> bytes:
        # Piece by piece, so a body past Limits.body (or a compression bomb)
        # is stopped before it is held whole.
        pieces = self._body_buffer(response)
        try:
            async for piece in response.aiter_bytes():
                self._counted(piece)  # refused before it is held
                pieces.write(piece)
        except httpx2.RequestError as exc:
            raise self._broken(exc, "while reading the response body") from exc
        return self._whole_body(pieces)

    async def _by_deadline(self, step: Awaitable[T]) -> T:
        """Await ``step`` within what is left of ``Timeouts.total``."""
        deadline = self._deadline
        if deadline is None:
            return await step
        remaining = deadline - time.monotonic()
        if remaining > 0:
            with anyio.move_on_after(remaining):
                return await step
        elif hasattr(step, "close"):
            step.close()  # never started: no "never awaited" warning
        raise self._deadline_error()

    async def _release(self) -> None:
        """Close the response once its terminal event arrived.

        The body's own end (the chunked terminator, as a rule already
        buffered or on its way) is read first, within :data:`TAIL_GRACE`, so
        the connection goes back to the pool: closed mid-body it is dropped,
        and every request pays a new TCP (and TLS) handshake.  Anything else
        — bytes after the terminal event, a slow or broken end — only costs
        the connection's reuse (it is closed, as it would have been) and is
        told in :attr:`tail`; the response itself is whole.
        """
        if self._releasing():
            self._late()
            with anyio.move_on_after(TAIL_GRACE):
                try:
                    extra = await self._body.__anext__()
                except StopAsyncIteration:
                    self._tail_of(None, None)
                except httpx2.RequestError as exc:
                    self._tail_of(None, exc)
                else:
                    self._tail_of(extra, None)
        await self._close_response()

    async def _close_response(self) -> None:
        response, self._response = self._response, None
        self._body = None
        if response is not None:
            # Shielded: closing must finish even inside a cancelled scope.
            with anyio.CancelScope(shield=True):
                await response.aclose()


def pool_limits(limits: Limits) -> httpx2.Limits:
    """The pool's share of ``limits`` as httpx2 takes it (0: no limit)."""
    return httpx2.Limits(
        max_connections=limits.connections or None,
        max_keepalive_connections=limits.keepalive_connections or None,
        keepalive_expiry=limits.keepalive_expiry or None,
    )


def _utc_now() -> datetime:
    return datetime.now(UTC)


class Driver:
    """Sends requests for any shape and streams the responses, async
    (:meth:`stream`, :meth:`complete`) or blocking (:meth:`sync_stream`,
    :meth:`sync_complete`): the same core under both.

    ``http`` is an ``httpx2.AsyncClient`` (or, for the blocking calls, an
    ``httpx2.Client``) to use; the caller closes it.  By default the driver
    makes its own on first use, and :meth:`aclose` (:meth:`close`) closes
    it.  ``clock`` gives the time a signed request (an endpoint with a
    ``signer``) is stamped with at send; the system's UTC time by default.
    ``limits`` bound what one response may cost
    (:class:`~elelem.transport.limits.Limits`).  ``retry`` is the policy for
    failures before any chunk arrived (see :class:`ResponseStream`); None,
    the default, retries nothing.  ``hooks`` are told of every response
    (:class:`RequestHook`: tracing).
    """

    def __init__(
        self,
        http: httpx2.AsyncClient | httpx2.Client | None = None,
        *,
        timeouts: Timeouts | None = None,
        clock: Callable[[], datetime] | None = None,
        limits: Limits | None = None,
        retry: RetryPolicy | None = None,
        hooks: Sequence[RequestHook] = (),
    ) -> None:
        self.hooks: list[RequestHook] = list(hooks)
        """The hooks told of every response (see :class:`RequestHook`)."""
        self.retry = retry
        """The retry policy of every stream (None: no retries)."""
        self._http = http if isinstance(http, httpx2.AsyncClient) else None
        self._owns_http = self._http is None
        self._sync_http = http if isinstance(http, httpx2.Client) else None
        self._owns_sync_http = self._sync_http is None
        self.timeouts = timeouts or Timeouts()
        self.limits = limits or DEFAULT_LIMITS
        self.clock: Callable[[], datetime] = clock if clock is not None else _utc_now

    def http(self) -> httpx2.AsyncClient:
        """The async HTTP client (made on first use, inside the running event loop)."""
        if self._http is None:
            self._http = httpx2.AsyncClient(**self._http_options(PooledTransport))
        return self._http

    def sync_http(self) -> httpx2.Client:
        """The blocking HTTP client (made on first use)."""
        if self._sync_http is None:
            self._sync_http = httpx2.Client(**self._http_options(blocking_transport))
        return self._sync_http

    def _http_options(self, transport: Callable[[ssl.SSLContext, httpx2.Limits], Any]) -> Any:
        """What the driver's own HTTP clients are made with, async or
        blocking: its timeouts and pool limits, the verifying TLS context,
        and ``transport`` over them."""
        limits, verify = pool_limits(self.limits), verifying_context()
        return {
            "timeout": self.timeouts.as_httpx(),
            "verify": verify,
            "limits": limits,
            "transport": transport(verify, limits),
        }

    def pool_size(self, blocking: bool) -> int | None:
        """``Limits.connections`` of the pool the async (or ``blocking``)
        streams use; None when that HTTP client was passed in."""
        owned = self._owns_sync_http if blocking else self._owns_http
        return self.limits.connections if owned else None

    def stream(
        self,
        endpoint: Endpoint,
        shape: Shape,
        request: ModelRequest,
        *,
        timeouts: Timeouts | None = None,
        streamed: bool = True,
        operation: str = CHAT,
    ) -> ResponseStream:
        """A streamed response to ``request`` (sent on first iteration).
        ``streamed=False`` sends it non-streamed: the whole JSON body arrives
        at once and is mapped by the shape into the same chunks.
        ``operation`` names the kind of request to the hooks (as for
        :meth:`exchange`: ``speak`` for streamed speech)."""
        return self._made(
            ResponseStream,
            endpoint,
            shape,
            request,
            timeouts,
            streamed=streamed,
            operation=operation,
        )

    def sync_stream(
        self,
        endpoint: Endpoint,
        shape: Shape,
        request: ModelRequest,
        *,
        timeouts: Timeouts | None = None,
        streamed: bool = True,
        operation: str = CHAT,
    ) -> SyncResponseStream:
        """The blocking :meth:`stream`: read in the calling thread."""
        return self._made(
            SyncResponseStream,
            endpoint,
            shape,
            request,
            timeouts,
            streamed=streamed,
            operation=operation,
        )

    async def complete(
        self,
        endpoint: Endpoint,
        shape: Shape,
        request: ModelRequest,
        *,
        timeouts: Timeouts | None = None,
    ) -> AssembledResponse:
        """A non-streamed response, mapped by the shape into the same chunks and assembled."""
        return (await self.exchange(endpoint, shape, request, timeouts=timeouts)).result()

    def sync_complete(
        self,
        endpoint: Endpoint,
        shape: Shape,
        request: ModelRequest,
        *,
        timeouts: Timeouts | None = None,
    ) -> AssembledResponse:
        """The blocking :meth:`complete`."""
        return self.sync_exchange(endpoint, shape, request, timeouts=timeouts).result()

    async def exchange(
        self,
        endpoint: Endpoint,
        shape: Shape,
        request: ModelRequest,
        *,
        timeouts: Timeouts | None = None,
        operation: str = CHAT,
    ) -> ResponseStream:
        """:meth:`complete`, returning the drained stream itself: its
        :meth:`~ResponseStream.result` beside the ``status``, ``headers`` and
        ``request_id`` a one-shot JSON call (an embedding, a batch) also reads.
        ``operation`` names the kind of request to the hooks (the GenAI
        operation name a trace shows: ``embeddings``, ``batch``, …)."""
        async with self._made(
            ResponseStream, endpoint, shape, request, timeouts, streamed=False, operation=operation
        ) as stream:
            await stream.final()
        return stream

    def sync_exchange(
        self,
        endpoint: Endpoint,
        shape: Shape,
        request: ModelRequest,
        *,
        timeouts: Timeouts | None = None,
        operation: str = CHAT,
    ) -> SyncResponseStream:
        """The blocking :meth:`exchange`."""
        with self._made(
            SyncResponseStream,
            endpoint,
            shape,
            request,
            timeouts,
            streamed=False,
            operation=operation,
        ) as stream:
            stream.final()
        return stream

    def _made(
        self,
        kind: type[S],
        endpoint: Endpoint,
        shape: Shape,
        request: ModelRequest,
        timeouts: Timeouts | None,
        *,
        streamed: bool,
        operation: str = CHAT,
    ) -> S:
        return kind(
            self,
            endpoint,
            shape,
            request,
            timeouts=timeouts or self.timeouts,
            stream=streamed,
            retry=self.retry,
            operation=operation,
        )

    async def aclose(self) -> None:
        """Close the HTTP clients the driver made (the blocking one too)."""
        self.close()
        if self._http is not None and self._owns_http:
            http, self._http = self._http, None
            await http.aclose()

    def close(self) -> None:
        """Close the blocking HTTP client if the driver made it."""
        if self._sync_http is not None and self._owns_sync_http:
            http, self._sync_http = self._sync_http, None
            http.close()


__all__ = [
    "Driver",
    "RequestHook",
    "RequestSpan",
    "ResponseStream",
    "StreamError",
    "SyncResponseStream",
    "Timeouts",
    "parse_retry_after",
    "stamp_error",
]
