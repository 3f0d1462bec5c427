"""Counting a request's input tokens before sending it (``Client.count_tokens``).

A wire that can count holds its :class:`~elelem.wire.counting.TokenCounter`
in its shape package (``counting.py``: Anthropic's
``/v1/messages/count_tokens``, OpenAI's ``/responses/input_tokens``,
Gemini's ``:countTokens``), and its shape value carries it.  The request is
the one the shape's own encoder builds for sending, rewritten for the
counting endpoint, and it is one one-shot call through the one driver like
any request (signing, typed errors, visible retries).  Every other wire, and
a server without the endpoint (404), falls back to the local estimate of
:mod:`elelem.tokens`, and the result says which was used.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from elelem.tokens import TokenEstimate, estimate_request
from elelem.transport.one_shot import Call, Exchange
from elelem.vocabulary import ProviderId
from elelem.vocabulary.json import JSONValue, decode_json
from elelem.wire import ModelRequest, Shape
from elelem.wire.counting import TokenCounter


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


NOT_THERE = frozenset({404, 405, 501})
"""Statuses meaning the server has no counting endpoint (an API-compatible
server that implements only generation): then the local estimate counts."""


def counter_of(shape: Shape) -> TokenCounter | None:
    """How ``shape``'s wire counts (its spec's ``counting``), or None."""
    counter = getattr(shape, "counting", None)
    return counter if isinstance(counter, TokenCounter) else None


def counting(
    shape: Shape, counter: TokenCounter, request: ModelRequest, provider: ProviderId
) -> Exchange[TokenCount]:
    """The exchange that counts ``request`` on ``shape``'s wire: one call to
    its counting endpoint, whose answer is the count.  An answer that is no
    JSON object holding a count is a
    :class:`~elelem.errors.MalformedStreamError` naming the endpoint."""
    encoded = shape.encode_request(request, provider=provider, stream=False)

    def count(body: bytes) -> TokenCount:
        data = decode_json(body)
        found = counter.read(data) if isinstance(data, dict) else None
        if not isinstance(found, int) or isinstance(found, bool) or found < 0:
            raise ValueError("it holds no token count")
        return TokenCount(found, "provider", counter.endpoint, raw=data)

    value: TokenCount = yield Call(
        shape, counter.rewrite(encoded, request), count, counter.endpoint
    )
    return value


def estimated(request: ModelRequest, provider: str, why: str) -> TokenCount:
    """The local estimate of ``request``'s input tokens, saying ``why``."""
    estimate = estimate_request(request, provider)
    return TokenCount(estimate.total, "estimate", why, estimate=estimate)


__all__ = ["NOT_THERE", "TokenCount", "counter_of", "counting", "estimated"]
