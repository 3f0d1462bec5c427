"""Incremental framing of response bodies: server-sent events, NDJSON and
AWS event streams.

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

Most reads hold whole events, and nearly every provider event is one
``data:`` line, or an ``event:`` line and one ``data:`` line: between
events, :meth:`SSEDecoder.feed` cuts such blocks out of the read whole (a
read of one event at once), and leaves every other block, and an event a
read cut off, to the line-by-line rule above; the events are the same
either way (``tests/test_sse_framing.py`` checks it against a plain
reading of the standard on any body and any split).  For a parser that
decodes bytes itself, :meth:`SSEDecoder.feed_runs` hands a read of nothing
but such events (``data:`` lines, or ``event:`` and ``data:`` lines) over as
one :class:`~elelem.stream.frames.DataRun` (their data's and names' bytes,
checked as UTF-8 once): no string and no event object is made per event.

``httpx2.EventSource`` was measured and not used: it keeps a leading BOM in
the first field name, dispatches events that carry no data, dispatches an
event the body cut off after a lone CR, caps events at 1 MiB by default,
insists on a ``text/event-stream`` content type, and is slower (see
``tests/test_sse_framing.py`` and the transport notes in the report).

:class:`EventStreamDecoder` reads AWS's binary
``application/vnd.amazon.eventstream`` framing (Bedrock's ConverseStream):
length-prefixed messages with typed headers and two CRC32 checksums.  It
hands the parser the same ``(event, data)`` frames the SSE decoder does.
"""

from __future__ import annotations

import re
import struct
import uuid
import zlib
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from itertools import repeat
from operator import itemgetter
from typing import Any, Literal, NamedTuple, overload

from elelem.errors import (
    LimitExceededError,
    MalformedStreamError,
    ProviderStreamError,
    StreamError,
)
from elelem.stream.frames import DataRun
from elelem.transport.rawbody import RAW_FRAMING, RawDecoder

_BOM = b"\xef\xbb\xbf"
DEFAULT_MAX_EVENT_BYTES = 64 * 1024 * 1024
"""Largest event (or unterminated line) buffered before the stream is rejected
(the driver passes its ``Limits.frame``)."""
FRAME_LIMIT = "Limits.frame"

# Three or more line-terminator bytes hold at least two line ends: a line's
# end and blank lines after it, which mean no more than one blank line does.
# A body of nothing but newlines (a decompressed bomb) then costs one C-speed
# pass instead of an empty line object per byte.
_BLANK_RUN = re.compile(rb"[\r\n]{3,}")


def squeeze_blank_lines(chunk: bytes) -> bytes:
    """``chunk`` with every run of blank lines cut to one (the same frames)."""
    if b"\n\n\n" in chunk or b"\r\r\r" in chunk or b"\n\r\n\r" in chunk:
        return _BLANK_RUN.sub(b"\n\n", chunk)
    return chunk


def _too_large(what: str, limit: int) -> LimitExceededError:
    return LimitExceededError(f"{what} exceeds {limit} bytes", limit=FRAME_LIMIT, value=limit)


_MAX_NAMES = 256
# The shortest event, "data:\n\n", is seven bytes: a chunk cut into blocks
# averaging fewer is mostly blank lines.
_MIN_EVENT = 7
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


_first, _middle, _last = itemgetter(0), itemgetter(1), itemgetter(2)


