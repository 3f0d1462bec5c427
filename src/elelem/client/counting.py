"""Counting a request's input tokens before sending it (``Client.count_tokens``).

A wire that can count holds its :class:`~elelem.wire.counting.TokenCounter`
in its shape package (``counting.py``: Anthropic's
``/v1/messages/count_tokens``, OpenAI's ``/responses/input_tokens``,
Gemini's ``:countTokens``), and its shape value carries it.  The request is
the one the shape's own encoder builds for sending, rewritten for the
counting endpoint, and it is one one-shot call through the one driver like
any request (signing, typed errors, visible retries), which
:class:`Counting` runs async or blocking.  Every other wire, and a server
without the endpoint (404), falls back to the local estimate of
:mod:`elelem.tokens`, and the result says which was used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import msgspec

from elelem.errors import StreamError
from elelem.tokens import TokenEstimate, estimate_request
from elelem.transport import Driver, Endpoint, Timeouts
from elelem.transport.config import CHAT
from elelem.transport.faces import Effects, awaiting, blocking
from elelem.transport.one_shot import Call, Exchange, exchanged
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


CountPlan = tuple[Endpoint, TokenCounter, ModelRequest, Exchange[TokenCount]]
"""Where to count, how the wire counts, the neutral request, the exchange."""


@dataclass(frozen=True)
class Counting:
    """A planned token count: the counting exchange (or the estimate
    already made), run async or blocking; a counting endpoint that is not
    there is answered by the estimate, any other error raised."""

    plan: CountPlan | TokenCount
    timeouts: Timeouts | None

    async def arun(self, driver: Driver) -> TokenCount:
        """The count, async."""
        return await awaiting(self._counted(driver))

    def run(self, driver: Driver) -> TokenCount:
        """The count, blocking."""
        return blocking(self._counted(driver))

    def _counted(self, driver: Driver) -> Effects[TokenCount]:
        plan = self.plan
        if isinstance(plan, TokenCount):
            return plan
        endpoint, counter, neutral, flow = plan
        try:
            return (
                yield from exchanged(
                    driver, endpoint, flow, neutral.model, self.timeouts, operation=CHAT
                )
            )
        except StreamError as exc:
            if exc.status not in NOT_THERE:
                raise
            why = f"{counter.endpoint} is not there (HTTP {exc.status})"
            return estimated(neutral, endpoint.provider, why)


__all__ = [
    "NOT_THERE",
    "CountPlan",
    "Counting",
    "TokenCount",
    "counter_of",
    "counting",
    "estimated",
]
