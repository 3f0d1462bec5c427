"""The blocking shell over :class:`~elelem.transport.stream_core.StreamCore`.

:class:`SyncResponseStream` reads its response with ``httpx2.Client`` in the
calling thread: no event loop, no thread hop per chunk.  Every step is the
async stream's sequence of core calls with blocking I/O in place of awaits,
so both give the same chunks, commits, errors and retries for the same bytes.

Two things a blocking read cannot do the async way, done here instead:

- ``Timeouts.total``: a read cannot be cancelled, so the request's read
  timeout is ``min(idle, total)`` and the deadline is checked at every read;
- the body's end after the terminal event (read so the connection is
  reused) is waited for at most :data:`~elelem.transport.stream_core.TAIL_GRACE`:
  when the socket has nothing ready, a helper thread reads it, and a body
  that does not end in time has its socket shut down, which ends the read.
"""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import httpx2

from elelem.stream import AssembledResponse, Chunk
from elelem.transport.config import Settings
from elelem.transport.faces import SyncFace
from elelem.transport.stream_core import NEW, OPEN, TAIL_GRACE, StreamCore, StreamState
from elelem.vocabulary import Part

T = TypeVar("T")


class SyncResponseStream(StreamCore, SyncFace[Chunk, AssembledResponse]):
    """One streamed provider response, read in the calling thread.

    Iterate it for chunks, :meth:`text` or :meth:`reasoning` for the text as
    it streams, :meth:`objects` for the answer's JSON value as it arrives, or
    :meth:`with_commits` for ``(chunk, committed)`` pairs; :meth:`final`
    drains it and returns the assembled response, :meth:`partial` what an
    interrupted stream keeps.  Use it as a context manager (or call
    :meth:`close`) so the connection closes.  Ctrl-C while it reads closes
    the connection at once and leaves :meth:`partial` usable.  Retries are
    as for the async :class:`~elelem.transport.ResponseStream`.
    """

    _driver: Settings
    _blocking = True
    # As the async stream: the read that finished the response is handed
    # out before the body's end is waited for (up to TAIL_GRACE).
    _held = False

    # -- public --------------------------------------------------------------

    @property
    def stream(self) -> SyncResponseStream:
        """The stream itself (it was once a face over an async stream; its
        attributes, ``status``, ``request_id`` and the rest, are its own)."""
        return self

    def __next__(self) -> Chunk:
        pending = self._pending
        if pending:  # as ResponseStream.__anext__: a chunk already handled
            chunk, self.last_committed = pending.popleft()
            return chunk
        return self._next()[0]

    def output(self) -> Any:
        """Drain the stream and return the answer as a validated
        :attr:`output_type` instance."""
        return self.parse(self.final())

    def step(self) -> tuple[Chunk, tuple[Part, ...]] | None:
        """The next ``(chunk, committed)`` pair, or None at the end of the stream."""
        try:
            return self._next()
        except StopIteration:
            return None

    def final(self) -> AssembledResponse:
        """Drain the stream and return the assembled response."""
        self._drain()
        while (state := self._draining_step()) is not None:
            if state is OPEN:
                self._guard(self._pump, True)  # the whole body in one loop
            else:
                self._guard(self._io(state))
        try:
            while True:
                self._next()
        except StopIteration:
            pass  # drained: the assembler holds everything
        return self.assembler.result()

    def start(self) -> None:
        """Send the request and wait for the response headers (idempotent)."""
        if self._state is NEW:
            self._guard(self._open)

    def close(self) -> None:
        """Close the connection; iteration then ends (or raises if unfinished)."""
        if self._held:
            self._held = False
            self._release()  # a finished response's connection is reused
        self._closing()
        self._close_response()
        self._closed()

    # -- the I/O ---------------------------------------------------------------

    def _next(self) -> tuple[Chunk, tuple[Part, ...]]:
        if self._held and not self._pending:
            self._held = False
            self._guard(self._release)
        while isinstance(ready := self._ready(), str):
            self._guard(self._io(ready))
        if ready is None:
            raise StopIteration
        return ready

    def _io(self, state: StreamState) -> Callable[..., None]:
        if state is NEW:
            return self._open
        if state is OPEN:
            return self._pump
        return self._pause

    def _guard(self, step: Callable[..., None], *args: Any) -> None:
        # Any failure, Ctrl-C included, closes the connection at once.
        try:
            step(*args)
        except BaseException as exc:
            self._failed(exc)
            self._close_response()
            if self._retried(exc):
                return
            self._settle(exc)
            raise

    def _pause(self) -> None:
        time.sleep(self._wait)
        self._move(NEW)

    def _open(self) -> None:
        refresh = self._refresh_due()
        if refresh is not None:
            refresh()
        http = self._driver.sync_http()
        idle, total = self._timeouts.idle, self._timeouts.total
        # A read cannot be cancelled at the deadline: none may outlast it.
        read = min(idle, total) if idle > 0 and total > 0 else idle or total
        request = self._build(http, read)
        try:
            response = http.send(request, stream=True)
        except httpx2.RequestError as exc:
            raise self._unsent(exc, request) from exc
        opened = self._headers_in(response)
        if self._past_deadline():
            raise self._deadline_error()
        if opened == "error":
            self._raise_http_error(response)
        if opened == "whole":
            body = self._read_all(response)
            self._close_response()
            self._whole(body)
            return
        stream = response.stream
        if not self._compressed and isinstance(stream, httpx2.SyncByteStream):
            # Nothing to decode: read the transport's stream itself, which
            # spares two generators (decoding, re-chunking) per read.
            pieces = iter(stream)
        else:
            pieces = response.iter_bytes()
        if self._opened(pieces):
            self._close_response()

    def _pump(self, drain: bool = False) -> None:
        """Read and handle one piece of the body, or with ``drain`` every piece
        until the stream ends (for final())."""
        body: Iterator[bytes] = self._body
        received, deadline = self._received, self._deadline
        try:
            for data in body:
                if deadline is not None and time.monotonic() >= deadline:
                    raise self._deadline_error()
                if received(data):
                    if drain or not self._pending:
                        self._release()
                    else:
                        self._held = True  # released once its chunks are taken
                    return
                if not drain:
                    return
        except httpx2.RequestError as exc:
            raise self._broken(exc, f"after {self.bytes_received} bytes") from exc
        self._ended()
        self._close_response()

    def _raise_http_error(self, response: httpx2.Response) -> None:
        body = bytearray()
        read_error: Exception | None = None
        try:
            for piece in response.iter_bytes():
                if self._error_piece(body, piece):
                    break
        except httpx2.RequestError as exc:
            read_error = exc  # classified below with what did arrive; kept as the cause
        error = self._http_error(body)
        self._close_response()
        raise error from read_error

    def _read_all(self, response: httpx2.Response) -> bytes:
        # Piece by piece, so a body past Limits.body (or a compression bomb)
        # is stopped before it is held whole.
        pieces = self._body_buffer(response)
        try:
            for piece in response.iter_bytes():
                if self._past_deadline():
                    raise self._deadline_error()
                self._counted(piece)  # refused before it is held
                pieces.write(piece)
        except httpx2.RequestError as exc:
            raise self._broken(exc, "while reading the response body") from exc
        return self._whole_body(pieces)

    def _release(self) -> None:
        """Close the response once its terminal event arrived, its body's end
        read first within :data:`TAIL_GRACE` (see
        :meth:`ResponseStream._release <elelem.transport.ResponseStream>`)."""
        if self._releasing():
            response = self._response
            assert response is not None
            end = _body_end(self._body, _socket_of(response))
            if end is None:
                self._late()
            else:
                self._tail_of(*end)
        self._close_response()

    def _close_response(self) -> None:
        response, self._response = self._response, None
        self._body = None
        if response is not None:
            response.close()


