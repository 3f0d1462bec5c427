"""The Gemini wire shape (``generateContent`` / ``streamGenerateContent?alt=sse``), sans-IO.

``SHAPE`` implements :class:`elelem.wire.Shape`: the request encoder
(native replay of Google's own parts with their thought signatures, portable
encoding of the rest), the SSE frame parser, the non-streaming response
mapping and the error classifier.  The model is part of the request path
(``/v1beta/models/{model}:streamGenerateContent?alt=sse``); authentication
(``x-goog-api-key``) belongs to the provider catalog, not the shape.
"""

from __future__ import annotations

from elelem.shapes.base import ShapeSpec
from elelem.shapes.gemini.batch import BATCH
from elelem.shapes.gemini.counting import COUNTER
from elelem.shapes.gemini.embeddings import EMBEDDINGS
from elelem.shapes.gemini.encoder import (
    API_VERSION,
    HOSTED_TOOL_KEYS,
    PORTABLE_SIGNATURE,
    assistant_wire,
    encode_request,
    hosted_tool_definition,
    request_path,
)
from elelem.shapes.gemini.errors import (
    ERRORS,
    STATUS_TYPES,
    classify_error,
    error_from_event,
    error_object,
    retry_delay,
)
from elelem.shapes.gemini.files import FILES
from elelem.shapes.gemini.grounding import code_point_range, support_attributions
from elelem.shapes.gemini.listing import LISTING
from elelem.shapes.gemini.live import LIVE
from elelem.shapes.gemini.mapping import CONTENT_FILTER, FINISH_REASONS, finish_reason, map_usage
from elelem.shapes.gemini.parser import GeminiParser, parse_body, response_chunks

SHAPE = ShapeSpec(
    "gemini",
    "sse",
    encode=encode_request,
    parser=GeminiParser,
    parse_body=parse_body,
    classify=classify_error,
    counting=COUNTER,
    listing=LISTING,
    live=LIVE,
    files=FILES,
    embeddings=EMBEDDINGS,
    batch=BATCH,
)
"""The Gemini shape."""

__all__ = [
    "API_VERSION",
    "CONTENT_FILTER",
    "ERRORS",
    "FINISH_REASONS",
    "HOSTED_TOOL_KEYS",
    "PORTABLE_SIGNATURE",
    "SHAPE",
    "STATUS_TYPES",
    "GeminiParser",
    "assistant_wire",
    "classify_error",
    "code_point_range",
    "encode_request",
    "error_from_event",
    "error_object",
    "finish_reason",
    "hosted_tool_definition",
    "map_usage",
    "parse_body",
    "request_path",
    "response_chunks",
    "retry_delay",
    "support_attributions",
]
