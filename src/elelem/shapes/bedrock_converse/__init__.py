"""Amazon Bedrock's Converse API (``/model/{id}/converse-stream``), sans-IO.

``SHAPE`` holds the request encoder, the event parser, the non-streaming
response mapping and the error classifier.  It reads *decoded* Converse
events: one JSON event per frame, its type given as the frame's event name
or as the object's single key (``{"contentBlockDelta": {...}}``), which is
how recordings such as the corpus's keep them.

**Not reachable through the transport yet.**  A live Bedrock stream is
AWS's binary ``application/vnd.amazon.eventstream`` framing (length-prefixed
messages with headers and CRCs), and every request must be signed with
AWS SigV4.  The transport speaks neither, so this shape is deliberately not
in the provider catalog: it serves ``elelem inspect`` and tests on recorded
events only.  ``framing`` is ``"sse"`` because that is how a recording's
decoded events reach the parser (one ``data:`` frame per event), not a
claim about Bedrock's wire.
"""

from __future__ import annotations

from elelem.shapes.base import FunctionShape
from elelem.shapes.bedrock_converse.encoder import assistant_wire, encode_request, request_path
from elelem.shapes.bedrock_converse.errors import (
    EXCEPTION_EVENTS,
    EXCEPTIONS,
    classify_error,
    error_from_event,
)
from elelem.shapes.bedrock_converse.parser import (
    DELTAS_FORMAT,
    REDACTED_FORMAT,
    RESPONSE_FORMAT,
    SIGNATURE_FORMAT,
    STOP_REASONS,
    UNKNOWN_EVENT_TYPE,
    BedrockParser,
    map_usage,
    parse_body,
    response_chunks,
)

SHAPE = FunctionShape(
    "bedrock_converse",
    "sse",
    encode=encode_request,
    parser=BedrockParser,
    parse_body=parse_body,
    classify=classify_error,
)
"""The Bedrock Converse shape."""


__all__ = [
    "DELTAS_FORMAT",
    "EXCEPTIONS",
    "EXCEPTION_EVENTS",
    "REDACTED_FORMAT",
    "RESPONSE_FORMAT",
    "SHAPE",
    "SIGNATURE_FORMAT",
    "STOP_REASONS",
    "UNKNOWN_EVENT_TYPE",
    "BedrockParser",
    "assistant_wire",
    "classify_error",
    "encode_request",
    "error_from_event",
    "map_usage",
    "parse_body",
    "request_path",
    "response_chunks",
]
