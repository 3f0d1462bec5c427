"""Batches as a kind of exchange, types only: many requests submitted at
once, their state asked later, their results read back.

A shape package whose wire has a batch API holds one :class:`BatchWire` as
``batch.BATCH``, and its ``SHAPE.batch`` is that value (a shape without one
has None there).  Each of its three flows is a generator of
:class:`BatchStep` s (a request, how its answer is read, what it does),
sent each answer's value, returning the flow's result: ``submit`` (the
encoded requests -> a :class:`BatchRecord`), ``status`` (a record -> the
same record with its state now) and ``results`` (a record -> one
:class:`Item` per request: the provider's whole response body, or the error
it gave).  :mod:`elelem.batches` carries each step through the one driver
and reads a response body with the shape's own whole-body parser.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar

import msgspec

from elelem.vocabulary import ProviderId
from elelem.vocabulary.json import JSONValue
from elelem.wire import EncodedRequest

T = TypeVar("T")

STATES = ("pending", "running", "ended", "failed", "cancelled", "expired")
"""The neutral states of a batch: results can be read once it is ``ended``
(and, for what finished in time, ``expired`` or ``cancelled``)."""


class BatchRecord(msgspec.Struct, frozen=True, gc=False):
    """A submitted batch, as the log keeps it (event kind ``batch``): enough
    to ask for its status and results from any process later.

    ``model`` is the model address the requests were made for; ``custom_ids``
    name the requests in order; ``output`` is where the results are (an
    Anthropic ``results_url``, an OpenAI ``output_file_id``; Gemini's come
    with the status) and ``errors`` OpenAI's ``error_file_id``; ``counts``
    the provider's request counts; ``raw`` its last batch object.
    """

    provider: ProviderId
    model: str
    wire: str
    batch_id: str
    state: str
    raw_state: str
    custom_ids: tuple[str, ...]
    output: str | None = None
    errors: str | None = None
    counts: dict[str, int] = msgspec.field(default_factory=dict)
    raw: JSONValue = None

    @property
    def done(self) -> bool:
        """True once the provider will change nothing more."""
        return self.state in ("ended", "failed", "cancelled", "expired")


class Item(msgspec.Struct, frozen=True):
    """One request's outcome: its whole response body, or the provider's
    error.  ``shape`` names the shape whose whole-body parser reads the body
    when the wire carries bodies of more than one (an OpenAI batch holds
    Responses or Chat Completions bodies, by the endpoint it was made for);
    None: the target's own."""

    custom_id: str
    body: bytes | None = None
    error: str | None = None
    request_id: str | None = None
    shape: str | None = None


class BatchTarget(msgspec.Struct, frozen=True):
    """What a batch flow knows of where it runs: the ``provider``, the model
    ``address`` (``anthropic:claude-…``) and ``model`` id, the endpoint's
    ``base_url`` (a results URL elsewhere is refused: the request would
    carry the key) and the ``headers`` the target's shape sends (Anthropic's
    API version and betas, which a batch read carries too)."""

    provider: ProviderId
    address: str
    model: str
    base_url: str
    headers: dict[str, str] = msgspec.field(default_factory=dict)


@dataclass(frozen=True)
class BatchStep:
    """One request of a batch flow: ``request`` sent, its answer's bytes
    read by ``parse`` (a ``ValueError`` there is a malformed answer named
    by ``what``, ``create the batch``)."""

    request: EncodedRequest
    parse: Callable[[bytes], Any]
    what: str


BatchFlow: TypeAlias = Generator[BatchStep, Any, T]
"""A batch flow: yields steps, is sent each step's parsed value, returns ``T``."""


@dataclass(frozen=True)
class BatchWire:
    """One provider's batch API: its three flows (see the module docstring)."""

    name: str
    submit: Callable[[BatchTarget, Sequence[tuple[str, EncodedRequest]]], BatchFlow[BatchRecord]]
    status: Callable[[BatchTarget, BatchRecord], BatchFlow[BatchRecord]]
    results: Callable[[BatchTarget, BatchRecord], BatchFlow[list[Item]]]


__all__ = [
    "STATES",
    "BatchFlow",
    "BatchRecord",
    "BatchStep",
    "BatchTarget",
    "BatchWire",
    "Item",
]