def _is_utf8(raw: bytes) -> bool:
    if raw.isascii():
        return True
    try:
        raw.decode()
    except UnicodeDecodeError:
        return False  # the caller takes the path that names the fault
    return True


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
        chunk = squeeze_blank_lines(chunk)
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
            raise _too_large("a line of the response body without its end", self._max)

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
        self._heads: dict[bytes, str] = {}  # the same, by the whole ``event: name`` line
        self._named: dict[str, str] = {}  # and by that line decoded
        self.last_event_id = ""
        self.retry: int | None = None
        self.unterminated = 0
        self.comments = 0
        self.failure: MalformedStreamError | None = None

    @overload
    def feed(self, chunk: bytes, runs: Literal[False] = False) -> list[SSEEvent]: ...

    @overload
    def feed(self, chunk: bytes, runs: Literal[True]) -> list[SSEEvent | DataRun]: ...

    def feed(self, chunk: bytes, runs: bool = False) -> list[Any]:
        """Decode one piece of the body; return the events it completed.

        With ``runs``, a read's whole events of one ``data:`` line each (two
        or more), or of an ``event:`` and a ``data:`` line each, come as one
        :class:`~elelem.stream.frames.DataRun` in their place: the same
        events, in the same order, with the same faults.

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
        out: list[Any] = []
        if not chunk:
            return out
        splitter = self._lines
        try:
            if (
                chunk[:6] == b"data: "
                and chunk.find(b"\n") == len(chunk) - 2
                and chunk[-1] == 0x0A
                and 0x0D not in chunk
                and not (self._size or splitter._parts or splitter._cr)
            ):
                # One read, one ``data:`` event (a live stream, most reads).
                if len(chunk) - 1 > self._max:
                    raise _too_large("an event of the response", self._max)
                splitter.consumed += len(chunk)
                value = chunk[6:-2]
                try:
                    text = value.decode()
                except UnicodeDecodeError:
                    text = _utf8(value, splitter.consumed)
                out.append(_event(SSEEvent, ("", text, self.last_event_id, self.retry)))
                return out
            if self._size or splitter._parts or splitter._cr:
                # An event is carried over from the last read: the line path
                # takes it to its end, the first blank line.
                end = chunk.find(b"\n\n")
                if end < 0:
                    self._lines_of(splitter.split(chunk), out)
                    return out
                self._lines_of(splitter.split(chunk[: end + 2]), out)
                chunk = chunk[end + 2 :]
            if chunk and not (self._size or splitter._parts or splitter._cr):
                # Between events, nothing carried over: the whole events at
                # the front of the chunk are cut out at once (the rest, an
                # event the next read completes, takes the line path).
                chunk = self._whole_events(chunk, out, runs)
            if chunk:
                self._lines_of(splitter.split(chunk), out)
        except MalformedStreamError as exc:  # LimitExceededError included
            self.failure = exc  # the events before the fault are still returned
        return out

    def feed_runs(self, chunk: bytes) -> list[SSEEvent | DataRun]:
        """``feed(chunk, runs=True)``."""
        return self.feed(chunk, True)

    def _whole_events(self, chunk: bytes, out: list[Any], runs: bool = False) -> bytes:
        """Dispatch the whole events that ``chunk`` (read between events)
        begins with; return what follows the last of them.

        Nearly every provider event is one ``data: …`` line, or an ``event:
        …`` line and one ``data: …`` line: those are taken straight from the
        block between two blank lines.  Any other block (comments, ``id``,
        ``retry``, several data lines, no space after the colon) goes through
        the general line rule, so the outcome is the same either way.
        """
        whole = chunk
        if 0x0D in whole:
            # CRLF ends a line as LF does; a lone CR (or one the next read may
            # pair with an LF) is left to the line path.
            whole = whole.replace(b"\r\n", b"\n")
            if 0x0D in whole:
                return chunk
        end = whole.rfind(b"\n\n")
        if end < 0:
            return chunk
        region = whole[:end]
        if runs and b"\n\n" in region and len(region) < self._max:  # two events or more
            run = self._run_of(region)
            if run is not None:
                self._lines.consumed += len(chunk) - (len(whole) - end - 2)
                out.append(run)
                return whole[end + 2 :]
        if region[:6] == b"data: " and len(region) < self._max:
            # A read of ``data: …`` lines, one per event (Chat Completions,
            # Gemini): decoded and split at C speed; it is exactly that when
            # its only line ends are the ones between the events.  No event
            # can pass the limit, and no call is made per event but the one
            # that builds it.  Bytes that are not UTF-8 take the block path
            # below, which dispatches the events before them.
            try:
                text = region.decode()
            except UnicodeDecodeError:
                text = ""
            values = text[6:].split("\n\ndata: ")
            if text and text.count("\n") == 2 * len(values) - 2:
                self._lines.consumed += len(chunk) - (len(whole) - end - 2)
                last_id, retry = self.last_event_id, self.retry
                # Built in C, no bytecode per event: the fields zipped, each
                # tuple made an SSEEvent as _event makes it.
                out += map(
                    _event,
                    repeat(SSEEvent),
                    zip(repeat(""), values, repeat(last_id), repeat(retry)),
                )
                return whole[end + 2 :]
        elif region[:7] == b"event: " and len(region) < self._max:
            events = self._named_events(region)
            if events is not None:
                self._lines.consumed += len(chunk) - (len(whole) - end - 2)
                out += events
                return whole[end + 2 :]
        blocks = whole[:end].split(b"\n\n")
        if len(blocks) * _MIN_EVENT > end + _MIN_EVENT:
            # Far more blank lines than events: a body of newlines (a
            # decompressed bomb) is squeezed in one C-speed pass first.
            whole = squeeze_blank_lines(whole)
            end = whole.rfind(b"\n\n")
            blocks = whole[:end].split(b"\n\n") if end >= 0 else []
        splitter = self._lines
        splitter.consumed += len(chunk) - (len(whole) - end - 2)
        heads, limit, append = self._heads, self._max, out.append
        last_id, retry = self.last_event_id, self.retry
        name: str | None
        for block in blocks:
            if block.startswith(b"data: ") and 0x0A not in block:
                name = ""
                value = block[6:]
            else:
                head, sep, value = block.partition(b"\ndata: ")
                name = heads.get(head)
                if name is None and sep and head.startswith(b"event: ") and 0x0A not in head:
                    name = self._name(head[7:])
                    if len(heads) < _MAX_NAMES:
                        heads[head] = name
                if name is None or not sep or 0x0A in value:
                    if not block:
                        continue  # blank lines after blank lines
                    self._lines_of([*block.split(b"\n"), b""], out)
                    last_id, retry = self.last_event_id, self.retry
                    continue
            if len(block) >= limit:  # the event's lines and their ends
                raise _too_large("an event of the response", limit)
            try:
                text = value.decode()
            except UnicodeDecodeError:
                text = _utf8(value, splitter.consumed)
            append(_event(SSEEvent, (name, text, last_id, retry)))
        return whole[end + 2 :]

    def _run_of(self, region: bytes) -> DataRun | None:
        """The run of a region of two or more ``data: …`` blocks, or of
        ``event: …`` + ``data: …`` blocks; None when it holds anything else
        (the tests of the two event paths of :meth:`_whole_events`, on
        bytes), or one event (a read of one event, as a live stream sends
        them, costs less as an event)."""
        if region[:6] == b"data: ":
            # Every line end is one of the separators between the events
            # when the events' data holds none.
            data = region[6:].split(b"\n\ndata: ")
            joined = b"".join(data)
            if len(data) < 2 or 0x0A in joined or not _is_utf8(joined):
                return None
            return DataRun(data, self.last_event_id, self.retry)
        if region[:7] != b"event: ":
            return None
        # Each block is "NAME\ndata: DATA" once its "event: " is cut, when it
        # holds the data line's start and no line end is left in the name
        # or the data (none two data lines, none another field).
        parts = list(map(bytes.partition, region[7:].split(b"\n\nevent: "), repeat(b"\ndata: ")))
        if len(parts) < 2 or b"" in map(_middle, parts):
            return None
        names, data = list(map(_first, parts)), list(map(_last, parts))
        joined = b"".join(names) + b"".join(data)
        if 0x0A in joined or not _is_utf8(joined):
            return None
        return DataRun(data, self.last_event_id, self.retry, names)

    def _named_events(self, region: bytes) -> list[SSEEvent] | None:
        """The events of a region of ``event: …`` + ``data: …`` blocks
        (Anthropic, Responses), or None when it holds anything else.

        Every block holds exactly one line end when the region holds three
        per block less two (the blank lines between blocks hold the rest),
        and a block that is split by ``\ndata: `` holds one at least.
        """
        try:
            text = region.decode()
        except UnicodeDecodeError:
            return None  # the block path dispatches the events before the fault
        blocks = text.split("\n\n")
        if text.count("\n") != 3 * len(blocks) - 2:
            return None
        names, last_id, retry = self._named, self.last_event_id, self.retry
        events = []
        for block in blocks:
            head, sep, value = block.partition("\ndata: ")
            # Every block must be split, a name seen before too: a block of a
            # name alone beside one of two data lines balances the count.
            if not sep:
                return None
            name = names.get(head)
            if name is None:
                if head[:7] != "event: ":
                    return None
                name = head[7:]
                if len(names) < _MAX_NAMES:
                    names[head] = name
            events.append(_event(SSEEvent, (name, value, last_id, retry)))
        return events

    def _lines_of(self, lines: list[bytes], out: list[SSEEvent]) -> None:
        """Apply the event-stream rule to whole ``lines`` (no terminators)."""
        # ``data:`` and ``event:`` lines and blank lines are handled here, on
        # locals; every other line goes through :meth:`_field`.  The state is
        # written back before any call that reads it and at the end (also
        # after a fault, though a fault ends decoding anyway).
        data, event, size = self._data, self._event, self._size
        limit = self._max
        append = out.append
        try:
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
                        raise _too_large("an event of the response", limit)
                elif size:
                    if data:
                        name = self._names.get(event)
                        if name is None:
                            name = self._name(event)
                        joined = data[0] if len(data) == 1 else b"\n".join(data)
                        try:
                            text = joined.decode()
                        except UnicodeDecodeError:
                            text = _utf8(joined, self._lines.consumed)
                        append(_event(SSEEvent, (name, text, self.last_event_id, self.retry)))
                        data = []
                    event = b""
                    size = 0
        finally:
            self._data, self._event, self._size = data, event, size

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
            raise _too_large("an event of the response", self._max)
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
            self.unterminated = len(tail)
            return [_utf8(tail, self._lines.consumed)]
        return []


# -- AWS event stream ---------------------------------------------------------

HeaderValue = bool | int | bytes | str | datetime | uuid.UUID
"""A decoded event-stream header value.  ``byte``, ``short``, ``int`` and
``long`` headers are ints; ``timestamp`` a UTC datetime; ``uuid`` a UUID."""

_PRELUDE = struct.Struct(">III")  # total length, headers length, prelude CRC
_PRELUDE_BYTES = _PRELUDE.size
_MESSAGE_OVERHEAD = _PRELUDE_BYTES + 4  # the prelude and the message CRC
_U16 = struct.Struct(">H")
_U32 = struct.Struct(">I")
# Header value type -> (name, fixed width or None for u16-length-prefixed).
_HEADER_TYPES: dict[int, tuple[str, int | None]] = {
    0: ("bool-true", 0),
    1: ("bool-false", 0),
    2: ("byte", 1),
    3: ("short", 2),
    4: ("int", 4),
    5: ("long", 8),
    6: ("bytes", None),
    7: ("string", None),
    8: ("timestamp", 8),
    9: ("uuid", 16),
}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class EventStreamMessage(NamedTuple):
    """One whole event-stream message: its headers (by name) and raw payload."""

    headers: Mapping[str, HeaderValue]
    payload: bytes


def _header_value(kind: int, raw: bytes) -> HeaderValue:
    if kind == 0:
        return True
    if kind == 1:
        return False
    if kind in (2, 3, 4, 5):
        return int.from_bytes(raw, "big", signed=True)
    if kind == 6:
        return raw
    if kind == 8:
        # Milliseconds since the epoch; timedelta keeps dates datetime can hold.
        return _EPOCH + timedelta(milliseconds=int.from_bytes(raw, "big", signed=True))
    return uuid.UUID(bytes=raw)


def decode_headers(raw: bytes, where: str = "an event-stream message") -> dict[str, HeaderValue]:
    """The headers section ``raw`` of one message, by name.

    A header that overruns the section, an unknown value type, a name or
    string value that is not UTF-8, or a name given twice raises
    :class:`~elelem.errors.MalformedStreamError` naming ``where``.
    """
    headers: dict[str, HeaderValue] = {}
    pos, end = 0, len(raw)
    while pos < end:
        size = raw[pos]
        pos += 1
        if size == 0 or pos + size + 1 > end:
            raise MalformedStreamError(f"{where}: a header name overruns the headers section")
        name_raw = raw[pos : pos + size]
        pos += size
        try:
            name = name_raw.decode("utf-8")
        except UnicodeDecodeError:
            raise MalformedStreamError(f"{where}: a header name is not UTF-8") from None
        kind = raw[pos]
        pos += 1
        spec = _HEADER_TYPES.get(kind)
        if spec is None:
            raise MalformedStreamError(f"{where}: header {name!r} has unknown value type {kind}")
        type_name, width = spec
        if width is None:
            if pos + 2 > end:
                raise MalformedStreamError(
                    f"{where}: header {name!r} ({type_name}) overruns the headers section"
                )
            (width,) = _U16.unpack_from(raw, pos)
            pos += 2
        if pos + width > end:
            raise MalformedStreamError(
                f"{where}: header {name!r} ({type_name}) overruns the headers section"
            )
        value_raw = raw[pos : pos + width]
        pos += width
        if name in headers:
            raise MalformedStreamError(f"{where}: header {name!r} appears twice")
        if kind == 7:
            try:
                headers[name] = value_raw.decode("utf-8")
            except UnicodeDecodeError:
                raise MalformedStreamError(f"{where}: header {name!r} is not UTF-8") from None
        else:
            try:
                headers[name] = _header_value(kind, value_raw)
            except OverflowError:
                raise MalformedStreamError(
                    f"{where}: header {name!r} is a timestamp out of range"
                ) from None
    return headers


class EventStreamDecoder:
    """Incremental ``application/vnd.amazon.eventstream`` decoder: bytes in, frames out.

    Each message is a prelude (total length, headers length: u32 big-endian;
    a CRC32 of those eight bytes), the headers, the payload and a CRC32 of
    everything before it.  Both checksums are verified; the prelude's as soon
    as its twelve bytes arrive, so a corrupt length is reported at once
    rather than waited on.  The body may be split anywhere.

    :meth:`feed` returns frames in the SSE decoder's form, so the driver hands
    them to a parser the same way: a message of ``:message-type`` ``event``
    becomes ``SSEEvent(:event-type, payload)``; an ``exception`` message
    becomes ``SSEEvent(:exception-type, payload)``, which the shape's parser
    maps to its typed error (Bedrock's exception names all end in
    ``Exception``).  An ``error`` message (``:error-code``,
    ``:error-message``) is a :class:`~elelem.errors.ProviderStreamError`.
    A bad checksum, an impossible length, a malformed header, a payload that
    is not UTF-8 or an unknown message type is a
    :class:`~elelem.errors.MalformedStreamError`.  As with the SSE decoder, a
    fault ends decoding: the frames before it are returned, the fault is kept
    in :attr:`failure` and raised by any later call.
    """

    def __init__(self, max_message_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> None:
        self._buf = bytearray()
        self._max = max_message_bytes
        self._need = 0  # total length of the message being buffered, once its prelude checked
        # A stream repeats a handful of header sections (one per event type):
        # each is decoded and checked once, then its frame name is looked up.
        self._names: dict[bytes, str] = {}
        self.messages = 0
        self.consumed = 0
        self.unterminated = 0
        self.failure: StreamError | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Decode one piece of the body; return the frames it completed."""
        if self.failure is not None:
            raise self.failure
        out: list[SSEEvent] = []
        buf = self._buf
        buf += chunk
        try:
            while True:
                need = self._need
                if not need:
                    if len(buf) < _PRELUDE_BYTES:
                        break
                    need = self._need = self._prelude(buf)
                if len(buf) < need:
                    break
                raw = bytes(buf[:need])
                del buf[:need]
                self._need = 0
                out.append(self._frame(raw))
                self.consumed += need
        except StreamError as exc:
            self.failure = exc
        return out

    def close(self) -> list[SSEEvent]:
        """The body ended: the bytes of a message it cut off are counted in
        :attr:`unterminated` (the driver reports them) and discarded."""
        if self.failure is not None:
            raise self.failure
        self.unterminated = len(self._buf)
        self._buf.clear()
        self._need = 0
        return []

    def decode_message(self, raw: bytes) -> EventStreamMessage:
        """One whole message ``raw`` (prelude to message CRC), both CRCs verified."""
        total = self._prelude(raw)
        if total != len(raw):
            raise MalformedStreamError(
                f"{self._where()}: its prelude gives {total} bytes but it has {len(raw)}"
            )
        headers_end = self._check(raw)
        headers = decode_headers(raw[_PRELUDE_BYTES:headers_end], self._where())
        return EventStreamMessage(headers, raw[headers_end : total - 4])

    # -- internals -----------------------------------------------------------

    def _where(self) -> str:
        return f"event-stream message {self.messages + 1} (at byte {self.consumed})"

    def _prelude(self, buf: bytes | bytearray) -> int:
        """The checked total length of the message ``buf`` starts with."""
        total, headers, crc = _PRELUDE.unpack_from(buf)
        actual = zlib.crc32(memoryview(buf)[:8])
        if actual != crc:
            raise MalformedStreamError(
                f"{self._where()}: prelude CRC mismatch (sent 0x{crc:08x}, computed 0x{actual:08x})"
            )
        if total < _MESSAGE_OVERHEAD or headers > total - _MESSAGE_OVERHEAD:
            raise MalformedStreamError(
                f"{self._where()}: impossible lengths (total {total} bytes, headers {headers})"
            )
        if total > self._max:
            raise _too_large(f"{self._where()}: a message of {total} bytes", self._max)
        return int(total)

    def _check(self, raw: bytes) -> int:
        """Verify the message CRC of ``raw`` (its prelude checked); the end of its headers."""
        total = len(raw)
        (expected,) = _U32.unpack_from(raw, total - 4)
        actual = zlib.crc32(memoryview(raw)[: total - 4])
        if actual != expected:
            raise MalformedStreamError(
                f"{self._where()}: message CRC mismatch "
                f"(sent 0x{expected:08x}, computed 0x{actual:08x})"
            )
        return _PRELUDE_BYTES + int(_U32.unpack_from(raw, 4)[0])

    def _frame(self, raw: bytes) -> SSEEvent:
        """The frame of one whole message ``raw`` whose prelude was checked."""
        headers_end = self._check(raw)
        head = raw[_PRELUDE_BYTES:headers_end]
        payload = raw[headers_end:-4]
        name = self._names.get(head)
        if name is None:
            name = self._name(decode_headers(head, self._where()), payload)
            if len(self._names) < _MAX_NAMES:  # a hostile stream cannot grow it without bound
                self._names[head] = name
        try:
            data = payload.decode("utf-8")
        except UnicodeDecodeError:
            raise MalformedStreamError(
                f"{self._where()}: the {name} payload is not UTF-8"
            ) from None
        self.messages += 1
        return _event(SSEEvent, (name, data, "", None))

    def _name(self, headers: Mapping[str, HeaderValue], payload: bytes) -> str:
        """The frame name a message with ``headers`` goes under, or its error."""
        where = self._where()
        kind = headers.get(":message-type")
        if kind == "error":
            code, text = headers.get(":error-code"), headers.get(":error-message")
            code_s = code if isinstance(code, str) else None
            text_s = text if isinstance(text, str) else None
            raise ProviderStreamError(
                f"event-stream error {code_s or 'with no code'}: {text_s or 'no message'}",
                body=payload or None,
                provider_type=code_s,
                provider_message=text_s,
            )
        if kind == "event":
            name_header = ":event-type"
        elif kind == "exception":
            name_header = ":exception-type"
        else:
            raise MalformedStreamError(
                f"{where}: unknown :message-type {kind!r}"
                if kind is not None
                else f"{where}: no :message-type header",
                retryable=False,
            )
        name = headers.get(name_header)
        if not isinstance(name, str) or not name:
            raise MalformedStreamError(f"{where}: {kind} message has no {name_header} header")
        return name


