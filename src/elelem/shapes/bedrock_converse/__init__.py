"""Amazon Bedrock's Converse API (``/model/{id}/converse-stream``), sans-IO.

``SHAPE`` holds the request encoder, the event parser, the non-streaming
response mapping and the error classifier.  It reads *decoded* Converse
events: one JSON event per frame, its type given as the frame's event name
or as the object's single key (``{"contentBlockDelta": {...}}``), which is
how recordings such as the corpus's keep them.

**Framing.**  A live Bedrock stream is AWS's binary
``application/vnd.amazon.eventstream`` framing, so ``framing`` is
``"eventstream"``: the transport's
:class:`~elelem.transport.framing.EventStreamDecoder` verifies each
message's checksums and hands the parser ``(event type, JSON payload)``; an
exception message arrives under its exception type.  Recordings keep decoded
events as SSE ``data:`` frames (the one-key union), and the driver reads a
``text/event-stream`` body of this shape as SSE, so both reach the same parser.
The catalog's ``bedrock`` provider authenticates with an Amazon Bedrock API
key (``Authorization: Bearer``) when one is set, else signs each request
with AWS Signature Version 4 from the AWS credential variables
(:class:`~elelem.transport.sigv4.SigV4Signer`, applied by the driver over
the request exactly as it goes out).
"""

from __future__ import annotations

from elelem.shapes.base import ShapeSpec
from elelem.shapes.bedrock_converse.embeddings import EMBEDDINGS
from elelem.shapes.bedrock_converse.encoder import assistant_wire, encode_request, request_path
from elelem.shapes.bedrock_converse.errors import (
    ERRORS,
    EXCEPTION_EVENTS,
    EXCEPTIONS,
    classify_error,
    error_from_event,
)
from elelem.shapes.bedrock_converse.mapping import FINISH_REASONS, finish_reason, map_usage
from elelem.shapes.bedrock_converse.parser import (
    DELTAS_FORMAT,
    REDACTED_FORMAT,
    RESPONSE_FORMAT,
    SIGNATURE_FORMAT,
    UNKNOWN_EVENT_TYPE,
    BedrockParser,
    parse_body,
    response_chunks,
)

SHAPE = ShapeSpec(
    "bedrock_converse",
    "eventstream",
    encode=encode_request,
    parser=BedrockParser,
    parse_body=parse_body,
    classify=classify_error,
    embeddings=EMBEDDINGS,
)
"""The Bedrock Converse shape."""


__all__ = [
    "DELTAS_FORMAT",
    "ERRORS",
    "EXCEPTIONS",
    "EXCEPTION_EVENTS",
    "FINISH_REASONS",
    "REDACTED_FORMAT",
    "RESPONSE_FORMAT",
    "SHAPE",
    "SIGNATURE_FORMAT",
    "UNKNOWN_EVENT_TYPE",
    "BedrockParser",
    "assistant_wire",
    "classify_error",
    "encode_request",
    "error_from_event",
    "finish_reason",
    "map_usage",
    "parse_body",
    "request_path",
    "response_chunks",
]