def _socket_of(response: httpx2.Response) -> socket.socket | None:
    stream = response.extensions.get("network_stream")
    info = getattr(stream, "get_extra_info", None)
    sock = info("socket") if info is not None else None
    return sock if isinstance(sock, socket.socket) else None


def _body_end(
    body: Iterator[bytes], sock: socket.socket | None
) -> tuple[bytes | None, httpx2.RequestError | None] | None:
    """Read the body's end: ``(extra, broke)`` as
    :meth:`StreamCore._tail_of` takes them, or None when it did not come
    within :data:`TAIL_GRACE`."""
    if sock is not None and select.select([sock], [], [], 0)[0]:
        return _read_end(body)  # bytes are there: the read does not wait
    # Nothing on the socket: the end is either held by the HTTP parser
    # already or not come yet, and only a read tells which.
    box: list[Any] = []

    def read() -> None:
        try:
            box.append(_read_end(body))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the reading thread below
            box.append(exc)

    reader = threading.Thread(target=read, name="elelem-body-end", daemon=True)
    reader.start()
    reader.join(TAIL_GRACE)
    if reader.is_alive():
        if sock is None:
            return None  # the read ends at the idle timeout; its connection is closed
        sock.shutdown(socket.SHUT_RDWR)  # ends the waiting read
        reader.join(TAIL_GRACE)  # bounded still: the connection is closed next either way
        if box and isinstance(box[0], BaseException):
            raise box[0]  # not the read's own failure (that is told as late): a fault
        return None
    outcome = box[0]
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome  # type: ignore[no-any-return]


def _read_end(body: Iterator[bytes]) -> tuple[bytes | None, httpx2.RequestError | None]:
    try:
        extra = next(body, None)
    except httpx2.RequestError as exc:
        return None, exc
    return extra, None


__all__ = ["SyncResponseStream"]