NDJSON_TYPES = frozenset({"application/x-ndjson", "application/ndjson", "application/jsonl"})
EVENTSTREAM_TYPE = "application/vnd.amazon.eventstream"


def decoder_for(
    framing: str, content_type: str, frame: int = DEFAULT_MAX_EVENT_BYTES
) -> SSEDecoder | NDJSONDecoder | EventStreamDecoder | RawDecoder:
    """The body decoder for a shape's ``framing`` and a body's content type
    (lower-case, no parameters); ``frame`` bounds one event.

    A ``raw`` body (a streamed file: audio) is read as it comes, whatever its
    content type says.

    The content type wins where it names a framing: AWS's binary event
    stream, or NDJSON.  Otherwise the shape's framing decides, except that
    an event-stream shape served ``text/event-stream`` gets SSE: that is how
    decoded events are replayed (recordings, proxies).
    """
    if framing == RAW_FRAMING:
        return RawDecoder()
    if content_type == EVENTSTREAM_TYPE:
        return EventStreamDecoder(frame)
    if content_type in NDJSON_TYPES:
        return NDJSONDecoder(frame)
    if framing == "sse":
        return SSEDecoder(frame)
    if framing == "eventstream":
        if content_type == "text/event-stream":
            return SSEDecoder(frame)
        return EventStreamDecoder(frame)
    return NDJSONDecoder(frame)


__all__ = [
    "DEFAULT_MAX_EVENT_BYTES",
    "EVENTSTREAM_TYPE",
    "NDJSON_TYPES",
    "EventStreamDecoder",
    "EventStreamMessage",
    "HeaderValue",
    "NDJSONDecoder",
    "SSEDecoder",
    "SSEEvent",
    "decode_headers",
    "decoder_for",
]
