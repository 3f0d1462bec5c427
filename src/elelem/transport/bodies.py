"""Response bodies read as the bytes that are there: one piece per network read.

httpcore2 hands a body out one HTTP chunk at a time, and each chunk passes
through four layers of its own (two generators, a coroutine and a context
manager that maps h11's errors).  A provider writes one chunk per event, so
a stream that arrives faster than it is read — a burst, a busy event loop, a
gateway holding many streams — costs that per *event*, and elelem's own
per-read work (decoder, parser, assembler) on top: measured, that was the
difference between elelem and a bare httpx2 read loop with one write per
event (benchmarks/README.md, "Per-provider streams").

:func:`read_async` and :func:`read_blocking` read the same connection's h11
state the way httpcore2's ``_receive_response_body`` does, with one
difference: the chunks h11 already holds are handed out together, before the
next network read (or at the body's end) — all but the last joined into one
piece, then the last on its own.  Nothing waits for more bytes than before,
so a stream of one event per network read still gets one piece per event;
only chunks that arrived together are read together.  The last chunk stays
a read of its own so that bytes a server sends after the terminal event, in
a chunk of their own, are still a read the driver tells
(:attr:`~elelem.transport.stream_core.StreamCore.tail`) and never parses.
An async read also asks for as much as asyncio reads at once
(:data:`_ASYNC_READ`), not httpcore2's 64 KiB, so anyio hands over its
reads whole instead of copying them into slices.
Errors are httpcore2's (``RemoteProtocolError`` for h11's, the network's
own), raised through httpx2's mapping as before, and a body that stops
short closes its connection as httpcore2's own does.

A traced request (httpcore2's ``trace`` extension, or its debug log on) keeps
httpcore2's iterator, whose trace events it asks for.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any

import anyio
import h11
import httpcore2
import httpx2
from httpcore2._async.http11 import HTTP11ConnectionByteStream as AsyncChunks
from httpcore2._sync.http11 import HTTP11ConnectionByteStream as BlockingChunks

__all__ = ["BlockingPool", "blocking_transport", "read_async", "read_blocking"]

_READ = 64 * 1024  # httpcore2's own READ_NUM_BYTES
_ASYNC_READ = 256 * 1024
"""What an async read asks for: as much as asyncio's socket transport reads
at once (its ``max_size``).  anyio queues each read of the transport and
splits one longer than asked for by slicing it, both halves copied: asked
for 64 KiB, a 256 KiB read was copied 2.25 times over before h11 saw it
(150M instructions of an 8,192-input embed call).  A read never waits for
more than is queued, so a stream's pieces are what they were."""
_TRACED = logging.getLogger("httpcore2.http11")
_Data, _End, _NEED_DATA, _PAUSED = h11.Data, h11.EndOfMessage, h11.NEED_DATA, h11.PAUSED


def _readable(stream: AsyncChunks | BlockingChunks) -> bool:
    """Whether ``stream``'s connection can be read here: nobody traces its
    request (httpcore2's iterator tells the tracer), and httpcore2 still
    keeps the h11 state and network stream where this module reads them (a
    later httpcore2 that moved them is read by its own iterator instead)."""
    request = getattr(stream, "_request", None)
    connection = getattr(stream, "_connection", None)
    return (
        isinstance(request, httpcore2.Request)
        and "trace" not in request.extensions
        and not _TRACED.isEnabledFor(logging.DEBUG)
        and isinstance(getattr(connection, "_h11_state", None), h11.Connection)
        and hasattr(connection, "_network_stream")
    )


def read_async(stream: AsyncIterable[bytes]) -> AsyncIterator[bytes]:
    """The pieces of an httpcore2 HTTP/1.1 body ``stream`` (see the module
    docs); any other stream's own iterator."""
    if type(stream) is AsyncChunks and _readable(stream):
        return _async_pieces(stream)
    return stream.__aiter__()


