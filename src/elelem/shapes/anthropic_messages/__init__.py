"""The Anthropic Messages wire shape (DESIGN.md §4), sans-IO.

``SHAPE`` implements :class:`elelem.shapes.base.Shape`: the request encoder
(native replay of Anthropic's own messages, portable encoding of the rest),
the SSE frame parser, the non-streaming response mapping and the error
classifier.

Provider payloads this shape writes (``provider`` is the parser's provider,
``anthropic`` for Anthropic itself), all replayed verbatim by native replay:

``citation``
    on an :class:`~elelem.vocabulary.Attribution`: the raw citation object
    (``encrypted_index`` included).
``signature`` / ``redacted_thinking``
    on a reasoning block: the signature string / the redacted ``data`` string.
``block_fields``
    on a text, reasoning or tool-call block: wire fields the neutral block
    does not model (a tool use's ``caller``), as an object.
``server_tool_use`` / ``<type>_tool_result``
    on a hosted transition: the raw server-tool block, ``version`` the tool
    version the request selected (``web_search_20250305``) or None.
``message``
    on :class:`~elelem.stream.Finish`: the message envelope without its
    content (stop details, container, context management, final usage).
"""

from __future__ import annotations

from collections.abc import Mapping

from elelem.errors import StreamError
from elelem.shapes.anthropic_messages.encoder import (
    API_VERSION,
    DEFAULT_MAX_TOKENS,
    MESSAGES_PATH,
    assistant_wire,
    encode_request,
    hosted_tool_definition,
)
from elelem.shapes.anthropic_messages.errors import (
    ERROR_TYPES,
    ERRORS,
    classify_error,
    error_from_event,
)
from elelem.shapes.anthropic_messages.mapping import (
    DEFAULT_TOOL_VERSIONS,
    FINISH_REASONS,
    finish_reason,
    usage_from_wire,
)
from elelem.shapes.anthropic_messages.parser import (
    MessagesParser,
    RequestArg,
    citation_attribution,
    response_chunks,
)
from elelem.shapes.base import EncodedRequest, Framing, ModelRequest
from elelem.shapes.skeleton import decode_whole_object, typed_parse
from elelem.stream import Chunk
from elelem.vocabulary import ProviderId


class AnthropicMessages:
    """The Anthropic Messages shape.  Stateless; use the module's ``SHAPE``."""

    name: str = "anthropic_messages"
    framing: Framing = "sse"

    def encode_request(
        self, request: ModelRequest, *, provider: ProviderId, stream: bool = True
    ) -> EncodedRequest:
        """The ``/v1/messages`` request for ``request`` (see :func:`encode_request`)."""
        return encode_request(request, provider=provider, stream=stream)

    def new_parser(self, provider: ProviderId, request: RequestArg = None) -> MessagesParser:
        """A parser for one streamed response.  ``request`` may be the neutral
        request or the raw wire request JSON (it names the hosted tool versions)."""
        return MessagesParser(provider, request)

    @typed_parse
    def parse_response(
        self, body: bytes, provider: ProviderId, request: RequestArg = None
    ) -> list[Chunk]:
        """The chunks of a non-streaming JSON response body.

        An ``error`` object raises its typed error; a body that is not a JSON
        object raises :class:`MalformedStreamError`.
        """
        data = decode_whole_object(body, "anthropic response body")
        if data.get("type") == "error":
            raise error_from_event(data)
        return response_chunks(data, provider, request)

    def classify_error(self, status: int, headers: Mapping[str, str], body: bytes) -> StreamError:
        """A typed error for an HTTP error response (see :func:`classify_error`)."""
        return classify_error(status, headers, body)


SHAPE = AnthropicMessages()
"""The Anthropic Messages shape."""

__all__ = [
    "API_VERSION",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_TOOL_VERSIONS",
    "ERRORS",
    "ERROR_TYPES",
    "FINISH_REASONS",
    "MESSAGES_PATH",
    "SHAPE",
    "AnthropicMessages",
    "MessagesParser",
    "assistant_wire",
    "citation_attribution",
    "classify_error",
    "encode_request",
    "error_from_event",
    "finish_reason",
    "hosted_tool_definition",
    "response_chunks",
    "usage_from_wire",
]
