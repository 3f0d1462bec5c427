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

The core is three modules: the states and every move between them
(:mod:`~elelem.transport.stream_states`, one table), the per-read path
every event crosses (:mod:`~elelem.transport.stream_feed`, a base of
:class:`StreamCore`), and here what runs once an attempt: the loop over
the states, retries, opening the request and typing its failures.
"""

from __future__ import annotations

import random
import time
from collections import deque
from collections.abc import Mapping
from typing import Any

import httpx2

from elelem.errors import (
    DeadlineExceededError,
    IdleTimeoutError,
    IncompleteStreamError,
    MalformedStreamError,
    StreamError,
    TransportError,
)
from elelem.outputs import parse_output
from elelem.stream import AssembledResponse, Assembler, Chunk, Retry
from elelem.transport.config import CHAT, RequestSpan, Settings, Timeouts
from elelem.transport.endpoint import Endpoint
from elelem.transport.faces import Assembled
from elelem.transport.failures import (
    told,
)
from elelem.transport.framing import (
    EventStreamDecoder,
    NDJSONDecoder,
    SSEDecoder,
)
from elelem.transport.limits import BodyMeter
from elelem.transport.rawbody import RawDecoder
from elelem.transport.retry import RetryPolicy, retries_before_content, retry_reason
from elelem.transport.stream_opening import StreamOpening
from elelem.transport.stream_states import (
    CLOSED,
    EOF,
    FAILED,
    FINISHED,
    NEW,
    OPEN,
    SHELL_STEPS,
    TRANSITIONS,
    WAIT,
    StreamState,
)
from elelem.vocabulary import Drop, Part
from elelem.wire import FrameParser, ModelRequest, Shape

RETRY_MESSAGE_LIMIT = 300
"""Characters of a failed attempt's error message a retry notice keeps."""

TAIL_GRACE = 0.25
"""Seconds a finished stream waits for its body's end before closing the
connection (which is then not reused); it never delays a response that
ends properly, whose end follows its last event at once."""


class StreamCore(StreamOpening, Assembled):
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
            if state in SHELL_STEPS:
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
        if self._deferred is None and self._state in SHELL_STEPS:
            return self._state
        return None

    def _move(self, to: StreamState) -> None:
        if to not in TRANSITIONS[self._state]:
            raise RuntimeError(f"stream state {self._state} cannot become {to}")
        self._state = to

    def _closing(self) -> None:
        if self._state in SHELL_STEPS:
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


__all__ = [
    "NEW",
    "OPEN",
    "RETRY_MESSAGE_LIMIT",
    "TAIL_GRACE",
    "StreamCore",
    "StreamState",
]
