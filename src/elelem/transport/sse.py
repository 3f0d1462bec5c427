"""The server-sent events decoder, incremental and sans-IO.

It takes raw bytes exactly as the network delivers them, in any split of
the body (inside a line, a CRLF pair or a UTF-8 sequence: it decodes whole
lines, split by :class:`~elelem.transport.lines.Lines`, and the line ends
never occur inside a UTF-8 sequence).

It follows the WHATWG event-stream rules
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
``tests/test_sse_framing.py``).
"""

from __future__ import annotations

from itertools import repeat
from operator import itemgetter
from typing import Any, Literal, overload

from elelem.errors import (
    MalformedStreamError,
)
from elelem.stream.frames import DataRun
from elelem.transport.frame_types import (
    DEFAULT_MAX_EVENT_BYTES,
    MAX_NAMES,
    SSEEvent,
    too_large,
)
from elelem.transport.frame_types import new_event as _event
from elelem.transport.lines import Lines, is_utf8, squeeze_blank_lines, utf8

_BOM = b"\xef\xbb\xbf"

# The shortest event, "data:\n\n", is seven bytes: a chunk cut into blocks
# averaging fewer is mostly blank lines.
_MIN_EVENT = 7

_first, _middle, _last = itemgetter(0), itemgetter(1), itemgetter(2)


def _plain(joined: bytes, chunk: bytes, start: int, end: int) -> bool:
    """Whether the pieces ``joined`` (a run's data, and names) hold no line
    end, and each is UTF-8: all ASCII (nearly every read), or the region
    ``chunk[start:end]`` they were cut from decodes (each piece of a region
    whose separators are ASCII does, exactly when the region does).

    A join and a byte search cost a fraction of counting the region's line
    ends (CPython counts a byte one at a time; it copies and finds at C's
    full speed)."""
    if 0x0A in joined:
        return False
    return joined.isascii() or is_utf8(chunk[start:end])


