"""Incremental framing of response bodies: server-sent events and NDJSON.

Both decoders take raw bytes exactly as the network delivers them and may be
fed any split of the body: a chunk may end inside a line, inside a CRLF pair
or inside a multi-byte UTF-8 sequence.  They work on bytes and decode whole
lines, which is why no split can corrupt a character: the line terminators
``\\r`` and ``\\n`` never occur inside a UTF-8 sequence.

The SSE decoder follows the WHATWG event-stream rules
(https://html.spec.whatwg.org/multipage/server-sent-events.html): a leading
BOM is skipped once; LF, CR and CRLF all end a line; ``:`` starts a comment;
``data`` lines of one event are joined with LF; ``id`` sets the last event id
unless it holds NUL; ``retry`` is honoured only when all ASCII digits; an
event with no data is not dispatched; an event cut off by the end of the body
is not dispatched (the driver reports it).  Two deliberate departures: an
event without an ``event`` field is dispatched with the name ``""`` (the
frame-parser contract, so parsers can tell it from an explicit
``event: message``), and bytes that are not UTF-8 raise
:class:`~elelem.errors.MalformedStreamError` rather than being replaced with
U+FFFD, since a silently altered payload could not replay byte-exact.

``httpx2.EventSource`` was measured and not used: it keeps a leading BOM in
the first field name, dispatches events that carry no data, dispatches an
event the body cut off after a lone CR, caps events at 1 MiB by default,
insists on a ``text/event-stream`` content type, and is slower (see
``tests/test_sse_framing.py`` and the transport notes in the report).
"""

from __future__ import annotations

from typing import NamedTuple

from elelem.errors import MalformedStreamError

_BOM = b"\xef\xbb\xbf"
DEFAULT_MAX_EVENT_BYTES = 64 * 1024 * 1024
"""Largest event (or unterminated line) buffered before the stream is rejected."""
_MAX_NAMES = 256
# ``tuple.__new__`` skips the named tuple's Python-level ``__new__``: one call
# less per event on the hot path, the same object.
_event = tuple.__new__


class SSEEvent(NamedTuple):
    """One dispatched server-sent event.

    ``event`` is ``""`` when the frame named none; ``id`` is the last event id
    in force when it was dispatched; ``retry`` the latest reconnection time
    the stream announced, in milliseconds.
    """

    event: str
    data: str
    id: str = ""
    retry: int | None = None


def _utf8(raw: bytes, offset: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start]
        raise MalformedStreamError(
            f"response body is not valid UTF-8 (byte 0x{bad:02x} within its first {offset} bytes)"
        ) from None


class _Lines:
    """Splits bytes into lines on LF, CR or CRLF, across any chunk boundary.

    Byte tests are written ``0x0D in chunk``: an int is found with one memchr,
    several times faster than the substring search ``b"\\r" in chunk``.
    """

    __slots__ = ("_cr", "_max", "_parts", "_size", "consumed")

    def __init__(self, max_line: int) -> None:
        # An unterminated line is kept as pieces, so a long line arriving in
        # small chunks costs linear, not quadratic, time.
        self._parts: list[bytes] = []
        self._size = 0
        self._cr = False  # the last chunk ended with CR: a leading LF belongs to it
        self._max = max_line
        self.consumed = 0

    def split(self, chunk: bytes) -> list[bytes]:
        if self._cr:
            self._cr = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
                self.consumed += 1
        if not chunk:
            return []
        self.consumed += len(chunk)
        if 0x0A not in chunk and 0x0D not in chunk:
            self._parts.append(chunk)
            self._size += len(chunk)
            self._check()
            return []
        if self._parts:
            self._parts.append(chunk)
            buf = b"".join(self._parts)
        else:
            buf = chunk
        # bytes.splitlines breaks at LF, CR and CRLF and nowhere else: the
        # event-stream rule exactly, in one pass.
        lines = buf.splitlines()
        last = buf[-1]
        if last == 0x0A or last == 0x0D:
            self._cr = last == 0x0D
            self._parts = []
            self._size = 0
            return lines
        tail = lines.pop()  # not empty: the buffer does not end with a terminator
        self._parts = [tail]
        self._size = len(tail)
        self._check()
        return lines

    def _check(self) -> None:
        if self._size > self._max:
            raise MalformedStreamError(
                f"a line of the response body exceeds {self._max} bytes without ending"
            )

    def rest(self) -> bytes:
        tail = b"".join(self._parts)
        self._parts = []
        self._size = 0
        return tail


