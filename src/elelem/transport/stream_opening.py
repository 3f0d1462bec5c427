"""Opening one attempt of a response stream: the request encoded by its
shape, built, signed (an expiring credential refreshed first), the typed
error of a send that failed, and what the response's status and content
type decide (an error body, a whole JSON body, or a stream and its
decoder and parser).  It runs once an attempt; a base of
:class:`~elelem.transport.stream_core.StreamCore`, which holds the state.
"""

from __future__ import annotations

import functools
import io
import time
from collections.abc import Callable
from typing import Any

import httpx2

from elelem import codec
from elelem.errors import (
    MAX_ERROR_BODY,
    ConfigError,
    ConnectTimeoutError,
    DeadlineExceededError,
    IdleTimeoutError,
    IncompleteStreamError,
    StreamError,
    TransportError,
)
from elelem.transport.config import RequestSpan, Settings, Timeouts
from elelem.transport.endpoint import Endpoint
from elelem.transport.failures import host, name_provider, pool_timeout, request_id, stamp_error
from elelem.transport.framing import (
    DEFAULT_MAX_EVENT_BYTES,
    NDJSONDecoder,
    SSEDecoder,
    decoder_for,
)
from elelem.transport.stream_feed import StreamFeed
from elelem.transport.stream_states import FINISHED, OPEN
from elelem.vocabulary import Drop
from elelem.wire import EncodedRequest, ModelRequest, Shape

_JSON_TYPES = ("application/json", "application/problem+json")
_PRESIZE_MAX = 256 * 1024 * 1024
"""The largest announced ``content-length`` a whole body's buffer is sized
to before it arrives (past it, or past ``Limits.body``, the buffer grows)."""


_ACCEPT = {
    "sse": "text/event-stream",
    "ndjson": "application/x-ndjson",
    "eventstream": "application/vnd.amazon.eventstream",
    "raw": "*/*",
}


def _content(encoded: EncodedRequest) -> bytes | None:
    """The body bytes of ``encoded``: its own ``content``, else its JSON (none for a GET)."""
    if encoded.content is not None:
        return encoded.content
    if encoded.method == "GET":
        return None
    try:
        return codec.dumps(encoded.body)
    except UnicodeEncodeError as exc:
        # A lone surrogate (from a \ud800 escape, or bytes that were not
        # UTF-8) is no text any provider can be sent.
        unit = exc.object[exc.start] if isinstance(exc.object, str) else "?"
        raise ConfigError(
            f"the request holds a lone surrogate (U+{ord(unit[0]):04X}), which is not text"
        ) from None


