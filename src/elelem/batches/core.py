"""Batches without their I/O: the requests encoded for a batch, the
provider's batch API carried through the one driver, and the results read
back into assembled responses at the batch price.

Each wire's batch API is its shape package's ``batch.py``
(``SHAPE.batch``, a :class:`~elelem.wire.batch.BatchWire`; the contract is
:mod:`elelem.wire.batch`): :func:`wire_of` finds the target's, when its
record says the provider has it, and :class:`BatchAPI` runs its flows as
exchanges of one-shot calls (:mod:`elelem.transport.one_shot`).

A batch request is a neutral request like any other; each is encoded by the
target's own shape (non-streamed), so what a batch sends is what a single
request would.  Each result body is read by the whole-body parser
(:meth:`~elelem.wire.Shape.parse_response`) of the shape that speaks it (the
target's, or the one its :class:`~elelem.wire.batch.Item` names: an OpenAI
batch may hold Chat Completions bodies) and assembled by the one
assembler: every artifact a non-streamed response keeps, a batched one
keeps.  Costs are the provider's batch price: half the standard price at
Anthropic, OpenAI and Gemini (:data:`BATCH_DISCOUNT`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

import msgspec

from elelem.errors import ConfigError, MalformedStreamError, StreamError, UnsupportedError
from elelem.providers import Target, load_shape
from elelem.providers.pricing import BATCH_DISCOUNT, Cost, batch_price, price
from elelem.stream import AssembledResponse, Assembler
from elelem.transport.one_shot import Call, Exchange
from elelem.vocabulary import GenerationOptions, Message
from elelem.vocabulary.registry import RecordTable
from elelem.wire import EncodedRequest, ModelRequest
from elelem.wire.batch import BatchFlow, BatchRecord, BatchTarget, BatchWire, Item

T = TypeVar("T")

MAX_REQUESTS = 100_000
"""The most requests one batch may hold: Anthropic's limit, the largest a
provider takes (OpenAI's is 50,000).  Each request costs some kilobytes
while it is encoded, so a file of millions of one-letter lines is refused
before it is, not held."""


class BatchRequest(msgspec.Struct, frozen=True):
    """One request of a batch: a prompt (or a conversation), its system
    prompt and options, and the ``custom_id`` its result is matched by
    (``r1``, ``r2``, … when not given)."""

    messages: str | tuple[Message, ...]
    custom_id: str | None = None
    system: str | None = None
    options: GenerationOptions | None = None


class BatchResult(msgspec.Struct, frozen=True):
    """One request's outcome: the assembled response (None when the
    provider reported an error, in ``error``), and its cost at the batch
    price."""

    custom_id: str
    response: AssembledResponse | None
    error: str | None
    cost: Cost
    request_id: str | None = None


def neutral_requests(
    requests: Sequence[BatchRequest | str], model: str, now: datetime | None
) -> list[tuple[str, ModelRequest]]:
    """``(custom_id, ModelRequest)`` for each request; a repeated custom id,
    or more than :data:`MAX_REQUESTS` requests, is a
    :class:`~elelem.errors.ConfigError`."""
    if len(requests) > MAX_REQUESTS:
        raise ConfigError(
            f"a batch holds at most {MAX_REQUESTS} requests, not {len(requests)}: split it"
        )
    out: list[tuple[str, ModelRequest]] = []
    seen: set[str] = set()
    for number, request in enumerate(requests, start=1):
        if isinstance(request, str):
            request = BatchRequest(request)
        custom_id = request.custom_id or f"r{number}"
        if custom_id in seen:
            raise ConfigError(f"custom_id {custom_id!r} is given twice in one batch")
        seen.add(custom_id)
        messages = request.messages
        if isinstance(messages, str):
            messages = (Message.user(messages),)
        neutral = ModelRequest(
            model=model,
            messages=tuple(messages),
            system=request.system,
            options=request.options or GenerationOptions(),
            now=now,
        )
        out.append((custom_id, neutral))
    if not out:
        raise ConfigError("a batch needs at least one request")
    return out


def encode(
    target: Target, requests: list[tuple[str, ModelRequest]]
) -> list[tuple[str, EncodedRequest]]:
    """Each request as the target's shape sends it unstreamed."""
    return [
        (custom_id, target.shape.encode_request(neutral, provider=target.provider, stream=False))
        for custom_id, neutral in requests
    ]