class SSEDecoder:
    """Incremental WHATWG event-stream decoder: bytes in, :class:`SSEEvent` out.

    Call :meth:`feed` with each piece of the body and :meth:`close` at its
    end.  ``last_event_id`` and ``retry`` hold the stream's current values;
    :attr:`unterminated` is how many bytes of an event the body cut off
    (non-zero only after :meth:`close`).
    """

    def __init__(self, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> None:
        self._lines = _Lines(max_event_bytes)
        self._max = max_event_bytes
        self._bom_pending = True
        self._head = b""
        self._event = b""
        self._data: list[bytes] = []
        # Bytes of the event so far; every field line adds at least one, so
        # non-zero means an event has started (comments and blank lines add none).
        self._size = 0
        # Event names repeat (a dozen per provider): each is decoded once.
        self._names: dict[bytes, str] = {b"": ""}
        self.last_event_id = ""
        self.retry: int | None = None
        self.unterminated = 0
        self.comments = 0
        self.failure: MalformedStreamError | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Decode one piece of the body; return the events it completed.

        A framing fault (bytes that are not UTF-8, an oversized event) ends
        decoding: this call returns the events completed before it and sets
        :attr:`failure`; any later call raises it.
        """
        if self.failure is not None:
            raise self.failure
        if self._bom_pending:
            chunk = self._head + chunk
            if len(chunk) < 3 and _BOM.startswith(chunk):
                self._head = chunk  # could still be a BOM split across pieces
                return []
            self._bom_pending = False
            self._head = b""
            if chunk.startswith(_BOM):
                chunk = chunk[3:]
        out: list[SSEEvent] = []
        if not chunk:
            return out
        splitter = self._lines
        # The hot path, one call per network read: ``data:`` and ``event:``
        # lines and blank lines are handled here, on locals; every other line
        # goes through :meth:`_field`.  The state is written back before any
        # call that reads it and at the end (also after a fault, though a
        # fault ends decoding anyway).
        data, event, size = self._data, self._event, self._size
        limit = self._max
        append = out.append
        try:
            if not splitter._parts and not splitter._cr and chunk[-1] == 0x0A:
                # The common read, whole lines ending in LF or CRLF: nothing
                # is carried over either way, so it is split here.
                splitter.consumed += len(chunk)
                lines = chunk.splitlines()
            else:
                lines = splitter.split(chunk)
            for line in lines:
                if line:
                    # Every provider writes "name: value"; without the space,
                    # or for any other field, the general rule applies.  (The
                    # head is "data" exactly when the line starts "data: ";
                    # one partition is cheaper than two startswith calls.)
                    head, _, value = line.partition(b": ")
                    if head == b"data":
                        data.append(value)
                    elif head == b"event":
                        event = value
                    else:
                        self._data, self._event, self._size = data, event, size
                        self._field(line)
                        data, event, size = self._data, self._event, self._size
                        continue
                    size += len(line) + 1
                    if size > limit:
                        raise MalformedStreamError(
                            f"an event of the response exceeds {limit} bytes"
                        )
                elif size:
                    if data:
                        name = self._names.get(event)
                        if name is None:
                            name = self._name(event)
                        joined = data[0] if len(data) == 1 else b"\n".join(data)
                        try:
                            text = joined.decode()
                        except UnicodeDecodeError:
                            text = _utf8(joined, splitter.consumed)
                        append(_event(SSEEvent, (name, text, self.last_event_id, self.retry)))
                        data = []
                    event = b""
                    size = 0
        except MalformedStreamError as exc:
            self.failure = exc  # the events before the fault are still returned
        finally:
            self._data, self._event, self._size = data, event, size
        return out

    def close(self) -> list[SSEEvent]:
        """The body ended.  An event not ended by a blank line is discarded,
        as the standard says; its size is kept in :attr:`unterminated`."""
        if self.failure is not None:
            raise self.failure
        self._head = b""  # at most an unfinished BOM, which is not content
        self._bom_pending = False
        tail = self._lines.rest()
        self.unterminated = len(tail) + self._size
        self._reset()
        return []

    # -- internals -----------------------------------------------------------

    def _name(self, raw: bytes) -> str:
        name = _utf8(raw, self._lines.consumed)
        if len(self._names) < _MAX_NAMES:  # a hostile stream cannot grow it without bound
            self._names[raw] = name
        return name

    def _field(self, line: bytes) -> None:
        """The general rule for one non-blank line (any field, or a comment)."""
        if line[0] == 0x3A:
            self.comments += 1
            return
        colon = line.find(b":")
        if colon < 0:
            name, value = line, b""
        else:
            name = line[:colon]
            value = line[colon + 1 :]
            if value[:1] == b" ":
                value = value[1:]
        self._size += len(line) + 1
        if self._size > self._max:
            raise MalformedStreamError(f"an event of the response exceeds {self._max} bytes")
        if name == b"data":
            self._data.append(value)
        elif name == b"event":
            self._event = value
        elif name == b"id":
            if b"\0" not in value:
                self.last_event_id = _utf8(value, self._lines.consumed)
        elif name == b"retry" and value.isdigit():  # ASCII digits only, as the standard says
            self.retry = int(value)
        # Any other field name is ignored, as the standard says.

    def _reset(self) -> None:
        self._event = b""
        self._data = []
        self._size = 0


class NDJSONDecoder:
    """Incremental newline-delimited JSON framing: one frame per non-blank line.

    Lines end with LF or CRLF (a lone CR as well, for symmetry with SSE).  A
    last line without a terminator is still a frame: the parser decides
    whether it is complete JSON.
    """

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> None:
        self._lines = _Lines(max_line_bytes)
        self.unterminated = 0
        self.failure: MalformedStreamError | None = None

    def feed(self, chunk: bytes) -> list[str]:
        """Decode one piece of the body; return the lines it completed (a
        framing fault sets :attr:`failure`, as for :class:`SSEDecoder`)."""
        if self.failure is not None:
            raise self.failure
        offset = self._lines.consumed
        out: list[str] = []
        try:
            for line in self._lines.split(chunk):
                if line.strip():
                    out.append(_utf8(line, offset))
        except MalformedStreamError as exc:
            self.failure = exc
        return out

    def close(self) -> list[str]:
        """The body ended: return its last line if it had no terminator."""
        if self.failure is not None:
            raise self.failure
        tail = self._lines.rest()
        if tail.strip():
            return [_utf8(tail, self._lines.consumed)]
        return []


__all__ = ["DEFAULT_MAX_EVENT_BYTES", "NDJSONDecoder", "SSEDecoder", "SSEEvent"]