class StreamOpening(StreamFeed):
    """The opening steps of :class:`~elelem.transport.stream_core.StreamCore`
    (a base of it, holding no state of its own: the attributes below are
    the core's, set in its ``__init__``)."""

    status: int | None
    headers: Any
    request_id: str | None
    dropped: tuple[Drop, ...]
    _blocking: bool
    _driver: Settings
    _shape: Shape
    _request: ModelRequest
    _stream: bool
    _timeouts: Timeouts
    _spans: tuple[RequestSpan, ...] | None
    _deadline: float | None
    _body: Any
    _past_deadline: Callable[[], bool]
    _deadline_error: Callable[[], DeadlineExceededError]
    _told: Callable[[BaseException], str]
    _operation: str

    @property
    def endpoint(self) -> Endpoint:
        """The provider endpoint the request goes to."""
        return self._endpoint

    @property
    def request(self) -> ModelRequest:
        """The neutral request this stream sends."""
        return self._request

    @property
    def operation(self) -> str:
        """What kind of request this is (:data:`~elelem.transport.config.CHAT`
        unless the caller said otherwise: an embedding, a batch call)."""
        return self._operation

    def _build(self, http: httpx2.Client | httpx2.AsyncClient, read: float) -> httpx2.Request:
        """Encode and build the request, signed when the endpoint signs (the
        hooks are told first, once per response; ``total`` starts counting).
        ``read`` is the read timeout the request carries."""
        shape, endpoint = self._shape, self._endpoint
        if self._spans is None:
            # once per response: a retry is part of the same span
            self._spans = tuple(hook.start(self) for hook in self._driver.hooks)
        encoded = shape.encode_request(
            self._request, provider=endpoint.provider, stream=self._stream
        )
        if endpoint.route is not None:
            encoded = endpoint.route(encoded)
        self.dropped = encoded.dropped
        total = self._timeouts.total
        if total > 0:
            self._deadline = time.monotonic() + total
        timeout = self._timeouts.as_httpx(read)
        try:
            request = http.build_request(
                encoded.method,
                endpoint.url(encoded.path),
                content=_content(encoded),
                headers={
                    "content-type": "application/json",
                    "accept": _ACCEPT[shape.framing] if self._stream else "application/json",
                    **endpoint.request_headers(encoded.headers),
                },
                timeout=timeout,
            )
        except httpx2.InvalidURL as exc:
            raise ConfigError(
                f"provider {endpoint.provider}: the request URL is invalid: {exc}"
            ) from None
        if endpoint.signer is not None:
            # Signed last, over the request exactly as it goes out: the
            # final path, every header httpx added (host) and the body bytes.
            path, _, query = request.url.raw_path.decode("ascii").partition("?")
            request.headers.update(
                endpoint.signer.sign(
                    request.method,
                    path,
                    query,
                    request.headers,
                    request.content,
                    self._driver.clock(),
                )
            )
        return request

    def _refresh_due(self) -> Callable[[], None] | None:
        """The blocking refresh of an expiring credential (a bearer token)
        that must run before this request is signed, or None.  The async
        shell runs it in a worker thread, the blocking one in place."""
        signer = self._endpoint.signer
        due = getattr(signer, "due", None)
        if due is None:
            return None
        now = self._driver.clock()
        if not due(now):
            return None
        # The fetch is part of the request: bounded by its total timeout.
        total = self._timeouts.total
        deadline = time.monotonic() + total if total > 0 else None
        return functools.partial(signer.refresh, now, deadline)  # type: ignore[union-attr]

    def _unsent(self, exc: httpx2.RequestError, request: httpx2.Request) -> StreamError:
        """The typed error for a send that failed before a response."""
        if isinstance(exc, httpx2.PoolTimeout):
            return pool_timeout(
                host(request), self._timeouts.pool, self._driver.pool_size(self._blocking)
            )
        if isinstance(exc, httpx2.ConnectTimeout):
            return ConnectTimeoutError(
                f"no connection to {host(request)} within {self._timeouts.connect:g}s"
            )
        if isinstance(exc, httpx2.ReadTimeout):
            if self._past_deadline():
                return self._deadline_error()
            return IdleTimeoutError(
                f"no response headers from {host(request)} within {self._timeouts.idle:g}s"
            )
        return TransportError(
            f"request to {host(request)} failed before a response: {self._told(exc)}"
        )

    def _headers_in(self, response: httpx2.Response) -> str:
        """The response's headers arrived: what the shell reads next —
        ``"error"`` (an error status: its body, for :meth:`_http_error`),
        ``"whole"`` (one JSON body, for :meth:`_whole`) or ``"stream"``."""
        self._response = response
        self.status = response.status_code
        self.headers = response.headers
        self.request_id = request_id(response.headers)
        self._compressed = "content-encoding" in response.headers
        if not 200 <= response.status_code < 300:
            return "error"
        content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        if not self._stream or content_type in _JSON_TYPES:
            # A whole JSON body (asked for, or sent by a server that ignored
            # ``stream``) goes through the shape's response mapping.
            return "whole"
        parser = self._parser = self._shape.new_parser(self._endpoint.provider, self._request)
        self._messages = getattr(parser, "messages", None)
        self._decoder = decoder_for(
            self._shape.framing, content_type, self._driver.limits.frame or DEFAULT_MAX_EVENT_BYTES
        )
        self._lines = isinstance(self._decoder, NDJSONDecoder)
        # A parser that takes runs of events gets their bytes whole.
        self._runs = isinstance(self._decoder, SSEDecoder) and getattr(parser, "takes_runs", False)
        return "stream"

    def _error_piece(self, body: bytearray, piece: bytes) -> bool:
        """Add ``piece`` of an error status's body to ``body``: True once it
        holds more than :data:`~elelem.errors.MAX_ERROR_BODY` (the shell
        reads no further)."""
        body += piece
        return len(body) > MAX_ERROR_BODY

    def _body_buffer(self, response: httpx2.Response) -> io.BytesIO:
        """The buffer a whole body's pieces are written to: sized to its
        ``content-length`` up front when that is known (not compressed, and
        within ``Limits.body``), so it is never grown piece by piece.

        A buffer grown by writes is reallocated a few dozen times on the way
        to a large body, and each reallocation may copy what it holds: for a
        17 MB embeddings answer that cost more than the one join it replaced.
        ``BytesIO(bytes(n))`` holds the zeroed buffer alone, so writes fill it
        in place; :meth:`_whole_body` trims what did not arrive."""
        announced = response.headers.get("content-length", "")
        if self._compressed or not announced.isdigit():
            return io.BytesIO()
        size = int(announced)
        if size > min(self._meter.quiet, _PRESIZE_MAX):
            return io.BytesIO()
        return io.BytesIO(bytes(size))

    def _whole_body(self, pieces: io.BytesIO) -> bytes:
        """The whole body written to ``pieces`` (each counted as it came),
        its size recorded in :attr:`bytes_received`.

        The pieces go into one growing buffer as they arrive, and the body
        is that buffer itself (``BytesIO.getvalue`` of a buffer nobody else
        holds is the buffer, trimmed in place): the body is held once, where
        a list of pieces joined at the end held it twice (issue #41)."""
        pieces.truncate()  # a buffer sized up front ends where the writes did
        body = pieces.getvalue()
        pieces.close()  # the buffer is the body's alone now
        self.bytes_received = len(body)
        return body

    def _http_error(self, body: bytes | bytearray) -> StreamError:
        """The typed error of an error status, its body (what of it arrived)
        kept; the shell closes the connection and raises it."""
        response = self._response
        assert response is not None
        error = self._shape.classify_error(
            response.status_code,
            response.headers,
            self._endpoint.redact_bytes(bytes(body[:MAX_ERROR_BODY])),
        )
        name_provider(error, self._endpoint.provider)
        return stamp_error(error, response.status_code, response.headers)

    def _whole(self, body: bytes) -> None:
        """Map a whole JSON body (the connection already closed)."""
        self._move(FINISHED)
        self._parse(self._shape.parse_response, body, self._endpoint.provider, self._request)
        if not self.assembler.finished and self._deferred is None:
            self._deferred = IncompleteStreamError(
                "the response body mapped to no finish", status=self.status
            )

    def _opened(self, body: Any) -> bool:
        """The body's reads begin (``body``: the shell's iterator of pieces);
        True when the parser's open already finished the response."""
        response, parser = self._response, self._parser
        assert response is not None and parser is not None
        self._body = body
        self._move(OPEN)
        if self._parse(parser.open, response.status_code, response.headers):
            self._move(FINISHED)
            return True
        return False


__all__ = ["StreamOpening"]
