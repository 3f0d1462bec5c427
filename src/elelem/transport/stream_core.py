"""What a streamed response is without its I/O: the one core under both streams.

:class:`StreamCore` holds a response's state and does every step that is not
a read, a send, a wait or a close: it builds and signs the request, reads the
status and the content type, feeds each network read to the body decoder,
the shape's parser and the one :class:`~elelem.stream.Assembler`, decides
retries, types every failure and tells the hooks how the response ended.

Two shells add the I/O, each a few calls per step and no logic of its own:
:class:`~elelem.transport.driver.ResponseStream` (async, over
``httpx2.AsyncClient``) and :class:`~elelem.transport.blocking.SyncResponseStream`
(blocking, over ``httpx2.Client``, in the calling thread).  A step of either
is the same sequence of core calls, so both streams give the same chunks,
commits, errors and retries for the same bytes.
"""

from __future__ import annotations

import functools
import random
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import httpx2
import msgspec

from elelem import codec
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
from elelem.outputs import parse_output
from elelem.stream import AssembledResponse, Assembler, Chunk, Finish, Retry
from elelem.transport.config import CHAT, RequestSpan, Settings, Timeouts
from elelem.transport.endpoint import Endpoint
from elelem.transport.failures import (
    host,
    name_provider,
    pool_timeout,
    request_id,
    stamp_error,
    told,
)
from elelem.transport.framing import (
    DEFAULT_MAX_EVENT_BYTES,
    EventStreamDecoder,
    NDJSONDecoder,
    SSEDecoder,
    decoder_for,
)
from elelem.transport.limits import BodyMeter
from elelem.transport.rawbody import RawDecoder
from elelem.transport.retry import RetryPolicy, retries_before_content, retry_reason
from elelem.vocabulary import Drop, Part
from elelem.wire import EncodedRequest, FrameParser, ModelRequest, Shape


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

_STEPS = (NEW, OPEN, WAIT)
"""The states whose next step is the shell's I/O."""


if TYPE_CHECKING:
    pass

_JSON_TYPES = ("application/json", "application/problem+json")


_ACCEPT = {
    "sse": "text/event-stream",
    "ndjson": "application/x-ndjson",
    "eventstream": "application/vnd.amazon.eventstream",
    "raw": "*/*",
}

RETRY_MESSAGE_LIMIT = 300
"""Characters of a failed attempt's error message a retry notice keeps."""

TAIL_GRACE = 0.25
"""Seconds a finished stream waits for its body's end before closing the
connection (which is then not reused); it never delays a response that
ends properly, whose end follows its last event at once."""


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


