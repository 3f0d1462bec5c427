"""AWS's binary ``application/vnd.amazon.eventstream`` framing (Bedrock's
ConverseStream): length-prefixed messages with typed headers and two CRC32
checksums.  :class:`EventStreamDecoder` hands the parser the same
``(event, data)`` frames the SSE decoder of :mod:`elelem.transport.sse`
does.  Sans-IO.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

from elelem.errors import MalformedStreamError, ProviderStreamError, StreamError
from elelem.transport.frame_types import (
    DEFAULT_MAX_EVENT_BYTES,
    MAX_NAMES,
    SSEEvent,
    too_large,
)
from elelem.transport.frame_types import new_event as _event

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
            raise too_large(f"{self._where()}: a message of {total} bytes", self._max)
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
            if len(self._names) < MAX_NAMES:  # a hostile stream cannot grow it without bound
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


__all__ = ["EventStreamDecoder", "EventStreamMessage", "HeaderValue", "decode_headers"]
