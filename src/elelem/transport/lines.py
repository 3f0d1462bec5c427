"""Lines of a response body, across any chunk boundary, and NDJSON, whose
frames they are.  Sans-IO.

:class:`Lines` is the incremental splitter both text framings read with
(the SSE decoder of :mod:`elelem.transport.sse` and
:class:`NDJSONDecoder`); :func:`utf8` decodes a line or names the byte that
is not UTF-8.
"""

from __future__ import annotations

import re

from elelem.errors import MalformedStreamError
from elelem.transport.frame_types import DEFAULT_MAX_EVENT_BYTES, too_large

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


def is_utf8(raw: bytes) -> bool:
    """True when ``raw`` decodes as UTF-8 (ASCII at C speed first)."""
    if raw.isascii():
        return True
    try:
        raw.decode()
    except UnicodeDecodeError:
        return False  # the caller takes the path that names the fault
    return True


def utf8(raw: bytes, offset: int) -> str:
    """``raw`` decoded, or the stream's fault naming its first ``offset`` bytes."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start]
        raise MalformedStreamError(
            f"response body is not valid UTF-8 (byte 0x{bad:02x} within its first {offset} bytes)"
        ) from None


class Lines:
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
        """The whole lines ``chunk`` completes (without their ends); an unfinished
        line is kept for the next chunk, refused past the line limit."""
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
            raise too_large("a line of the response body without its end", self._max)

    def rest(self) -> bytes:
        """The unfinished line held at the body's end, and nothing held after."""
        tail = b"".join(self._parts)
        self._parts = []
        self._size = 0
        return tail


class NDJSONDecoder:
    """Incremental newline-delimited JSON framing: one frame per non-blank line.

    Lines end with LF or CRLF (a lone CR as well, for symmetry with SSE).  A
    last line without a terminator is still a frame: the parser decides
    whether it is complete JSON.
    """

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> None:
        self._lines = Lines(max_line_bytes)
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
                    out.append(utf8(line, offset))
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
            return [utf8(tail, self._lines.consumed)]
        return []


__all__ = ["Lines", "NDJSONDecoder", "is_utf8", "squeeze_blank_lines", "utf8"]
