"""The OpenAI Responses wire shape (``POST /v1/responses``), sans-IO.

``SHAPE`` implements :class:`elelem.shapes.base.Shape`: the request encoder
(native replay of the provider's own items, portable encoding of the rest),
the SSE parser, the non-streaming mapping and the error classifier.  Used by
OpenAI, Azure OpenAI and xAI.
"""

from __future__ import annotations

from elelem.shapes.openai_responses.encoder import assistant_wire, native_items
from elelem.shapes.openai_responses.errors import ERRORS, classify_error, error_from_event
from elelem.shapes.openai_responses.parser import ResponsesParser, parse_body, parse_object
from elelem.shapes.openai_responses.shape import SHAPE, encode_request

__all__ = [
    "ERRORS",
    "SHAPE",
    "ResponsesParser",
    "assistant_wire",
    "classify_error",
    "encode_request",
    "error_from_event",
    "native_items",
    "parse_body",
    "parse_object",
]
