"""The OpenAI Responses wire shape (``POST /v1/responses``), sans-IO.

``SHAPE`` implements :class:`elelem.wire.Shape`: the request encoder
(native replay of the provider's own items, portable encoding of the rest),
the SSE parser, the non-streaming mapping and the error classifier.  Used by
OpenAI, Azure OpenAI and xAI.  The parser reads the request's client tools,
which tell a client ``custom_tool_call`` from a server-side one.
"""

from __future__ import annotations

from elelem.shapes.base import ShapeSpec
from elelem.shapes.openai_responses.batch import BATCH
from elelem.shapes.openai_responses.counting import COUNTER
from elelem.shapes.openai_responses.embeddings import EMBEDDINGS
from elelem.shapes.openai_responses.encoder import assistant_wire, encode_request, native_items
from elelem.shapes.openai_responses.errors import ERRORS, classify_error, error_from_event
from elelem.shapes.openai_responses.files import FILES
from elelem.shapes.openai_responses.listing import LISTING
from elelem.shapes.openai_responses.live import LIVE
from elelem.shapes.openai_responses.mapping import FINISH_REASONS, finish_reason, map_usage
from elelem.shapes.openai_responses.parser import ResponsesParser, parse_body, parse_object
from elelem.shapes.openai_responses.speech import SPEECH
from elelem.shapes.openai_responses.transcription import TRANSCRIPTION

SHAPE = ShapeSpec(
    "openai_responses",
    "sse",
    encode=encode_request,
    parser=ResponsesParser,
    parse_body=parse_body,
    classify=classify_error,
    counting=COUNTER,
    listing=LISTING,
    speech=SPEECH,
    transcription=TRANSCRIPTION,
    live=LIVE,
    files=FILES,
    embeddings=EMBEDDINGS,
    batch=BATCH,
)
"""The OpenAI Responses shape (OpenAI, Azure OpenAI, xAI)."""

__all__ = [
    "ERRORS",
    "FINISH_REASONS",
    "SHAPE",
    "ResponsesParser",
    "assistant_wire",
    "classify_error",
    "encode_request",
    "error_from_event",
    "finish_reason",
    "map_usage",
    "native_items",
    "parse_body",
    "parse_object",
]
