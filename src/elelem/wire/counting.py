"""Token counting as a kind of exchange, types only: how one wire counts a
request's input tokens before it is sent.

A shape package whose wire has a counting endpoint holds one
:class:`TokenCounter` as ``counting.COUNTER``, and its ``SHAPE.counting`` is
that value (a shape without one has None there).  The client sends the
counting request through the one driver like any request and falls back to
the local estimate (:mod:`elelem.tokens`) where there is no counter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from elelem.vocabulary.json import JSONValue
from elelem.wire import EncodedRequest, ModelRequest


@dataclass(frozen=True)
class TokenCounter:
    """How one wire counts: the request its encoder builds for sending,
    rewritten for the counting endpoint (``rewrite(encoded, request)``), and
    the count read from the endpoint's JSON object (``read``: the count, or
    anything else when the answer holds none).  ``endpoint`` names the
    endpoint in messages and in the count's note (``Anthropic
    count_tokens``)."""

    endpoint: str
    rewrite: Callable[[EncodedRequest, ModelRequest], EncodedRequest]
    read: Callable[[Mapping[str, JSONValue]], object]


__all__ = ["TokenCounter"]
