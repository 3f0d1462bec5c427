"""The AWS event-stream decoder (``application/vnd.amazon.eventstream``): messages
built by a small encoder written here from the published layout, split anywhere."""

from __future__ import annotations

import struct
import uuid
import zlib
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elelem.errors import MalformedStreamError, ProviderStreamError
from elelem.transport.framing import (
    EventStreamDecoder,
    EventStreamMessage,
    SSEEvent,
    decode_headers,
)

# -- a test-side encoder (prelude, headers, payload, two CRC32s) ---------------

Header = tuple[str, int, bytes]
"""A header as it goes on the wire: name, value type, encoded value."""


def string(name: str, value: str) -> Header:
    raw = value.encode("utf-8")
    return (name, 7, struct.pack(">H", len(raw)) + raw)


def encode_headers(headers: list[Header]) -> bytes:
    out = b""
    for name, kind, value in headers:
        raw = name.encode("utf-8")
        out += bytes([len(raw)]) + raw + bytes([kind]) + value
    return out


def encode_message(headers: list[Header], payload: bytes) -> bytes:
    """One event-stream message: the layout in AWS's event-stream encoding docs."""
    head = encode_headers(headers)
    total = 12 + len(head) + len(payload) + 4
    prelude = struct.pack(">II", total, len(head))
    body = prelude + struct.pack(">I", zlib.crc32(prelude)) + head + payload
    return body + struct.pack(">I", zlib.crc32(body))


def event(name: str, payload: str) -> bytes:
    """An ``event`` message as Bedrock sends one."""
    headers = [
        string(":event-type", name),
        string(":content-type", "application/json"),
        string(":message-type", "event"),
    ]
    return encode_message(headers, payload.encode("utf-8"))


def exception(name: str, payload: str) -> bytes:
    headers = [
        string(":exception-type", name),
        string(":content-type", "application/json"),
        string(":message-type", "exception"),
    ]
    return encode_message(headers, payload.encode("utf-8"))


def decode_all(body: bytes) -> tuple[list[SSEEvent], EventStreamDecoder]:
    decoder = EventStreamDecoder()
    frames = decoder.feed(body)
    frames += decoder.close()
    return frames, decoder


# -- published vectors -----------------------------------------------------------

# The two messages in the documentation of the Elixir ``event_stream`` package
# (hex.pm), an encoder written independently of ours: a payload alone, and the
# same payload with a ``content-type`` string header.
PUBLISHED_PLAIN = (
    bytes([0, 0, 0, 30, 0, 0, 0, 0, 186, 242, 246, 138])
    + b'{"foo": "bar"}'
    + bytes([174, 114, 88, 228])
)
PUBLISHED_HEADER = (
    bytes([0, 0, 0, 62, 0, 0, 0, 32, 64, 93, 249, 70, 12])
    + b"content-type"
    + bytes([7, 0, 16])
    + b"application/json"
    + b'{"foo": "bar"}'
    + bytes([111, 162, 191, 59])
)


def test_published_messages_decode_and_match_our_encoder() -> None:
    decoder = EventStreamDecoder()
    assert decoder.decode_message(PUBLISHED_PLAIN) == EventStreamMessage({}, b'{"foo": "bar"}')
    assert decoder.decode_message(PUBLISHED_HEADER) == EventStreamMessage(
        {"content-type": "application/json"}, b'{"foo": "bar"}'
    )
    assert encode_message([], b'{"foo": "bar"}') == PUBLISHED_PLAIN
    assert (
        encode_message([string("content-type", "application/json")], b'{"foo": "bar"}')
        == PUBLISHED_HEADER
    )


def test_every_header_value_type() -> None:
    the_uuid = uuid.UUID("12345678-1234-5678-9abc-def012345678")
    headers = [
        ("t", 0, b""),
        ("f", 1, b""),
        ("byte", 2, b"\xff"),
        ("short", 3, struct.pack(">h", -2)),
        ("int", 4, struct.pack(">i", 70000)),
        ("long", 5, struct.pack(">q", -(2**40))),
        ("bytes", 6, struct.pack(">H", 3) + b"\x00\x01\xfe"),
        ("str", 7, struct.pack(">H", 4) + "héj".encode()),
        ("ts", 8, struct.pack(">q", 1_700_000_000_123)),
        ("id", 9, the_uuid.bytes),
    ]
    assert decode_headers(encode_headers(headers)) == {
        "t": True,
        "f": False,
        "byte": -1,
        "short": -2,
        "int": 70000,
        "long": -(2**40),
        "bytes": b"\x00\x01\xfe",
        "str": "héj",
        "ts": datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=UTC),
        "id": the_uuid,
    }


