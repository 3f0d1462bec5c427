"""``SHAPE``: the OpenAI Responses shape object."""

from __future__ import annotations

from collections.abc import Mapping

from elelem.errors import StreamError
from elelem.shapes.base import EncodedRequest, Framing, ModelRequest
from elelem.shapes.openai_responses.encoder import encode
from elelem.shapes.openai_responses.errors import classify_error
from elelem.shapes.openai_responses.parser import ResponsesParser, parse_body
from elelem.shapes.skeleton import typed_parse
from elelem.stream import Chunk
from elelem.vocabulary import ProviderId


def _client_tools(request: ModelRequest | None) -> frozenset[str] | None:
    if request is None:
        return None
    return frozenset(t.name for t in request.tools)


class OpenAIResponsesShape:
    """The OpenAI Responses wire shape (see the package docstring)."""

    name = "openai_responses"
    framing: Framing = "sse"

    def encode_request(
        self, request: ModelRequest, *, provider: ProviderId, stream: bool = True
    ) -> EncodedRequest:
        """The wire request: native replay of ``provider``'s items, portable for the rest."""
        return encode(request, provider, stream)

    def new_parser(
        self, provider: ProviderId, request: ModelRequest | None = None
    ) -> ResponsesParser:
        """A parser for one streamed response to ``request``."""
        return ResponsesParser(provider, _client_tools(request))

    @typed_parse
    def parse_response(
        self, body: bytes, provider: ProviderId, request: ModelRequest | None = None
    ) -> list[Chunk]:
        """Map a non-streaming JSON response body to the same chunks a stream gives."""
        return parse_body(body, provider, _client_tools(request))

    def classify_error(self, status: int, headers: Mapping[str, str], body: bytes) -> StreamError:
        """Turn an HTTP error response into a typed error."""
        return classify_error(status, headers, body)


SHAPE = OpenAIResponsesShape()
"""The module-level shape object the provider catalog loads."""

__all__ = ["SHAPE", "OpenAIResponsesShape"]