class StreamCore:
    """One streamed provider response, without its I/O (see the module docs).

    The attributes and the methods here are the same on the async
    :class:`~elelem.transport.ResponseStream` and the blocking
    :class:`~elelem.transport.SyncResponseStream`, and none of them waits:
    :meth:`partial`, :meth:`result`, :meth:`open_parts`, :attr:`finished`,
    the response's :attr:`status`, :attr:`headers` and :attr:`request_id`,
    what the encoder :attr:`dropped`, the :attr:`retries` made.
    """

    _blocking = False  # the blocking shell's streams read through its own client

    def __init__(
        self,
        driver: Settings,
        endpoint: Endpoint,
        shape: Shape,
        request: ModelRequest,
        *,
        timeouts: Timeouts,
        stream: bool = True,
        retry: RetryPolicy | None = None,
        operation: str = CHAT,
    ) -> None:
        self._driver = driver
        self._operation = operation
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
        # A shape whose answer is many small blocks by nature (streamed
        # speech: a block per piece of audio) says how many it may start.
        self.assembler = Assembler(endpoint.provider, max_blocks=getattr(shape, "max_blocks", None))
        self.last_committed: tuple[Part, ...] = ()
        """What the latest chunk committed."""
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
        self._body: Any = None  # the shell's iterator of body pieces
        self._parser: FrameParser | None = None
        self._decoder: SSEDecoder | NDJSONDecoder | EventStreamDecoder | RawDecoder | None = None
        # Read once per response, not per read: whether the body is
        # compressed, the parser's call for a read's frames (None: it takes
        # a frame at a time), whether its frames are NDJSON lines.
        self._compressed = False
        self._messages: Any = None
        self._lines = False
        self._runs = False  # the decoder hands the parser runs (SSEDecoder.feed)
        self._state = NEW
        # Set by final(): nobody observes single chunks, so they go straight
        # to the assembler instead of through the queue of pairs.
        self._draining = False

    # -- what needs no I/O ---------------------------------------------------------

    def parse(self, result: AssembledResponse) -> Any:
        """``result``'s text validated as :attr:`output_type`."""
        if self.output_type is None:
            raise ValueError("the stream was not asked for an output_type")
        return parse_output(self.output_type, result.text)

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

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(provider={self._endpoint.provider!r}, "
            f"shape={self._shape.name!r}, state={self._state!r}, status={self.status!r})"
        )

    # -- the loop ----------------------------------------------------------------

    def _ready(self) -> tuple[Chunk, tuple[Part, ...]] | StreamState | None:
        """The next pair when one is queued; else the I/O step the shell must
        take (NEW: open, OPEN: read, WAIT: pause); None at
        the end of a whole stream.  Raises the error that ended it."""
        while not self._pending:
            if self._deferred is not None:
                if self._retried(self._deferred):
                    continue
                self._fail(self._deferred)
            state = self._state
            if state in _STEPS:
                return state
            if state is FINISHED:
                self._settle(None)
                return None
            if state is EOF:
                error = self._incomplete()
                if self._retried(error):
                    continue
                self._move(FAILED)
                self._error = error
                self._settle(error)
                raise error
            if state is CLOSED:
                if self.assembler.finished:
                    self._settle(None)
                    return None
                self._error = IncompleteStreamError(
                    "the stream was closed before the response finished"
                )
                self._move(FAILED)
                self._settle(self._error)
                raise self._error
            assert self._error is not None
            raise self._error
        pair = self._pending.popleft()
        self.last_committed = pair[1]
        return pair

    def _drain(self) -> None:
        """final() began: what was queued is already fed, only its last commit is kept."""
        self._draining = True
        pending = self._pending
        if pending:
            self.last_committed = pending[-1][1]
            pending.clear()

    def _draining_step(self) -> StreamState | None:
        """While draining, the I/O step left before the terminal states (which
        the shell then settles through :meth:`_ready`); None when none is."""
        if self._deferred is None and self._state in _STEPS:
            return self._state
        return None

    def _move(self, to: StreamState) -> None:
        if to not in TRANSITIONS[self._state]:
            raise RuntimeError(f"stream state {self._state} cannot become {to}")
        self._state = to

    def _closing(self) -> None:
        if self._state in _STEPS:
            self._move(CLOSED)

    def _closed(self) -> None:
        """The shell closed the connection: tell the hooks, if not told yet."""
        if self._spans:
            closed = IncompleteStreamError("the stream was closed before the response finished")
            self._settle(None if self.assembler.finished else closed)

    def _fail(self, exc: BaseException) -> None:
        self._deferred = None
        self._move(FAILED)
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

    def _failed(self, exc: BaseException) -> None:
        """A step failed (cancellation included): the state and the error the
        stream keeps.  The shell then closes the connection and asks
        :meth:`_retried`."""
        # Whatever the provider echoed (a key in an error event or body)
        # leaves the driver redacted: messages, records and tracebacks.
        self._endpoint.redactor.redact_error(exc)
        if self._state not in (FAILED, CLOSED):
            self._move(FAILED)
        if self._error is None and isinstance(exc, Exception):
            self._error = exc
        elif self._error is None:
            self._error = IncompleteStreamError("the stream was cancelled before it finished")

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
        self._move(WAIT)
        self._deferred = self._error = None
        self._response = self._body = self._parser = self._decoder = None
        self.status = self.request_id = self.tail = None
        self.headers = {}
        self.bytes_received = 0
        self._meter = BodyMeter(self._driver.limits)
        return True

    # -- opening -------------------------------------------------------------------

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

    def _http_error(self, body: bytes) -> StreamError:
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

    # -- reading ---------------------------------------------------------------------

    def _counted(self, piece: bytes) -> None:
        """Count one piece of a whole body against the limits."""
        response = self._response
        assert response is not None
        self._meter.add(len(piece), response.num_bytes_downloaded if self._compressed else None)

    def _received(self, data: bytes) -> bool:
        """Handle one network read of the body; True once the stream is no
        longer open (finished, or a fault deferred): the shell then releases
        the connection."""
        received = self.bytes_received = self.bytes_received + len(data)
        meter = self._meter
        if self._compressed:
            assert self._response is not None
            meter.add(len(data), self._response.num_bytes_downloaded)
        elif received > meter.quiet:
            meter.add(received - meter.decoded, None)
        decoder = self._decoder
        assert decoder is not None
        self._frames(decoder.feed(data, True) if self._runs else decoder.feed(data))  # type: ignore[call-arg]
        if self._state is OPEN and decoder.failure is not None:
            # Raised once the frames before the fault were handed out.
            self._deferred = decoder.failure
            self._move(FINISHED)
        return self._state is not OPEN

    def _frames(self, frames: list[Any]) -> None:
        """Parse one read's frames (``(event, data, …)``; NDJSON lines) and
        feed their chunks; at a finish, or a deferred error, the stream is
        finished (what follows a finish on the wire is the benign close)."""
        parser = self._parser
        assert parser is not None
        if self._lines:
            frames = [("", line) for line in frames]
        messages = self._messages
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
                if self._draining:
                    # What _feed_drained does, its first run of deltas (most
                    # reads: all their chunks) taken here, a call fewer a read.
                    reached = self.assembler.feed_deltas(chunks)
                    if reached:
                        self._fed = True
                        self.last_committed = ()
                    done = reached < len(chunks) and self._feed_rest(chunks, reached)
                else:
                    done = self._feed(chunks)
        if done:
            self._move(FINISHED)

    def _defer(self, exc: Exception) -> bool:
        name_provider(exc, self._endpoint.provider)  # an error event in the stream
        self._deferred = exc
        return True

    def _feed(self, chunks: Iterable[Any], one: bool = False) -> bool:
        """Feed every chunk to the assembler; True when the stream is done
        (finish, or a deferred error).

        Each chunk is queued with what it committed for the iterator, except
        while final() drains: then nothing is queued and ``last_committed``
        ends as it would had every pair been taken from the queue.  A parser
        error or grammar breach is deferred until the chunks before it were
        handed out, so a consumer sees everything up to the fault.
        """
        if self._draining and not one and type(chunks) is list:
            return self._feed_drained(chunks)
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

    def _feed_drained(self, chunks: list[Chunk]) -> bool:
        """:meth:`_feed` while final() drains: a read's runs of text and
        reasoning deltas go to the assembler in one call each, every other
        chunk through :meth:`_feed` (nothing is queued either way)."""
        reached = self.assembler.feed_deltas(chunks)
        if reached:
            self._fed = True
            self.last_committed = ()
        return reached < len(chunks) and self._feed_rest(chunks, reached)

    def _feed_rest(self, chunks: list[Chunk], index: int) -> bool:
        """:meth:`_feed_drained` from chunk ``index`` on, which ended a run of
        deltas (or begins the read) and is no delta the assembler takes
        here: fed through :meth:`_feed`, then the next run, and so on."""
        deltas, end = self.assembler.feed_deltas, len(chunks)
        while True:
            if self._feed(chunks[index : index + 1], one=True):
                return True
            start = index + 1
            if start == end:
                return False
            index = deltas(chunks, start)
            if index > start:
                self._fed = True
                self.last_committed = ()
            if index == end:
                return False

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

    def _ended(self) -> None:
        """The body ended: parse what the decoder held and the parser's eof.
        The shell then closes the connection."""
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
            self._move(OPEN)
        if self._state is OPEN and not self._parse(self._parser.eof):
            self._move(FINISHED if self.assembler.finished else EOF)
        elif self._state is OPEN:
            self._move(FINISHED)

    def _releasing(self) -> bool:
        """Whether the body's end is worth reading (within :data:`TAIL_GRACE`)
        before the connection closes: a whole response whose body is open."""
        return self._body is not None and self._state is FINISHED and self._deferred is None

    def _tail_of(self, extra: bytes | None, broke: httpx2.RequestError | None) -> None:
        """What reading the body's end found: nothing more (None, the clean
        end), ``extra`` bytes, or an end that ``broke``."""
        if broke is not None:
            self.tail = f"the body's end broke: {self._told(broke)}"
        elif extra is not None:
            self.tail = f"{len(extra)} bytes after the terminal event, not read"
        else:
            self.tail = None  # the clean end: the connection is reusable

    def _late(self) -> None:
        self.tail = f"no end of the body within {TAIL_GRACE:g} s after the terminal event"

    def _incomplete(self) -> IncompleteStreamError:
        cut = self._decoder.unterminated if self._decoder is not None else 0
        tail = f"; the last {cut} bytes were an unterminated frame" if cut else ""
        return IncompleteStreamError(
            f"the stream ended after {self.bytes_received} bytes without a terminal event{tail}",
            status=self.status,
            request_id=self.request_id,
        )

    def _past_deadline(self) -> bool:
        return self._deadline is not None and time.monotonic() >= self._deadline

    def _deadline_error(self) -> DeadlineExceededError:
        return DeadlineExceededError(
            f"the response did not finish within {self._timeouts.total:g}s (the total timeout)"
            + (f", after {self.bytes_received} bytes" if self.bytes_received else ""),
            status=self.status,
            request_id=self.request_id,
        )

    def _told(self, exc: BaseException) -> str:
        return self._endpoint.redact(told(exc))

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
            if self._past_deadline():
                return self._deadline_error()
            return IdleTimeoutError(
                f"the stream sent nothing for {self._timeouts.idle:g}s {where}",
                status=self.status,
                request_id=self.request_id,
            )
        return TransportError(
            f"the connection broke {where}: {self._told(exc)}",
            status=self.status,
            request_id=self.request_id,
        )


__all__ = ["RETRY_MESSAGE_LIMIT", "TAIL_GRACE", "StreamCore"]