def read_results(
    target: Target, record: BatchRecord, items: Sequence[Item], at: datetime | None = None
) -> list[BatchResult]:
    """Each item's body parsed by the target's shape and assembled, in the
    order of the batch's requests (items the provider left out come last,
    as errors saying so), priced at the batch price.  A custom id given
    twice is a :class:`~elelem.errors.MalformedStreamError`."""
    by_id: dict[str, Item] = {}
    for given in items:
        if given.custom_id in by_id:
            # Keeping either would drop the other without a word.
            raise MalformedStreamError(
                f"the batch's results hold custom_id {given.custom_id!r} twice", retryable=False
            )
        by_id[given.custom_id] = given
    order = list(record.custom_ids) + [i for i in by_id if i not in record.custom_ids]
    out = []
    for custom_id in order:
        item = by_id.get(custom_id)
        if item is None:
            out.append(
                BatchResult(
                    custom_id,
                    None,
                    "no result for this request",
                    Cost(None, unknown=(f"{custom_id}: no result",)),
                )
            )
            continue
        response, error = _assembled(target, item)
        usage = response.usage if response is not None else None
        cost = batch_price(price(target.provider, target.model, usage, at=at))
        out.append(BatchResult(custom_id, response, error, cost, item.request_id))
    return out


def _assembled(target: Target, item: Item) -> tuple[AssembledResponse | None, str | None]:
    if item.body is None:
        return None, item.error
    # Read by the shape of the endpoint the body came from (an OpenAI batch
    # of Chat Completions requests answers chat.completion bodies).
    shape = target.shape if item.shape in (None, target.shape.name) else load_shape(item.shape)
    try:
        chunks = shape.parse_response(item.body, target.provider)
    except StreamError as exc:  # a provider error inside a result body
        return None, f"{exc.kind}: {exc.message}"
    assembler = Assembler(target.provider)
    assembler.feed_all(chunks)
    return assembler.result(), None


BATCH_PROVIDERS: Mapping[str, str] = RecordTable(lambda r: r.kinds.get("batch"))
"""The providers whose batch API elelem speaks (each record's
``kinds["batch"]``, the name of a :class:`~elelem.wire.batch.BatchWire`; an
OpenAI-compatible server rarely has one, and Chat Completions batches go to
OpenAI itself)."""


def batch_target(target: Target) -> BatchTarget:
    """What a batch flow knows of ``target`` (with the headers its shape
    sends: a batch read carries Anthropic's API version and betas)."""
    probe = ModelRequest(model=target.model, messages=(Message.user("."),))
    headers = target.shape.encode_request(probe, provider=target.provider, stream=False).headers
    return BatchTarget(
        target.provider, target.address, target.model, target.endpoint.base_url, dict(headers)
    )


def carried(target: Target, flow: BatchFlow[T]) -> Exchange[T]:
    """``flow`` as an exchange of one-shot calls, each step a
    :class:`~elelem.transport.one_shot.Call` whose errors ``target``'s
    shape classifies."""
    try:
        step = next(flow)
        while True:
            value = yield Call(target.shape, step.request, step.parse, step.what)
            step = flow.send(value)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


@dataclass(frozen=True)
class BatchAPI:
    """A wire's batch API (:attr:`wire`) run for a :class:`~elelem.providers.Target`:
    each flow an exchange the one driver carries."""

    wire: BatchWire

    def submit(
        self, target: Target, requests: Sequence[tuple[str, EncodedRequest]]
    ) -> Exchange[BatchRecord]:
        """Submit the encoded ``requests`` (``custom_id``, request)."""
        return carried(target, self.wire.submit(batch_target(target), requests))

    def status(self, target: Target, record: BatchRecord) -> Exchange[BatchRecord]:
        """The batch ``record`` with its state now."""
        return carried(target, self.wire.status(batch_target(target), record))

    def results(self, target: Target, record: BatchRecord) -> Exchange[list[Item]]:
        """Each request's response body, or its error."""
        return carried(target, self.wire.results(batch_target(target), record))


def wire_of(target: Target) -> BatchAPI:
    """The batch API of ``target``, or :class:`~elelem.errors.UnsupportedError`."""
    wire = getattr(target.shape, "batch", None)
    if not isinstance(wire, BatchWire) or BATCH_PROVIDERS.get(target.provider) != wire.name:
        raise UnsupportedError(f"provider {target.provider} has no batch API elelem speaks")
    return BatchAPI(wire)


__all__ = [
    "BATCH_DISCOUNT",
    "BATCH_PROVIDERS",
    "MAX_REQUESTS",
    "BatchAPI",
    "BatchRequest",
    "BatchResult",
    "batch_price",
    "batch_target",
    "carried",
    "encode",
    "neutral_requests",
    "read_results",
    "wire_of",
]