class SSEDecoder:
    """Incremental WHATWG event-stream decoder: bytes in, :class:`SSEEvent` out.

    Call :meth:`feed` with each piece of the body and :meth:`close` at its
    end.  ``last_event_id`` and ``retry`` hold the stream's current values;
    :attr:`unterminated` is how many bytes of an event the body cut off
    (non-zero only after :meth:`close`).
    """

    def __init__(self, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> None:
        self._lines = Lines(max_event_bytes)
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
                    raise too_large("an event of the response", self._max)
                splitter.consumed += len(chunk)
                value = chunk[6:-2]
                try:
                    text = value.decode()
                except UnicodeDecodeError:
                    text = utf8(value, splitter.consumed)
                out.append(_event(SSEEvent, ("", text, self.last_event_id, self.retry)))
                return out
            if (
                chunk[:7] == b"event: "
                and chunk.find(b"\n\n") == len(chunk) - 2
                and len(chunk) - 2 < self._max
                and 0x0D not in chunk
                and not (self._size or splitter._parts or splitter._cr)
            ):
                # One read, one ``event:`` + ``data:`` event (Anthropic,
                # Responses): what _named_events makes of it, inline.  One
                # line end in all is the one before ``data: ``; bytes that
                # are not UTF-8 take the general path, which places the fault.
                try:
                    text = chunk[:-2].decode()
                except UnicodeDecodeError:
                    text = ""
                head, sep, data = text.partition("\ndata: ")
                if sep and text.count("\n") == 1:
                    name = self._named.get(head)
                    if name is None:
                        name = self._named_head(head)
                    splitter.consumed += len(chunk)
                    out.append(_event(SSEEvent, (name, data, self.last_event_id, self.retry)))
                    return out
            start = 0  # where the events after one carried over begin
            if self._size or splitter._parts or splitter._cr:
                # An event is carried over from the last read: the line path
                # takes it to its end, the first blank line.
                end = chunk.find(b"\n\n")
                if end < 0:
                    self._lines_of(splitter.split(chunk), out)
                    return out
                self._lines_of(splitter.split(chunk[: end + 2]), out)
                start = end + 2
            if len(chunk) > start and not (self._size or splitter._parts or splitter._cr):
                # Between events, nothing carried over: the whole events at
                # the front of the chunk are cut out at once (the rest, an
                # event the next read completes, takes the line path).
                chunk = self._whole_events(chunk, out, runs, start)
            elif start:
                chunk = chunk[start:]
            if chunk:
                self._lines_of(splitter.split(chunk), out)
        except MalformedStreamError as exc:  # LimitExceededError included
            self.failure = exc  # the events before the fault are still returned
        return out

    def feed_runs(self, chunk: bytes) -> list[SSEEvent | DataRun]:
        """``feed(chunk, runs=True)``."""
        return self.feed(chunk, True)

    def _whole_events(
        self, chunk: bytes, out: list[Any], runs: bool = False, start: int = 0
    ) -> bytes:
        """Dispatch the whole events that ``chunk[start:]`` (read between
        events) begins with; return what follows the last of them.

        Nearly every provider event is one ``data: …`` line, or an ``event:
        …`` line and one ``data: …`` line: those are taken straight from the
        block between two blank lines.  Any other block (comments, ``id``,
        ``retry``, several data lines, no space after the colon) goes through
        the general line rule, so the outcome is the same either way.
        """
        if runs and chunk.find(b"\r", start) < 0:
            # The commonest read (a run of events, no CR), cut out of the
            # read where it lies, not out of a copy of its rest.
            end = chunk.rfind(b"\n\n", start)
            if end > start and chunk.find(b"\n\n", start, end) >= 0 and end - start < self._max:
                run = self._run_of(chunk, start, end)
                if run is not None:
                    self._lines.consumed += end + 2 - start
                    out.append(run)
                    return chunk[end + 2 :]
            runs = False  # not a run: the paths below, without trying again
        if start:
            chunk = chunk[start:]
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
            run = self._run_of(region, 0, end)
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
                    if len(heads) < MAX_NAMES:
                        heads[head] = name
                if name is None or not sep or 0x0A in value:
                    if not block:
                        continue  # blank lines after blank lines
                    self._lines_of([*block.split(b"\n"), b""], out)
                    last_id, retry = self.last_event_id, self.retry
                    continue
            if len(block) >= limit:  # the event's lines and their ends
                raise too_large("an event of the response", limit)
            try:
                text = value.decode()
            except UnicodeDecodeError:
                text = utf8(value, splitter.consumed)
            append(_event(SSEEvent, (name, text, last_id, retry)))
        return whole[end + 2 :]

    def _run_of(self, chunk: bytes, start: int, end: int) -> DataRun | None:
        """The run of the region ``chunk[start:end]`` of two or more ``data:
        …`` blocks, or of ``event: …`` + ``data: …`` blocks; None when it
        holds anything else (the tests of the two event paths of
        :meth:`_whole_events`, on bytes), or one event (a read of one event,
        as a live stream sends them, costs less as an event).

        The region is read where it lies: no copy of it but the split's
        (and one join of the pieces, to check them)."""
        if chunk.startswith(b"data: ", start):
            # Every line end is one of the separators between the events
            # when the events' data holds none.
            data = chunk[start + 6 : end].split(b"\n\ndata: ")
            if len(data) < 2 or not _plain(b"".join(data), chunk, start, end):
                return None
            return DataRun(data, self.last_event_id, self.retry)
        if not chunk.startswith(b"event: ", start):
            return None
        # Each block is "NAME\ndata: DATA" once its "event: " is cut, when it
        # holds the data line's start and no line end is left in the name
        # or the data (none two data lines, none another field).
        blocks = chunk[start + 7 : end].split(b"\n\nevent: ")
        parts = list(map(bytes.partition, blocks, repeat(b"\ndata: ")))
        if len(parts) < 2 or b"" in map(_middle, parts):
            return None
        names, data = list(map(_first, parts)), list(map(_last, parts))
        if not _plain(b"".join(names) + b"".join(data), chunk, start, end):
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
                name = self._named_head(head)
            events.append(_event(SSEEvent, (name, value, last_id, retry)))
        return events

    def _named_head(self, head: str) -> str:
        """The name of a decoded ``event: NAME`` line, kept for the next
        (a hostile stream cannot grow the cache without bound)."""
        name = head[7:]
        if len(self._named) < MAX_NAMES:
            self._named[head] = name
        return name

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
                        raise too_large("an event of the response", limit)
                elif size:
                    if data:
                        name = self._names.get(event)
                        if name is None:
                            name = self._name(event)
                        joined = data[0] if len(data) == 1 else b"\n".join(data)
                        try:
                            text = joined.decode()
                        except UnicodeDecodeError:
                            text = utf8(joined, self._lines.consumed)
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
        name = utf8(raw, self._lines.consumed)
        if len(self._names) < MAX_NAMES:  # a hostile stream cannot grow it without bound
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
            raise too_large("an event of the response", self._max)
        if name == b"data":
            self._data.append(value)
        elif name == b"event":
            self._event = value
        elif name == b"id":
            if b"\0" not in value:
                self.last_event_id = utf8(value, self._lines.consumed)
        elif name == b"retry" and value.isdigit() and len(value) <= 18:
            # ASCII digits only, as the standard says; a longer run is no
            # delay anyone means, and int() refuses one past 4,300 digits.
            self.retry = int(value)
        # Any other field name is ignored, as the standard says.

    def _reset(self) -> None:
        self._event = b""
        self._data = []
        self._size = 0


__all__ = ["SSEDecoder"]