def read_blocking(stream: Iterable[bytes]) -> Iterator[bytes]:
    """:func:`read_async` for a blocking body."""
    if type(stream) is BlockingChunks and _readable(stream):
        return _blocking_pieces(stream)
    return iter(stream)


def _reading(stream: Any) -> tuple[h11.Connection, Any, float | None]:
    """What reading ``stream``'s body takes: the connection's h11 state,
    its network stream and the request's read timeout."""
    connection = stream._connection
    timeouts: dict[str, Any] = stream._request.extensions.get("timeout", {})
    return connection._h11_state, connection._network_stream, timeouts.get("read")


def _held(next_event: Any) -> tuple[list[bytes], bool]:
    """The pieces of the chunks h11 holds now (sans-IO: no read), and
    whether the body ended; else h11 needs the next network read."""
    chunks: list[bytes] = []
    while True:
        try:
            event = next_event()
        except h11.RemoteProtocolError as exc:
            raise httpcore2.RemoteProtocolError(exc) from exc
        if type(event) is _Data:
            chunks.append(event.data)  # bytes, or h11's bytearray
            continue
        ended = type(event) is _End or event is _PAUSED
        if ended or event is _NEED_DATA:
            if len(chunks) < 2:
                return [bytes(chunk) for chunk in chunks], ended
            # The last chunk a read of its own: what a server sent after
            # its terminal event, in a chunk of its own, is then a read
            # the driver tells (StreamCore.tail) and never parses.
            return [b"".join(chunks[:-1]), bytes(chunks[-1])], ended


async def _async_pieces(stream: AsyncChunks) -> AsyncIterator[bytes]:
    state, network, timeout = _reading(stream)
    next_event = state.next_event
    try:
        while True:
            pieces, ended = _held(next_event)
            for piece in pieces:
                yield piece
            if ended:
                return
            state.receive_data(await network.read(_ASYNC_READ, timeout=timeout))
    except BaseException:
        # As httpcore2's own body: a read that failed (or was cancelled)
        # closes the response, and so the connection, before it propagates.
        with anyio.CancelScope(shield=True):
            await stream.aclose()
        raise


def _blocking_pieces(stream: BlockingChunks) -> Iterator[bytes]:
    state, network, timeout = _reading(stream)
    next_event = state.next_event
    try:
        while True:
            pieces, ended = _held(next_event)
            yield from pieces
            if ended:
                return
            state.receive_data(network.read(_READ, timeout=timeout))
    except BaseException:
        stream.close()
        raise


class _BlockingBody:
    """httpcore2's pooled body (``pooled``: it gives the connection back on
    close) read through :func:`read_blocking`."""

    __slots__ = ("_chunks", "_pooled")

    def __init__(self, pooled: Any, chunks: BlockingChunks) -> None:
        self._pooled, self._chunks = pooled, chunks

    def __iter__(self) -> Iterator[bytes]:
        return read_blocking(self._chunks)

    def close(self) -> None:
        self._pooled.close()


class BlockingPool(httpcore2.ConnectionPool):
    """httpcore2's blocking pool, its HTTP/1.1 bodies read by :func:`read_blocking`."""

    def handle_request(self, request: httpcore2.Request) -> httpcore2.Response:
        """Send ``request`` as httpcore2 does; its body reads whole pieces."""
        response = super().handle_request(request)
        chunks = getattr(response.stream, "_stream", None)
        if type(chunks) is BlockingChunks:
            response.stream = _BlockingBody(response.stream, chunks)
        return response


def blocking_transport(verify: ssl.SSLContext, limits: httpx2.Limits) -> httpx2.HTTPTransport:
    """httpx2's blocking transport, its pool a :class:`BlockingPool`."""
    transport = httpx2.HTTPTransport(verify=verify, limits=limits)
    transport._pool = BlockingPool(
        ssl_context=verify,
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
    )
    return transport
