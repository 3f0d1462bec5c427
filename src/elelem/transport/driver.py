"""The one streaming driver (DESIGN.md §6): HTTP in, chunks and committed parts out.

The driver knows no shape.  It asks the shape to encode the request, POSTs it
with httpx2, hands the response to the shape's sans-IO parser frame by frame
and feeds every chunk to the one :class:`~elelem.stream.Assembler`.  Its
contract:

- a connect timeout, and a stream-idle timeout (no byte for that long; 0
  disables it) that also bounds the wait for the response headers;
- a transport failure before ``finish`` raises a retryable
  :class:`~elelem.errors.TransportError` (or one of its kinds); a body that
  ends without ``finish`` raises :class:`~elelem.errors.IncompleteStreamError`;
- ``finish`` is last: once the parser produced it the driver stops reading and
  closes the connection, so the close that follows ``finish`` is never an error;
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
"""

from __future__ import annotations

import random
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Protocol, TypeVar

import anyio
import httpx2
import msgspec

from elelem import codec, errors
from elelem.errors import (
    MAX_ERROR_BODY,
    ConfigError,
    ConnectTimeoutError,
    DeadlineExceededError,
    IdleTimeoutError,
    IncompleteStreamError,
    MalformedStreamError,
    StreamError,
    TransportError,
)
from elelem.outputs import PartialJSON, parse_output
from elelem.shapes.base import EncodedRequest, FrameParser, ModelRequest, Shape
from elelem.stream import AssembledResponse, Assembler, Chunk, Finish, Retry, TextDelta
from elelem.stream.chunks import ReasoningDelta
from elelem.transport.endpoint import Endpoint
from elelem.transport.framing import (
    DEFAULT_MAX_EVENT_BYTES,
    EventStreamDecoder,
    NDJSONDecoder,
    SSEDecoder,
    decoder_for,
)
from elelem.transport.limits import DEFAULT_LIMITS, BodyMeter, Limits
from elelem.transport.retry import RetryPolicy, retries_before_content, retry_reason
from elelem.vocabulary import Drop, Part

T = TypeVar("T")
_REQUEST_ID_HEADERS = (
    "request-id",
    "x-request-id",
    "x-amzn-requestid",
    "x-goog-request-id",
    "cf-ray",
)
_JSON_TYPES = ("application/json", "application/problem+json")
_ACCEPT = {
    "sse": "text/event-stream",
    "ndjson": "application/x-ndjson",
    "eventstream": "application/vnd.amazon.eventstream",
}


class RequestSpan(Protocol):
    """What a :class:`RequestHook` keeps for one response."""

    def end(self, result: AssembledResponse, error: BaseException | None) -> None:
        """The response ended: ``result`` is what was assembled (whole, or the
        partial an interruption keeps), ``error`` what ended it, if anything."""
        ...


class RequestHook(Protocol):
    """Told of every response a :class:`Driver` streams (tracing, metrics):
    :meth:`start` when the request is first sent, then the span's ``end``
    exactly once (retries belong to the same response).  A hook must not
    raise: its exception would propagate from the stream."""

    def start(self, stream: ResponseStream) -> RequestSpan:
        """The request of ``stream`` is being sent."""
        ...