def test_events_and_exceptions_become_frames() -> None:
    body = (
        event("messageStart", '{"role":"assistant"}')
        + event("contentBlockDelta", '{"contentBlockIndex":0,"delta":{"text":"hé"}}')
        + exception("throttlingException", '{"message":"slow down"}')
    )
    frames, decoder = decode_all(body)
    assert frames == [
        SSEEvent("messageStart", '{"role":"assistant"}'),
        SSEEvent("contentBlockDelta", '{"contentBlockIndex":0,"delta":{"text":"hé"}}'),
        SSEEvent("throttlingException", '{"message":"slow down"}'),
    ]
    assert (decoder.messages, decoder.consumed, decoder.unterminated) == (3, len(body), 0)


messages = st.lists(
    st.tuples(
        st.sampled_from(["messageStart", "contentBlockDelta", "metadata", "newEvent"]),
        st.text(max_size=40),
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(messages, st.data())
def test_any_split_gives_the_same_frames(items: list[tuple[str, str]], data: st.DataObject) -> None:
    body = b"".join(event(name, payload) for name, payload in items)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=12), label="cuts"))
    decoder = EventStreamDecoder()
    frames: list[SSEEvent] = []
    start = 0
    for cut in [*cuts, len(body)]:
        frames += decoder.feed(body[start:cut])
        start = cut
    frames += decoder.close()
    assert frames == [SSEEvent(name, payload) for name, payload in items]
    assert decoder.unterminated == 0


# -- faults ----------------------------------------------------------------------


def fails(body: bytes) -> tuple[list[SSEEvent], MalformedStreamError]:
    """Frames before the fault, and the fault (kept, and raised by the next call)."""
    decoder = EventStreamDecoder()
    frames = decoder.feed(body)
    assert isinstance(decoder.failure, MalformedStreamError)
    with pytest.raises(MalformedStreamError) as info:
        decoder.feed(b"")
    assert info.value is decoder.failure
    return frames, decoder.failure


GOOD = event("messageStart", '{"role":"assistant"}')


def test_bad_prelude_crc() -> None:
    bad = bytearray(event("metadata", "{}"))
    bad[8] ^= 0x01
    frames, error = fails(GOOD + bytes(bad))
    assert frames == [SSEEvent("messageStart", '{"role":"assistant"}')]
    sent = struct.unpack(">I", bad[8:12])[0]
    assert error.message == (
        f"event-stream message 2 (at byte {len(GOOD)}): prelude CRC mismatch "
        f"(sent 0x{sent:08x}, computed 0x{sent ^ 0x01000000:08x})"
    )
    assert error.retryable is True


def test_bad_prelude_crc_is_reported_before_the_body_arrives() -> None:
    # A corrupt length must not make the decoder wait for gigabytes.
    bad = bytearray(GOOD[:12])
    bad[0] = 0x7F
    decoder = EventStreamDecoder()
    assert decoder.feed(bytes(bad)) == []
    assert isinstance(decoder.failure, MalformedStreamError)
    assert "prelude CRC mismatch" in decoder.failure.message


def test_bad_message_crc() -> None:
    bad = bytearray(GOOD)
    bad[20] ^= 0xFF  # inside the headers
    sent = struct.unpack(">I", bad[-4:])[0]
    computed = zlib.crc32(bytes(bad[:-4]))
    frames, error = fails(bytes(bad))
    assert frames == []
    assert error.message == (
        f"event-stream message 1 (at byte 0): message CRC mismatch "
        f"(sent 0x{sent:08x}, computed 0x{computed:08x})"
    )


def _prelude(total: int, headers: int) -> bytes:
    head = struct.pack(">II", total, headers)
    return head + struct.pack(">I", zlib.crc32(head))


@pytest.mark.parametrize(("total", "headers"), [(15, 0), (0, 0), (20, 5), (2**32 - 1, 2**32 - 1)])
def test_impossible_lengths(total: int, headers: int) -> None:
    _, error = fails(_prelude(total, headers))
    assert error.message == (
        f"event-stream message 1 (at byte 0): impossible lengths "
        f"(total {total} bytes, headers {headers})"
    )


