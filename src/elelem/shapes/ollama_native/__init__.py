"""Ollama's native chat API (``POST /api/chat``, NDJSON stream), sans-IO.

``SHAPE`` implements :class:`elelem.wire.Shape`: the request encoder
(native replay of Ollama's own messages with ``thinking`` and whole
``tool_calls``, portable encoding of the rest), the NDJSON line parser, the
non-streaming response mapping and the error classifier.  The
OpenAI-compatible ``/v1/chat/completions`` of the same server is served by
:mod:`elelem.shapes.openai_chat` (provider ``ollama``); this shape is
provider ``ollama-native``.
"""

from __future__ import annotations

from elelem.shapes.base import ShapeSpec
from elelem.shapes.ollama_native.embeddings import EMBEDDINGS
from elelem.shapes.ollama_native.encoder import (
    PATH,
    THINK_LEVELS,
    assistant_wire,
    encode_request,
    native_assistant,
    portable_assistant,
    think_value,
)
from elelem.shapes.ollama_native.errors import (
    ERRORS,
    classify_error,
    error_from_event,
    error_message,
)
from elelem.shapes.ollama_native.listing import LISTING
from elelem.shapes.ollama_native.mapping import (
    FINISH_REASONS,
    USAGE_FIELDS,
    finish_reason,
    map_usage,
)
from elelem.shapes.ollama_native.parser import (
    RESPONSE_FORMAT,
    SYNTHESIZED_ID_FORMAT,
    TOOL_EXTRA_FORMAT,
    UNKNOWN_FIELD_TYPE,
    OllamaParser,
    parse_body,
)

SHAPE = ShapeSpec(
    "ollama_native",
    "ndjson",
    encode=encode_request,
    parser=OllamaParser,
    parse_body=parse_body,
    classify=classify_error,
    listing=LISTING,
    embeddings=EMBEDDINGS,
)
"""The Ollama native shape."""


__all__ = [
    "ERRORS",
    "FINISH_REASONS",
    "PATH",
    "RESPONSE_FORMAT",
    "SHAPE",
    "SYNTHESIZED_ID_FORMAT",
    "THINK_LEVELS",
    "TOOL_EXTRA_FORMAT",
    "UNKNOWN_FIELD_TYPE",
    "USAGE_FIELDS",
    "OllamaParser",
    "assistant_wire",
    "classify_error",
    "encode_request",
    "error_from_event",
    "error_message",
    "finish_reason",
    "map_usage",
    "native_assistant",
    "parse_body",
    "portable_assistant",
    "think_value",
]
