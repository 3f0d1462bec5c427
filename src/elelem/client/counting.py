"""Counting a request's input tokens before sending it (``Client.count_tokens``).

Three wires have an endpoint that counts: Anthropic's
``/v1/messages/count_tokens``, OpenAI's ``/responses/input_tokens`` and
Gemini's ``:countTokens``.  The request is the one the shape's own encoder
builds for sending, reduced to what the counting endpoint takes, and it goes
through the one driver like any request (signing, typed errors, visible
retries); its answer is read as a response whose usage is the count.  Every
other wire, and a server without the endpoint (404), falls back to the local
estimate of :mod:`elelem.tokens`, and the result says which was used.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from elelem.errors import MalformedStreamError, StreamError, UnsupportedError
from elelem.stream import Chunk, Finish, ResponseStart, UsageUpdate
from elelem.tokens import TokenEstimate, estimate_request
from elelem.vocabulary import ProviderId, Usage
from elelem.vocabulary.json import JSONValue, decode_json
from elelem.wire import EncodedRequest, FrameParser, ModelRequest, Shape


class TokenCount(msgspec.Struct, frozen=True):
    """A request's input tokens: ``input``, counted by the provider
    (``source`` ``provider``, ``raw`` its answer) or estimated locally
    (``estimate``, with the breakdown); ``note`` says which endpoint
    counted, or why the estimate stood in."""

    input: int
    source: Literal["provider", "estimate"]
    note: str
    estimate: TokenEstimate | None = None
    raw: JSONValue = None


@dataclass(frozen=True)
class Counter:
    """How one wire counts: the request rewritten for its endpoint, and the
    count read from the answer."""

    endpoint: str
    rewrite: Callable[[EncodedRequest, ModelRequest], EncodedRequest]
    read: Callable[[Any], object]


def _keep(body: Mapping[str, JSONValue], keys: frozenset[str]) -> dict[str, JSONValue]:
    return {k: v for k, v in body.items() if k in keys}


_ANTHROPIC_KEYS = frozenset(
    {"model", "messages", "system", "tools", "tool_choice", "thinking", "mcp_servers"}
)
_RESPONSES_KEYS = frozenset(
    {"model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls",
     "reasoning", "text", "truncation", "previous_response_id", "conversation"}
)  # fmt: skip


def _suffixed(
    suffix: str, keys: frozenset[str]
) -> Callable[[EncodedRequest, ModelRequest], EncodedRequest]:
    """A rewrite to the sending path plus ``suffix``, keeping only ``keys``."""

    def rewrite(encoded: EncodedRequest, _request: ModelRequest) -> EncodedRequest:
        return msgspec.structs.replace(
            encoded,
            path=encoded.path.rstrip("/") + suffix,
            body=_keep(encoded.body, keys),
            stream=False,
        )

    return rewrite


def _gemini(encoded: EncodedRequest, request: ModelRequest) -> EncodedRequest:
    path = encoded.path.partition("?")[0]
    base, colon, _method = path.rpartition(":")
    if not colon:
        raise UnsupportedError(f"a Gemini request path without a method: {encoded.path}")
    model = request.model if request.model.startswith("models/") else f"models/{request.model}"
    return msgspec.structs.replace(
        encoded,
        path=f"{base}:countTokens",
        body={"generateContentRequest": {"model": model, **encoded.body}},
        stream=False,
    )


COUNTERS: dict[str, Counter] = {
    "anthropic_messages": Counter(
        "Anthropic count_tokens",
        _suffixed("/count_tokens", _ANTHROPIC_KEYS),
        lambda d: d.get("input_tokens"),
    ),
    "openai_responses": Counter(
        "OpenAI responses/input_tokens",
        _suffixed("/input_tokens", _RESPONSES_KEYS),
        lambda d: d.get("input_tokens"),
    ),
    "gemini": Counter("Gemini countTokens", _gemini, lambda d: d.get("totalTokens")),
}
"""The wires that can count, by shape name."""

NOT_THERE = frozenset({404, 405, 501})
"""Statuses meaning the server has no counting endpoint (an API-compatible
server that implements only generation): then the local estimate counts."""


class CountingShape:
    """A :class:`~elelem.wire.Shape` whose request is ``shape``'s
    token-counting call, and whose one response is the count as usage."""

    def __init__(self, shape: Shape, counter: Counter) -> None:
        self.name = shape.name
        self.framing = shape.framing
        self._shape = shape
        self.counter = counter
        """The counting endpoint this shape calls."""

    def encode_request(
        self, request: ModelRequest, *, provider: ProviderId, stream: bool = True
    ) -> EncodedRequest:
        encoded = self._shape.encode_request(request, provider=provider, stream=False)
        return self.counter.rewrite(encoded, request)

    def new_parser(self, provider: ProviderId, request: ModelRequest | None = None) -> FrameParser:
        raise UnsupportedError("a token count is one JSON answer, not a stream")

    def parse_response(
        self, body: bytes, provider: ProviderId, request: ModelRequest | None = None
    ) -> list[Chunk]:
        try:
            data = decode_json(body)
        except msgspec.DecodeError as exc:
            raise MalformedStreamError(
                f"the {self.counter.endpoint} answer is not JSON: {exc}", body=body
            ) from None
        count = self.counter.read(data) if isinstance(data, dict) else None
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise MalformedStreamError(
                f"the {self.counter.endpoint} answer holds no token count",
                body=body,
                retryable=False,
            )
        return [
            ResponseStart(provider=provider),
            UsageUpdate(Usage(input=count, raw=data)),
            Finish("stop"),
        ]

    def classify_error(self, status: int, headers: Mapping[str, str], body: bytes) -> StreamError:
        return self._shape.classify_error(status, headers, body)


def estimated(request: ModelRequest, provider: str, why: str) -> TokenCount:
    """The local estimate of ``request``'s input tokens, saying ``why``."""
    estimate = estimate_request(request, provider)
    return TokenCount(estimate.total, "estimate", why, estimate=estimate)


__all__ = [
    "COUNTERS",
    "NOT_THERE",
    "Counter",
    "CountingShape",
    "TokenCount",
    "estimated",
]
