"""The per-read path of a response stream: each network read of the body
through the decoder, the shape's parser and the one assembler, the chunks
queued with what they committed (or, while ``final()`` drains, fed in runs
and not queued).  It is the part of
:class:`~elelem.transport.stream_core.StreamCore` every event of every
stream crosses, kept apart from the state machine, the opening of the
request and the typing of failures, which run once a response; its code is
what ``benchmarks/one_event_reads.py`` counts per event.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

import httpx2
import msgspec

from elelem.errors import MalformedStreamError
from elelem.stream import Assembler, Chunk, Finish
from elelem.transport.endpoint import Endpoint
from elelem.transport.failures import name_provider
from elelem.transport.framing import EventStreamDecoder, NDJSONDecoder, SSEDecoder
from elelem.transport.limits import BodyMeter
from elelem.transport.rawbody import RawDecoder
from elelem.transport.stream_states import EOF, FINISHED, OPEN, StreamState
from elelem.vocabulary import Part
from elelem.wire import FrameParser


class StreamFeed:
    """The per-read methods of :class:`~elelem.transport.stream_core.StreamCore`
    (a base of it, holding no state of its own: the attributes below are
    the core's, set in its ``__init__``)."""

    assembler: Assembler
    last_committed: tuple[Part, ...]
    bytes_received: int
    _endpoint: Endpoint
    _meter: BodyMeter
    _compressed: bool
    _response: httpx2.Response | None
    _parser: FrameParser | None
    _decoder: SSEDecoder | NDJSONDecoder | EventStreamDecoder | RawDecoder | None
    _messages: Any
    _lines: bool
    _runs: bool
    _state: StreamState
    _deferred: BaseException | None
    _draining: bool
    _fed: bool
    _pending: deque[tuple[Chunk, tuple[Part, ...]]]
    _move: Callable[[StreamState], None]

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


__all__ = ["StreamFeed"]
