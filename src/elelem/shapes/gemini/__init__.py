"""The Gemini wire shape (``generateContent`` / ``streamGenerateContent?alt=sse``), sans-IO.

``SHAPE`` implements :class:`elelem.shapes.base.Shape`: the request encoder
(native replay of Google's own parts with their thought signatures, portable
encoding of the rest), the SSE frame parser, the non-streaming response
mapping and the error classifier.  The model is part of the request path
(``/v1beta/models/{model}:streamGenerateContent?alt=sse``); authentication
(``x-goog-api-key``) belongs to the provider catalog, not the shape.
"""

from __future__ import annotations

from collections.abc import Mapping

from elelem.errors import StreamError
from elelem.shapes.base import EncodedRequest, Framing, ModelRequest
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
from elelem.shapes.gemini.grounding import code_point_range, support_attributions
from elelem.shapes.gemini.parser import (
    CONTENT_FILTER,
    GeminiParser,
    finish_reason,
    response_chunks,
    usage_from_wire,
)
from elelem.shapes.skeleton import decode_whole_body, typed_parse
from elelem.stream import Chunk
from elelem.vocabulary import ProviderId


class GeminiShape:
    """The Gemini shape.  Stateless; use the module's ``SHAPE``."""

    name: str = "gemini"
    framing: Framing = "sse"

    def encode_request(
        self, request: ModelRequest, *, provider: ProviderId, stream: bool = True
    ) -> EncodedRequest:
        """The ``generateContent`` request for ``request`` (see :func:`encode_request`)."""
        return encode_request(request, provider=provider, stream=stream)

    def new_parser(self, provider: ProviderId, request: object = None) -> GeminiParser:
        """A parser for one streamed response (the request is not needed)."""
        del request
        return GeminiParser(provider)

    @typed_parse
    def parse_response(
        self, body: bytes, provider: ProviderId, request: object = None
    ) -> list[Chunk]:
        """The chunks of a non-streaming JSON response body.

        An ``error`` object raises its typed error; a body that is not JSON
        raises :class:`MalformedStreamError`.
        """
        del request
        data = decode_whole_body(body, "gemini response body")
        if isinstance(data, dict) and "error" in data:
            raise error_from_event(data)
        return response_chunks(data, provider)

    def classify_error(self, status: int, headers: Mapping[str, str], body: bytes) -> StreamError:
        """A typed error for an HTTP error response (see :func:`classify_error`)."""
        return classify_error(status, headers, body)


SHAPE = GeminiShape()
"""The Gemini shape."""

__all__ = [
    "API_VERSION",
    "CONTENT_FILTER",
    "ERRORS",
    "HOSTED_TOOL_KEYS",
    "PORTABLE_SIGNATURE",
    "SHAPE",
    "STATUS_TYPES",
    "GeminiParser",
    "GeminiShape",
    "assistant_wire",
    "classify_error",
    "code_point_range",
    "encode_request",
    "error_from_event",
    "error_object",
    "finish_reason",
    "hosted_tool_definition",
    "request_path",
    "response_chunks",
    "retry_delay",
    "support_attributions",
    "usage_from_wire",
]
