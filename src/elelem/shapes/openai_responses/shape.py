"""``SHAPE``: the OpenAI Responses shape object."""

from __future__ import annotations

from elelem.shapes.base import ModelRequest, ShapeSpec
from elelem.shapes.openai_responses.encoder import encode_request
from elelem.shapes.openai_responses.errors import classify_error
from elelem.shapes.openai_responses.parser import ResponsesParser, parse_body
from elelem.stream import Chunk
from elelem.vocabulary import ProviderId


def _client_tools(request: ModelRequest | None) -> frozenset[str] | None:
    if request is None:
        return None
    return frozenset(t.name for t in request.tools)


def new_parser(provider: ProviderId, request: ModelRequest | None = None) -> ResponsesParser:
    """A parser for one streamed response to ``request`` (its client tools tell
    a client ``custom_tool_call`` from a server-side one)."""
    return ResponsesParser(provider, _client_tools(request))


def parse_response(
    body: bytes, provider: ProviderId, request: ModelRequest | None = None
) -> list[Chunk]:
    """Map a non-streaming JSON response body to the same chunks a stream gives."""
    return parse_body(body, provider, _client_tools(request))


SHAPE = ShapeSpec(
    "openai_responses",
    "sse",
    encode=encode_request,
    parser=new_parser,
    parse_body=parse_response,
    classify=classify_error,
)
"""The OpenAI Responses shape (OpenAI, Azure OpenAI, xAI)."""

__all__ = ["SHAPE", "encode_request", "new_parser", "parse_response"]
