"""Ollama's native chat API (``POST /api/chat``, NDJSON stream), sans-IO.

``SHAPE`` implements :class:`elelem.shapes.base.Shape`: the request encoder
(native replay of Ollama's own messages with ``thinking`` and whole
``tool_calls``, portable encoding of the rest), the NDJSON line parser, the
non-streaming response mapping and the error classifier.  The
OpenAI-compatible ``/v1/chat/completions`` of the same server is served by
:mod:`elelem.shapes.openai_chat` (provider ``ollama``); this shape is
provider ``ollama-native``.
"""

from __future__ import annotations

from collections.abc import Mapping

from elelem.errors import StreamError
from elelem.shapes.base import EncodedRequest, Framing, ModelRequest
from elelem.shapes.ollama_native.encoder import (
    PATH,
    THINK_LEVELS,
    assistant_wire,
    encode_request,
    native_assistant,
    portable_assistant,
    think_value,
)
from elelem.shapes.ollama_native.errors import classify_error, error_from_object, error_message
from elelem.shapes.ollama_native.parser import (
    FINISH_REASONS,
    RESPONSE_FORMAT,
    SYNTHESIZED_ID_FORMAT,
    TOOL_EXTRA_FORMAT,
    UNKNOWN_FIELD_TYPE,
    OllamaParser,
    parse_body,
)
from elelem.stream import Chunk
from elelem.vocabulary import ProviderId


class OllamaNativeShape:
    """The Ollama native shape.  Stateless; use the module's ``SHAPE``."""

    name: str = "ollama_native"
    framing: Framing = "ndjson"

    def encode_request(
        self, request: ModelRequest, *, provider: ProviderId, stream: bool = True
    ) -> EncodedRequest:
        """The ``/api/chat`` request for ``request`` (see :func:`encode_request`)."""
        return encode_request(request, provider=provider, stream=stream)

    def new_parser(self, provider: ProviderId, request: object = None) -> OllamaParser:
        """A parser for one streamed response (the request is not needed)."""
        del request
        return OllamaParser(provider)

    def parse_response(
        self, body: bytes, provider: ProviderId, request: object = None
    ) -> list[Chunk]:
        """The chunks of a non-streaming response body (see :func:`parse_body`)."""
        del request
        return parse_body(body, provider)

    def classify_error(self, status: int, headers: Mapping[str, str], body: bytes) -> StreamError:
        """A typed error for an HTTP error response (see :func:`classify_error`)."""
        return classify_error(status, headers, body)


SHAPE = OllamaNativeShape()
"""The Ollama native shape."""

__all__ = [
    "FINISH_REASONS",
    "PATH",
    "RESPONSE_FORMAT",
    "SHAPE",
    "SYNTHESIZED_ID_FORMAT",
    "THINK_LEVELS",
    "TOOL_EXTRA_FORMAT",
    "UNKNOWN_FIELD_TYPE",
    "OllamaNativeShape",
    "OllamaParser",
    "assistant_wire",
    "classify_error",
    "encode_request",
    "error_from_object",
    "error_message",
    "native_assistant",
    "parse_body",
    "portable_assistant",
    "think_value",
]