def test_a_message_over_the_limit() -> None:
    decoder = EventStreamDecoder(max_message_bytes=100)
    assert decoder.feed(_prelude(101, 0)) == []
    assert isinstance(decoder.failure, MalformedStreamError)
    assert decoder.failure.message == (
        "event-stream message 1 (at byte 0): a message of 101 bytes exceeds 100 bytes "
        "(limit Limits.frame = 100)"
    )


def test_truncated_message_is_unterminated_at_close() -> None:
    body = GOOD + GOOD[:-5]
    frames, decoder = decode_all(body)
    assert frames == [SSEEvent("messageStart", '{"role":"assistant"}')]
    assert decoder.unterminated == len(GOOD) - 5
    assert decoder.failure is None


def test_unknown_header_type() -> None:
    body = encode_message([string(":message-type", "event"), ("odd", 12, b"x")], b"{}")
    _, error = fails(body)
    assert error.message == (
        "event-stream message 1 (at byte 0): header 'odd' has unknown value type 12"
    )


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ([("s", 7, b"\x00\x09abc")], "header 's' (string) overruns the headers section"),
        ([("n", 4, b"\x00\x01")], "header 'n' (int) overruns the headers section"),
        ([("n", 7, b"\x00")], "header 'n' (string) overruns the headers section"),
        ([("s", 7, b"\x00\x01\xff")], "header 's' is not UTF-8"),
        ([string("a", "1"), string("a", "2")], "header 'a' appears twice"),
        ([("ts", 8, struct.pack(">q", 2**62))], "header 'ts' is a timestamp out of range"),
    ],
)
def test_malformed_headers(headers: list[Header], expected: str) -> None:
    _, error = fails(encode_message(headers, b"{}"))
    assert error.message == f"event-stream message 1 (at byte 0): {expected}"


def test_header_name_overrun() -> None:
    with pytest.raises(MalformedStreamError) as info:
        decode_headers(b"\x09ab")
    assert info.value.message == (
        "an event-stream message: a header name overruns the headers section"
    )


@pytest.mark.parametrize(
    ("headers", "expected", "retryable"),
    [
        ([string(":message-type", "ping")], "unknown :message-type 'ping'", False),
        ([string(":event-type", "x")], "no :message-type header", False),
        ([string(":message-type", "event")], "event message has no :event-type header", True),
        (
            [string(":message-type", "exception")],
            "exception message has no :exception-type header",
            True,
        ),
    ],
)
def test_message_types(headers: list[Header], expected: str, retryable: bool) -> None:
    _, error = fails(encode_message(headers, b"{}"))
    assert error.message == f"event-stream message 1 (at byte 0): {expected}"
    assert error.retryable is retryable


def test_payload_not_utf8() -> None:
    _, error = fails(
        encode_message([string(":message-type", "event"), string(":event-type", "m")], b"\xff")
    )
    assert error.message == "event-stream message 1 (at byte 0): the m payload is not UTF-8"


def test_error_message_is_a_provider_error() -> None:
    body = GOOD + encode_message(
        [
            string(":message-type", "error"),
            string(":error-code", "InternalFailure"),
            string(":error-message", "try again"),
        ],
        b"",
    )
    decoder = EventStreamDecoder()
    assert decoder.feed(body) == [SSEEvent("messageStart", '{"role":"assistant"}')]
    error = decoder.failure
    assert isinstance(error, ProviderStreamError)
    assert (error.message, error.provider_type, error.provider_message, error.body) == (
        "event-stream error InternalFailure: try again",
        "InternalFailure",
        "try again",
        None,
    )
    with pytest.raises(ProviderStreamError):
        decoder.close()


def test_a_repeated_header_section_is_still_checked_each_time() -> None:
    # Header sections are decoded once per distinct section; each message's
    # CRC and payload are still checked.
    bad_crc = bytearray(GOOD)
    bad_crc[-1] ^= 0x01
    frames, error = fails(GOOD + GOOD + bytes(bad_crc))
    assert frames == [SSEEvent("messageStart", '{"role":"assistant"}')] * 2
    assert error.message.startswith(
        f"event-stream message 3 (at byte {2 * len(GOOD)}): message CRC mismatch"
    )
    headers = [string(":message-type", "event"), string(":event-type", "m")]
    frames, error = fails(encode_message(headers, b"{}") + encode_message(headers, b"\xc3"))
    assert frames == [SSEEvent("m", "{}")]
    assert error.message == (
        f"event-stream message 2 (at byte {len(encode_message(headers, b'{}'))}): "
        "the m payload is not UTF-8"
    )