@dataclass(frozen=True)
class Timeouts:
    """Transport timeouts in seconds; 0 disables one.

    ``connect`` bounds making the connection; ``idle`` bounds every wait for
    the next bytes, the response headers included; ``write`` bounds sending
    the request body; ``total`` bounds the whole request, from sending it to
    the terminal event, however steadily the server sends (keep-alive
    comments reset ``idle``, never ``total``).
    """

    connect: float = 10.0
    idle: float = 300.0
    write: float = 60.0
    total: float = 3600.0

    def as_httpx(self) -> httpx2.Timeout:
        """The same limits as an ``httpx2.Timeout``."""

        def value(v: float) -> float | None:
            return v if v > 0 else None

        return httpx2.Timeout(
            connect=value(self.connect),
            read=value(self.idle),
            write=value(self.write),
            pool=value(self.connect),
        )


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an
    HTTP date, read against ``now``, default the local clock), or None when
    absent or unreadable.  The one parser lives in :mod:`elelem.errors`."""
    return errors.parse_retry_after(headers, time.time() if now is None else now)


class ResponseStream:
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

    def __init__(
        self,
        driver: Driver,
        endpoint: Endpoint,
        shape: Shape,
        request: ModelRequest,
        *,
        timeouts: Timeouts,
        stream: bool = True,
        retry: RetryPolicy | None = None,
    ) -> None:
        self._driver = driver
        self._spans: tuple[RequestSpan, ...] | None = None
        self.output_type: Any = None
        """The type the answer is asked to be (``Client.stream(output_type=)``)."""
        self._retry_policy = retry
        self.retries: list[Retry] = []
        """The retries made so far, in order (see :class:`~elelem.stream.Retry`)."""
        self._wait = 0.0
        self._waited = 0.0
        self._fed = False
        self._endpoint = endpoint
        self._shape = shape
        self._request = request
        self._timeouts = timeouts
        self._stream = stream
        self.assembler = Assembler(endpoint.provider)
        self.last_committed: tuple[Part, ...] = ()
        self.status: int | None = None
        self.headers: Mapping[str, str] = {}
        self.request_id: str | None = None
        self.dropped: tuple[Drop, ...] = ()
        """What the shape's encoder left out of the request."""
        self.bytes_received = 0
        self.tail: str | None = None
        """Why the connection was not reused after a whole response (bytes
        after the terminal event, an end that broke or did not come within
        :data:`TAIL_GRACE`); None when the body ended cleanly."""
        self._meter = BodyMeter(driver.limits)
        self._deadline: float | None = None
        self._pending: deque[tuple[Chunk, tuple[Part, ...]]] = deque()
        self._deferred: BaseException | None = None
        self._error: BaseException | None = None
        self._response: httpx2.Response | None = None
        self._body: AsyncIterator[bytes] | None = None
        self._parser: FrameParser | None = None
        self._decoder: SSEDecoder | NDJSONDecoder | EventStreamDecoder | None = None
        # new -> open -> eof | finished | failed | closed; a retry goes back
        # through wait -> new
        self._state = "new"
        # Set by final(): nobody observes single chunks, so they go straight
        # to the assembler instead of through the queue of pairs.
        self._draining = False

    # -- public --------------------------------------------------------------

    def __aiter__(self) -> ResponseStream:
        return self

    async def __anext__(self) -> Chunk:
        chunk, _ = await self._next()
        return chunk

    async def with_commits(self) -> AsyncIterator[tuple[Chunk, tuple[Part, ...]]]:
        """Iterate ``(chunk, committed)`` pairs: each chunk with what it committed."""
        while (pair := await self.step()) is not None:
            yield pair

    async def text(self) -> AsyncIterator[str]:
        """Iterate the text as it streams: each (non-empty) text delta's text, in order."""
        while (pair := await self.step()) is not None:
            if type(pair[0]) is TextDelta and pair[0].text:
                yield pair[0].text

    async def objects(self) -> AsyncIterator[Any]:
        """The answer's JSON value as it arrives: after each text delta that
        changed it, the object (or array) so far, read tolerantly by
        :class:`~elelem.outputs.PartialJSON` (open strings hold their text so
        far).  It is the same object each time, updated in place."""
        reader = PartialJSON()
        while (pair := await self.step()) is not None:
            if type(pair[0]) is TextDelta and reader.feed(pair[0].text):
                yield reader.value

    async def output(self) -> Any:
        """Drain the stream and return the answer as a validated
        :attr:`output_type` instance; :class:`~elelem.outputs.OutputError`
        (with the raw text) when it does not match."""
        return self.parse(await self.final())

    def parse(self, result: AssembledResponse) -> Any:
        """``result``'s text validated as :attr:`output_type`."""
        if self.output_type is None:
            raise ValueError("the stream was not asked for an output_type")
        return parse_output(self.output_type, result.text)

    async def reasoning(self) -> AsyncIterator[str]:
        """Iterate the reasoning as it streams: each (non-empty) reasoning delta's text."""
        while (pair := await self.step()) is not None:
            if type(pair[0]) is ReasoningDelta and pair[0].text:
                yield pair[0].text

    async def step(self) -> tuple[Chunk, tuple[Part, ...]] | None:
        """The next ``(chunk, committed)`` pair, or None at the end of the stream."""
        try:
            return await self._next()
        except StopAsyncIteration:
            return None

    async def final(self) -> AssembledResponse:
        """Drain the stream and return the assembled response."""
        self._draining = True
        pending = self._pending
        if pending:  # queued before final(): already fed, only the last commit is kept
            self.last_committed = pending[-1][1]
            pending.clear()
        # One await per network read, not per chunk; the terminal states
        # (errors, end of body, close) are then settled by _next as always.
        while self._deferred is None and self._state in ("new", "open", "wait"):
            if self._state == "new":
                await self._guard(self._open())
            elif self._state == "wait":
                await self._guard(self._pause())
            else:
                await self._guard(self._pump(drain=True))
        try:
            while True:
                await self._next()
        except StopAsyncIteration:
            pass  # drained: the assembler holds everything
        return self.assembler.result()

    def partial(self) -> AssembledResponse:
        """What arrived so far, open text and reasoning kept as incomplete blocks."""
        return self.assembler.partial()

    def result(self) -> AssembledResponse:
        """The assembled response of a stream read to its end (no I/O)."""
        return self.assembler.result()

    def open_parts(self) -> tuple[Part, ...]:
        """The text and reasoning blocks in progress (see
        :meth:`Assembler.open_parts <elelem.stream.Assembler.open_parts>`)."""
        return self.assembler.open_parts()

    @property
    def finished(self) -> bool:
        """True once ``finish`` arrived."""
        return self.assembler.finished

    async def start(self) -> None:
        """Send the request and wait for the response headers (idempotent)."""
        if self._state == "new":
            await self._guard(self._open())

    async def aclose(self) -> None:
        """Close the connection; iteration then ends (or raises if unfinished)."""
        if self._state in ("new", "open", "wait"):
            self._state = "closed"
        await self._close_response()
        if self._spans:
            closed = IncompleteStreamError("the stream was closed before the response finished")
            self._settle(None if self.assembler.finished else closed)

    @property
    def endpoint(self) -> Endpoint:
        """The provider endpoint the request goes to."""
        return self._endpoint

    @property
    def request(self) -> ModelRequest:
        """The neutral request this stream sends."""
        return self._request

    async def __aenter__(self) -> ResponseStream:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return (
            f"ResponseStream(provider={self._endpoint.provider!r}, "
            f"shape={self._shape.name!r}, state={self._state!r}, status={self.status!r})"
        )

    # -- the loop --------------------------------------------------------------

    async def _next(self) -> tuple[Chunk, tuple[Part, ...]]:
        while not self._pending:
            if self._deferred is not None:
                if self._retried(self._deferred):
                    continue
                self._fail(self._deferred)
            state = self._state
            if state == "new":
                await self._guard(self._open())
            elif state == "open":
                await self._guard(self._pump())
            elif state == "wait":
                await self._guard(self._pause())
            elif state == "finished":
                self._settle(None)
                raise StopAsyncIteration
            elif state == "eof":
                error = self._incomplete()
                if self._retried(error):
                    continue
                self._state = "failed"
                self._error = error
                self._settle(error)
                raise error
            elif state == "closed":
                if self.assembler.finished:
                    self._settle(None)
                    raise StopAsyncIteration
                self._error = IncompleteStreamError(
                    "the stream was closed before the response finished"
                )
                self._state = "failed"
                self._settle(self._error)
                raise self._error
            else:
                assert self._error is not None
                raise self._error
        pair = self._pending.popleft()
        self.last_committed = pair[1]
        return pair

    def _fail(self, exc: BaseException) -> None:
        self._deferred = None
        self._state = "failed"
        self._error = self._endpoint.redactor.redact_error(exc)
        self._settle(exc)
        raise exc

    def _settle(self, error: BaseException | None) -> None:
        """Tell the driver's hooks, once, how the response ended: what was
        assembled (whole, or what :meth:`partial` keeps) and the error."""
        spans = self._spans
        if not spans:
            return
        self._spans = ()
        finished = error is None and self.assembler.finished
        result = self.assembler.result() if finished else self.assembler.partial()
        for span in spans:
            span.end(result, error)

    async def _guard(self, step: Any) -> None:
        # Any failure, cancellation included, closes the connection at once.
        try:
            await step
        except BaseException as exc:
            # Whatever the provider echoed (a key in an error event or body)
            # leaves the driver redacted: messages, records and tracebacks.
            self._endpoint.redactor.redact_error(exc)
            if self._state not in ("failed", "closed"):
                self._state = "failed"
            if self._error is None and isinstance(exc, Exception):
                self._error = exc
            elif self._error is None:
                self._error = IncompleteStreamError("the stream was cancelled before it finished")
            await self._close_response()
            if self._retried(exc):
                return
            self._settle(exc)
            raise

    def _retried(self, error: BaseException) -> bool:
        """Whether ``error`` ends this attempt only: it came before any chunk
        and the policy retries it.  Then the stream is set to send again after
        the wait, and the :class:`~elelem.stream.Retry` notice is queued (fed
        to the assembler, and kept in :attr:`retries`).  Otherwise a note on
        the error says why it was not retried, when a policy was in force."""
        policy = self._retry_policy
        if policy is None or self._fed or not isinstance(error, StreamError):
            return False
        if not retries_before_content(error):
            return False
        number = len(self.retries) + 1
        if number >= policy.max_attempts:
            error.add_note(f"retry: gave up after {number} attempts")
            return False
        delay = policy.delay(number, error, random.random())
        if delay is None:
            return False
        if self._waited + delay > policy.budget:
            error.add_note(
                f"retry: waiting {delay:g}s more would pass the {policy.budget:g}s budget"
            )
            return False
        notice = Retry(
            attempt=number,
            delay=delay,
            reason=retry_reason(error),
            kind=error.kind,
            status=error.status,
            message=self._endpoint.redact(error.message)[:RETRY_MESSAGE_LIMIT],
            request_id=error.request_id,
        )
        self.retries.append(notice)
        self.assembler.feed(notice)
        if not self._draining:
            self._pending.append((notice, ()))
        self._wait = delay
        self._waited += delay
        self._state = "wait"
        self._deferred = self._error = None
        self._response = self._body = self._parser = self._decoder = None
        self.status = self.request_id = self.tail = None
        self.headers = {}
        self.bytes_received = 0
        self._meter = BodyMeter(self._driver.limits)
        return True

    async def _pause(self) -> None:
        await anyio.sleep(self._wait)
        self._state = "new"

    async def _open(self) -> None:
        shape, endpoint = self._shape, self._endpoint
        if self._spans is None:
            # once per response: a retry is part of the same span
            self._spans = tuple(hook.start(self) for hook in self._driver.hooks)
        encoded = shape.encode_request(
            self._request, provider=endpoint.provider, stream=self._stream
        )
        self.dropped = encoded.dropped
        total = self._timeouts.total
        if total > 0:
            self._deadline = time.monotonic() + total
        response = await self._by_deadline(self._send(encoded))
        self._response = response
        self.status = response.status_code
        self.headers = response.headers
        self.request_id = _request_id(response.headers)
        if not 200 <= response.status_code < 300:
            await self._raise_http_error(response)
        content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        if not self._stream or content_type in _JSON_TYPES:
            # A whole JSON body (asked for, or sent by a server that ignored
            # ``stream``) goes through the shape's response mapping.
            body = await self._by_deadline(self._read_all(response))
            await self._close_response()
            self._state = "finished"
            self._parse(shape.parse_response, body, endpoint.provider, self._request)
            if not self.assembler.finished and self._deferred is None:
                self._deferred = IncompleteStreamError(
                    "the response body mapped to no finish", status=response.status_code
                )
            return
        parser = shape.new_parser(endpoint.provider, self._request)
        self._parser = parser
        self._decoder = _decoder(shape.framing, content_type, self._driver.limits.frame)
        stream = response.stream
        if "content-encoding" not in response.headers and isinstance(
            stream, httpx2.AsyncByteStream
        ):
            # Nothing to decode: read the transport's stream itself, which
            # spares two async generators (decoding, re-chunking) per read.
            self._body = stream.__aiter__()
        else:
            self._body = response.aiter_bytes()
        self._state = "open"
        if self._parse(parser.open, response.status_code, response.headers):
            self._state = "finished"
            await self._close_response()

    async def _send(self, encoded: EncodedRequest) -> httpx2.Response:
        endpoint = self._endpoint
        http = self._driver.http()
        try:
            request = http.build_request(
                encoded.method,
                endpoint.url(encoded.path),
                content=codec.dumps(encoded.body) if encoded.method != "GET" else None,
                headers={
                    "content-type": "application/json",
                    "accept": _ACCEPT[self._shape.framing] if self._stream else "application/json",
                    **endpoint.request_headers(encoded.headers),
                },
                timeout=self._timeouts.as_httpx(),
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
        try:
            return await http.send(request, stream=True)
        except httpx2.ConnectTimeout as exc:
            raise ConnectTimeoutError(
                f"no connection to {_host(request)} within {self._timeouts.connect:g}s"
            ) from exc
        except httpx2.ReadTimeout as exc:
            raise IdleTimeoutError(
                f"no response headers from {_host(request)} within {self._timeouts.idle:g}s"
            ) from exc
        except httpx2.RequestError as exc:
            raise TransportError(
                f"request to {_host(request)} failed before a response: "
                f"{type(exc).__name__}: {endpoint.redact(str(exc))}"
            ) from exc

    async def _pump(self, drain: bool = False) -> None:
        """Read and handle one piece of the body, or with ``drain`` every piece
        until the stream ends (one coroutine for the whole body, for final())."""
        body, decoder, parser = self._body, self._decoder, self._parser
        assert body is not None and decoder is not None and parser is not None
        read, decode, frames = body.__anext__, decoder.feed, self._frames
        deadline, meter, response = self._deadline, self._meter, self._response
        idle = self._timeouts.idle
        # Only a read that could outlast the deadline pays for a cancel scope.
        slack = idle if idle > 0 else float("inf")
        raw = response is not None and "content-encoding" in response.headers
        while True:
            try:
                if deadline is not None and deadline - time.monotonic() < slack:
                    data = await self._by_deadline(read())
                else:
                    data = await read()
            except StopAsyncIteration:
                await self._end_of_body()
                return
            except httpx2.RequestError as exc:
                raise self._broken(exc, f"after {self.bytes_received} bytes") from exc
            received = self.bytes_received = self.bytes_received + len(data)
            if raw and response:
                meter.add(len(data), response.num_bytes_downloaded)
            elif received > meter.quiet:
                meter.add(received - meter.decoded, None)
            frames(decode(data))
            if self._state == "open" and decoder.failure is not None:
                # Raised once the frames before the fault were handed out.
                self._deferred = decoder.failure
                self._state = "finished"
            if self._state != "open":
                await self._release()
                return
            if not drain:
                return

    def _frames(self, frames: list[Any]) -> None:
        """Parse one read's frames (``(event, data, …)``; NDJSON lines) and
        feed their chunks; at a finish, or a deferred error, the stream is
        finished (what follows a finish on the wire is the benign close)."""
        parser = self._parser
        assert parser is not None
        if isinstance(self._decoder, NDJSONDecoder):
            frames = [("", line) for line in frames]
        messages = getattr(parser, "messages", None)
        if messages is None:  # a parser with message() alone: a frame at a time
            done = any(self._parse(parser.message, frame[0], frame[1]) for frame in frames)
        else:
            # One call for the read's frames (the skeleton's), then their chunks.
            chunks: list[Chunk] = []
            try:
                messages(frames, chunks)
            except Exception as exc:  # noqa: BLE001 - re-raised by _next, after earlier chunks
                done = self._feed(chunks) or self._defer(exc)
            else:
                done = self._feed(chunks)
        if done:
            self._state = "finished"

    def _defer(self, exc: Exception) -> bool:
        self._deferred = exc
        return True

    def _feed(self, chunks: Iterable[Any]) -> bool:
        """Feed every chunk to the assembler; True when the stream is done
        (finish, or a deferred error).

        Each chunk is queued with what it committed for the iterator, except
        while :meth:`final` drains: then nothing is queued and
        ``last_committed`` ends as it would had every pair been taken from the
        queue.  A parser error or grammar breach is deferred until the chunks
        before it were handed out, so a consumer sees everything up to the fault.
        """
        feed = self.assembler.feed
        queue = None if self._draining else self._pending.append
        committed: tuple[Part, ...] | None = None
        done = False
        for chunk in chunks:
            is_finish = type(chunk) is Finish
            if is_finish and chunk.failure:
                chunk = self._redacted_finish(chunk)
            try:
                committed = feed(chunk)
            except Exception as exc:  # noqa: BLE001 - re-raised by _next, after earlier chunks
                done = self._defer(exc)
                break
            if queue is not None:
                queue((chunk, committed))
            if is_finish:
                done = True
                break
        if committed is not None:
            self._fed = True  # a chunk arrived: this attempt is no longer retried
            if queue is None:
                self.last_committed = committed
        return done

    def _redacted_finish(self, chunk: Finish) -> Finish:
        # A provider's failure text may echo a credential; the assembler's
        # copy (what the log stores) is redacted the same way.
        clean = self._endpoint.redact(chunk.failure or "")
        if clean == chunk.failure:
            return chunk
        return msgspec.structs.replace(chunk, failure=clean)

    def _parse(self, step: Any, *args: Any) -> bool:
        """Run one parser step (a frame, open, eof, a whole response) and feed
        its chunks; True when the stream is done."""
        try:
            chunks = step(*args)
        except Exception as exc:  # noqa: BLE001 - re-raised by _next, after earlier chunks
            return self._defer(exc)
        return self._feed(chunks)

    async def _end_of_body(self) -> None:
        assert self._decoder is not None and self._parser is not None
        tail = self._decoder.close()
        self._frames(tail)
        deferred = self._deferred
        if (
            tail
            and isinstance(deferred, MalformedStreamError)
            and deferred.retryable
            and not self.assembler.finished
        ):
            # A last NDJSON line cut short is the same incomplete stream as
            # an SSE event cut short: one error on every wire.
            self._deferred = None
            self._state = "open"
        if self._state == "open" and not self._parse(self._parser.eof):
            self._state = "finished" if self.assembler.finished else "eof"
        elif self._state == "open":
            self._state = "finished"
        await self._close_response()

    def _incomplete(self) -> IncompleteStreamError:
        cut = self._decoder.unterminated if self._decoder is not None else 0
        tail = f"; the last {cut} bytes were an unterminated frame" if cut else ""
        return IncompleteStreamError(
            f"the stream ended after {self.bytes_received} bytes without a terminal event{tail}",
            status=self.status,
            request_id=self.request_id,
        )

    async def _raise_http_error(self, response: httpx2.Response) -> None:
        body = bytearray()
        read_error: Exception | None = None
        try:
            async for piece in response.aiter_bytes():
                body += piece
                if len(body) > MAX_ERROR_BODY:
                    break
        except httpx2.RequestError as exc:
            read_error = exc  # classified below with what did arrive; kept as the cause
        await self._close_response()
        headers = response.headers
        error = self._shape.classify_error(
            response.status_code, headers, self._endpoint.redact_bytes(bytes(body[:MAX_ERROR_BODY]))
        )
        raise stamp_error(error, response.status_code, headers) from read_error

    async def _read_all(self, response: httpx2.Response) -> bytes:
        # Piece by piece, so a body past Limits.body (or a compression bomb)
        # is stopped before it is held whole.
        pieces: list[bytes] = []
        meter = self._meter
        raw = "content-encoding" in response.headers
        try:
            async for piece in response.aiter_bytes():
                pieces.append(piece)
                meter.add(len(piece), response.num_bytes_downloaded if raw else None)
        except httpx2.RequestError as exc:
            raise self._broken(exc, "while reading the response body") from exc
        body = b"".join(pieces)
        self.bytes_received = len(body)
        return body

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
        raise DeadlineExceededError(
            f"the response did not finish within {self._timeouts.total:g}s (Timeouts.total)"
            + (f", after {self.bytes_received} bytes" if self.bytes_received else ""),
            status=self.status,
            request_id=self.request_id,
        )

    def _broken(self, exc: httpx2.RequestError, where: str) -> StreamError:
        """The typed error for a body read that failed ``where``."""
        if isinstance(exc, httpx2.DecodingError):
            return MalformedStreamError(
                f"the response body could not be decoded {where}: "
                f"{self._endpoint.redact(str(exc))}",
                status=self.status,
                request_id=self.request_id,
            )
        if isinstance(exc, httpx2.ReadTimeout):
            return IdleTimeoutError(
                f"the stream sent nothing for {self._timeouts.idle:g}s {where}",
                status=self.status,
                request_id=self.request_id,
            )
        return TransportError(
            f"the connection broke {where}: {type(exc).__name__}: {self._endpoint.redact(str(exc))}",
            status=self.status,
            request_id=self.request_id,
        )

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
        body = self._body
        if body is not None and self._state == "finished" and self._deferred is None:
            self.tail = f"no end of the body within {TAIL_GRACE:g} s after the terminal event"
            with anyio.move_on_after(TAIL_GRACE):
                try:
                    extra = await body.__anext__()
                except StopAsyncIteration:
                    self.tail = None  # the clean end: the connection is reusable
                except httpx2.RequestError as exc:
                    self.tail = f"the body's end broke: {type(exc).__name__}: " + (
                        self._endpoint.redact(str(exc))
                    )
                else:
                    self.tail = f"{len(extra)} bytes after the terminal event, not read"
        await self._close_response()

    async def _close_response(self) -> None:
        response, self._response = self._response, None
        self._body = None
        if response is not None:
            # Shielded: closing must finish even inside a cancelled scope.
            with anyio.CancelScope(shield=True):
                await response.aclose()


RETRY_MESSAGE_LIMIT = 300
"""Characters of a failed attempt's error message a retry notice keeps."""

TAIL_GRACE = 0.25
"""Seconds a finished stream waits for its body's end before closing the
connection (which is then not reused); it never delays a response that
ends properly, whose end follows its last event at once."""


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _decoder(
    framing: str, content_type: str, frame: int
) -> SSEDecoder | NDJSONDecoder | EventStreamDecoder:
    """The body decoder (see :func:`~elelem.transport.framing.decoder_for`)."""
    return decoder_for(framing, content_type, frame or DEFAULT_MAX_EVENT_BYTES)


def _request_id(headers: Mapping[str, str]) -> str | None:
    lowered = {k.lower(): v for k, v in headers.items()}
    for name in _REQUEST_ID_HEADERS:
        value = lowered.get(name)
        if value:
            return value
    return None


def stamp_error(error: StreamError, status: int, headers: Mapping[str, str]) -> StreamError:
    """What the driver adds, once, to the typed error a shape made of an HTTP
    error response: the server's retry hint (``retry-after-ms`` or
    ``retry-after``; an HTTP date read against the response's own ``Date``,
    else the local clock), the response's request id and its status — each
    only where the body itself stated none.  Returns ``error``."""
    if error.retry_after is None:
        date = next((v for k, v in headers.items() if k.lower() == "date"), None)
        served = errors.http_date(date) if date is not None else None
        error.retry_after = parse_retry_after(headers, served)
    if error.request_id is None:
        error.request_id = _request_id(headers)
    if error.status is None:
        error.status = status
    return error


def _host(request: httpx2.Request) -> str:
    # Host and port only: a query string could carry a credential.
    url = request.url
    return f"{url.host}:{url.port}" if url.port else str(url.host)


class Driver:
    """Sends requests for any shape and streams the responses.

    ``http`` is an ``httpx2.AsyncClient`` to use (the caller closes it); by
    default the driver makes its own on first use and :meth:`aclose` closes it.
    ``clock`` gives the time a signed request (an endpoint with a ``signer``)
    is stamped with at send; the system's UTC time by default.  ``limits``
    bound what one response may cost (:class:`~elelem.transport.limits.Limits`).
    ``retry`` is the policy for failures before any chunk arrived (see
    :class:`ResponseStream`); None, the default, retries nothing.  ``hooks``
    are told of every response (:class:`RequestHook`: tracing).
    """

    def __init__(
        self,
        http: httpx2.AsyncClient | None = None,
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
        self._http = http
        self._owns_http = http is None
        self.timeouts = timeouts or Timeouts()
        self.limits = limits or DEFAULT_LIMITS
        self.clock: Callable[[], datetime] = clock if clock is not None else _utc_now

    def http(self) -> httpx2.AsyncClient:
        """The HTTP client (made on first use, inside the running event loop)."""
        if self._http is None:
            self._http = httpx2.AsyncClient(timeout=self.timeouts.as_httpx())
        return self._http

    def stream(
        self,
        endpoint: Endpoint,
        shape: Shape,
        request: ModelRequest,
        *,
        timeouts: Timeouts | None = None,
    ) -> ResponseStream:
        """A streamed response to ``request`` (sent on first iteration)."""
        return ResponseStream(
            self, endpoint, shape, request, timeouts=timeouts or self.timeouts, retry=self.retry
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
        stream = ResponseStream(
            self,
            endpoint,
            shape,
            request,
            timeouts=timeouts or self.timeouts,
            stream=False,
            retry=self.retry,
        )
        async with stream:
            return await stream.final()

    async def aclose(self) -> None:
        """Close the HTTP client if the driver made it."""
        if self._http is not None and self._owns_http:
            http, self._http = self._http, None
            await http.aclose()


__all__ = [
    "Driver",
    "RequestHook",
    "RequestSpan",
    "ResponseStream",
    "StreamError",
    "Timeouts",
    "parse_retry_after",
    "stamp_error",
]
