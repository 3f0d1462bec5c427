"""Incremental framing of response bodies, and which decoder a body gets.

Each decoder takes raw bytes exactly as the network delivers them, in any
split, and hands the shape's parser frames: server-sent events
(:class:`~elelem.transport.sse.SSEDecoder`), NDJSON lines
(:class:`~elelem.transport.lines.NDJSONDecoder`, over the line splitter
both text framings share), AWS's binary ``application/vnd.amazon.eventstream``
framing (:class:`~elelem.transport.eventstream.EventStreamDecoder`, Bedrock's
ConverseStream: length-prefixed messages with typed headers and two CRC32
checksums, handed over as the same ``(event, data)`` frames), or a raw
body read as it comes (:class:`~elelem.transport.rawbody.RawDecoder`).
:func:`decoder_for` picks one from the shape's framing and the body's
content type; this module also names them all, for the driver.
"""

from __future__ import annotations

from elelem.transport.eventstream import (
    EventStreamDecoder,
    EventStreamMessage,
    HeaderValue,
    decode_headers,
)
from elelem.transport.frame_types import (
    DEFAULT_MAX_EVENT_BYTES,
    SSEEvent,
)
from elelem.transport.lines import NDJSONDecoder
from elelem.transport.rawbody import RAW_FRAMING, RawDecoder
from elelem.transport.sse import SSEDecoder

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
