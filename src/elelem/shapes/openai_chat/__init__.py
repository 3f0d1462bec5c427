"""The OpenAI Chat Completions wire shape (DESIGN.md §4), sans-IO.

Serves OpenAI and every OpenAI-compatible server: DeepSeek, OpenRouter,
Ollama, llama.cpp, Groq, Cerebras, xAI, Mistral, Perplexity, Moonshot,
Alibaba.  ``SHAPE`` implements :class:`~elelem.shapes.base.Shape`; the
per-provider request conventions live in
:mod:`elelem.shapes.openai_chat.dialects`.
"""

from __future__ import annotations

from collections.abc import Mapping

from elelem.errors import ConfigError, StreamError
from elelem.shapes.base import EncodedRequest, Framing, ModelRequest
from elelem.shapes.openai_chat.dialects import DIALECTS, Dialect, dialect_for
from elelem.shapes.openai_chat.encoder import (
    PATH,
    encode_request,
    native_assistant,
    portable_assistant,
)
from elelem.shapes.openai_chat.errors import ERRORS, classify_error, error_from_event
from elelem.shapes.openai_chat.parser import ChatParser, parse_body
from elelem.shapes.skeleton import typed_parse
from elelem.stream import Chunk
from elelem.vocabulary import Drop, Message, ProviderId
from elelem.vocabulary.json import JSONValue


class OpenAIChatShape:
    """The Chat Completions shape.

    ``dialects`` overrides the conventions per provider name; ``named``
    picks one of :data:`DIALECTS` for every provider this shape object
    serves (a provider spec's ``dialect``, bound by :meth:`with_dialect`);
    without either, a provider gets the dialect of its own name, else the
    default.
    """

    name = "openai_chat"
    framing: Framing = "sse"

    def __init__(
        self, dialects: Mapping[str, Dialect] | None = None, *, named: str | None = None
    ) -> None:
        if named is not None and named not in DIALECTS:
            raise ConfigError(
                f"unknown Chat Completions dialect {named!r} (known: {', '.join(sorted(DIALECTS))})"
            )
        self._dialects = dict(dialects or {})
        self.named = named

    def with_dialect(self, named: str) -> OpenAIChatShape:
        """This shape speaking dialect ``named`` (one of :data:`DIALECTS`) to
        every provider; :class:`~elelem.errors.ConfigError` for an unknown name."""
        return OpenAIChatShape(self._dialects, named=named)

    def dialect(self, provider: ProviderId, model: str | None = None) -> Dialect:
        """The request conventions used for ``provider`` (and ``model``)."""
        override = self._dialects.get(provider)
        if override is not None:
            return override
        return dialect_for(self.named or provider, model)

    def __repr__(self) -> str:
        return f"OpenAIChatShape(named={self.named!r})"

    def encode_request(
        self, request: ModelRequest, *, provider: ProviderId, stream: bool = True
    ) -> EncodedRequest:
        """The wire request: native replay of ``provider``'s own messages,
        portable encoding of every other message."""
        return encode_request(
            request, provider=provider, stream=stream, dialect=self.dialect(provider, request.model)
        )

    def new_parser(self, provider: ProviderId, request: ModelRequest | None = None) -> ChatParser:
        """A parser for one streamed response."""
        return ChatParser(provider)

    @typed_parse
    def parse_response(
        self, body: bytes, provider: ProviderId, request: ModelRequest | None = None
    ) -> list[Chunk]:
        """Map a non-streaming JSON body to the chunks a stream gives."""
        return parse_body(body, provider)

    def classify_error(self, status: int, headers: Mapping[str, str], body: bytes) -> StreamError:
        """Turn an HTTP error response into a typed error."""
        return classify_error(status, headers, body)


SHAPE = OpenAIChatShape()
"""The shape object every caller uses."""


def assistant_wire(
    message: Message, provider: ProviderId
) -> tuple[dict[str, JSONValue], list[Drop]]:
    """The assistant message object a request to ``provider`` carries for
    ``message`` (native replay if ``provider`` produced it, else portable),
    and what had to be dropped."""
    if message.provider == provider:
        return native_assistant(message, provider, SHAPE.dialect(provider, message.model))
    return portable_assistant(message)


__all__ = [
    "DIALECTS",
    "ERRORS",
    "PATH",
    "SHAPE",
    "ChatParser",
    "Dialect",
    "OpenAIChatShape",
    "assistant_wire",
    "classify_error",
    "dialect_for",
    "encode_request",
    "error_from_event",
    "native_assistant",
    "parse_body",
    "portable_assistant",
]
