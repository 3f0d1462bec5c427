"""One embedding run, without its I/O: plan the requests, read the answers.

Each provider's embedding wire is its shape package's ``embeddings.py``
(``SHAPE.embeddings``, an :class:`~elelem.wire.embeddings.EmbeddingWires`;
the contract is :mod:`elelem.wire.embeddings`): :func:`wire_for` picks the
one a provider speaks, its record's own (``kinds["embeddings"]``) or its
shape's choice for the model.  :func:`plan` cuts the inputs into the
requests the wire allows (:func:`batches`) and makes one
:class:`EmbedCall` per request; an ``EmbedCall`` is a
:class:`~elelem.wire.Shape` whose one response is the vectors, so every
request goes through the one driver like any other (signing, typed errors,
visible retries, the response-size limits, hooks).  :meth:`EmbedPlan.result`
joins the answers in input order, sums the usage and prices it.  The async
client sends a plan's calls a few at a time, the blocking client one after
another; both read the same calls.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from elelem.errors import ConfigError, MalformedStreamError, StreamError, UnsupportedError
from elelem.providers import Target
from elelem.providers.catalog import ProviderSpec, spec_of
from elelem.providers.pricing import PROVIDER_IDS, Cost, price
from elelem.stream import Chunk, Finish, ResponseStart, UsageUpdate
from elelem.tokens import text_tokens
from elelem.transport.stream_core import StreamCore
from elelem.vocabulary import Drop, ProviderId, Usage
from elelem.vocabulary.drop import TRUNCATED, UNSUPPORTED
from elelem.vocabulary.registry import RecordTable
from elelem.wire import EncodedRequest, FrameParser, ModelRequest, Shape
from elelem.wire.embeddings import TASKS, Decoded, EmbedBatch, EmbeddingWire, EmbeddingWires, Vector

TOKEN_HEADER = "x-amzn-bedrock-input-token-count"
"""Where Bedrock tells an invocation's input tokens when the body does not."""


EMBEDDING_PROVIDERS: Mapping[str, ProviderSpec] = RecordTable(
    lambda r: None if r.chat else spec_of(r)
)
"""Providers that only embed (records with no chat model, which the catalog
does not list): ``voyage:voyage-3.5`` resolves here when the catalog has no
``voyage``."""


_OWN_WIRE: Mapping[str, str] = RecordTable(lambda r: r.kinds.get("embeddings"))
"""Providers whose embedding wire is their own, not their chat shape's
choice (each record's ``kinds["embeddings"]``: a name of :func:`embedding_wires`)."""


def _wires_of(shape: object) -> EmbeddingWires | None:
    found = getattr(shape, "embeddings", None)
    return found if isinstance(found, EmbeddingWires) else None


def embedding_wires() -> dict[str, EmbeddingWire]:
    """Every registered shape's embedding wires by name (``openai``,
    ``compatible``, ``mistral``, ``voyage``, ``gemini``, ``vertex``,
    ``vertex-gemini``, ``ollama``, ``titan``, ``cohere``, and a plugin
    shape's), each shape loaded on this first use (loading the client loads
    no shape)."""
    from elelem.shapes.registry import shape_named, shape_names

    found: dict[str, EmbeddingWire] = {}
    for name in shape_names():
        wires = _wires_of(shape_named(name))
        if wires is not None:
            found.update(wires.wires)
    return found


def wire_for(provider: str, shape: Shape, model: str, cloud: str = "") -> EmbeddingWire | None:
    """The embedding wire of ``provider`` (speaking chat ``shape``, served by
    ``cloud`` when it is a cloud's) for ``model``, or None when it has no
    embedding endpoint elelem speaks: the record's own wire, but on Vertex
    AI (a cloud serves its own), else the shape's choice."""
    wires = _wires_of(shape)
    own = None if cloud == "vertex" else _OWN_WIRE.get(provider)
    if own is not None:
        return (
            wires.wires[own] if wires is not None and own in wires.wires else embedding_wires()[own]
        )
    return None if wires is None else wires.choose(model, cloud)


def batches(texts: Sequence[str], wire: EmbeddingWire, tokens: Callable[[str], int]) -> list[
    tuple[int, tuple[str, ...]]
]:  # fmt: skip
    """``texts`` cut into requests the wire allows: at most ``max_inputs``
    texts each and, where the wire bounds them, at most ``max_tokens``
    (estimated by ``tokens``); each with the index of its first text."""
    out: list[tuple[int, tuple[str, ...]]] = []
    start, budget = 0, wire.max_tokens
    current: list[str] = []
    spent = 0
    for index, text in enumerate(texts):
        cost = tokens(text) if budget is not None else 0
        full = len(current) >= wire.max_inputs
        over = budget is not None and current and spent + cost > budget
        if full or over:
            out.append((start, tuple(current)))
            start, current, spent = index, [], 0
        current.append(text)
        spent += cost
    if current:
        out.append((start, tuple(current)))
    return out


class EmbedCall:
    """One embedding request as a :class:`~elelem.wire.Shape` for the
    driver: its request is the wire's, its one response the vectors
    (:attr:`decoded`) with their usage; errors are classified by the
    provider's own chat shape (same service, same error bodies)."""

    def __init__(
        self, shape: Shape, wire: EmbeddingWire, batch: EmbedBatch, start: int = 0
    ) -> None:
        self.name = f"{wire.name}_embeddings"
        self.framing = shape.framing
        self.wire = wire
        self.batch = batch
        self.start = start
        """The position of the batch's first text among all the inputs."""
        self.decoded: Decoded | None = None
        """The answer, once it arrived."""
        self._shape = shape

    def encode_request(
        self, request: ModelRequest, *, provider: ProviderId, stream: bool = True
    ) -> EncodedRequest:
        """The wire's request for the batch (never streamed)."""
        path, body = self.wire.encode(self.batch)
        return EncodedRequest(path, body, stream=False)

    def new_parser(self, provider: ProviderId, request: ModelRequest | None = None) -> FrameParser:
        """Refused: an embedding answer is one JSON body."""
        raise UnsupportedError("an embedding is one JSON answer, not a stream")

    def parse_response(
        self, body: bytes, provider: ProviderId, request: ModelRequest | None = None
    ) -> list[Chunk]:
        """Decode the answer into :attr:`decoded` (its vectors checked to the
        dimensions asked for); the chunks carry its usage."""
        decoded = self.wire.decode(body, len(self.batch.texts))
        _check_dimensions(self.wire.name, body, decoded.vectors, self.batch.dimensions)
        self.decoded = decoded
        chunks: list[Chunk] = [ResponseStart(provider=provider, model=self.batch.model)]
        if decoded.usage is not None:
            chunks.append(UsageUpdate(decoded.usage))
        chunks.append(Finish("stop"))
        return chunks

    def classify_error(self, status: int, headers: Mapping[str, str], body: bytes) -> StreamError:
        """The typed error of an error answer, by the provider's chat shape."""
        return self._shape.classify_error(status, headers, body)


def _check_dimensions(wire: str, body: bytes, vectors: Sequence[Vector], asked: int | None) -> None:
    """Every vector of one answer has the one length asked for (or, when
    none was asked, the same length, never 0): a collection or a similarity
    of vectors of mixed lengths would be silently wrong."""
    if not vectors:
        return
    want = len(vectors[0]) if asked is None else asked
    for position, vector in enumerate(vectors):
        if len(vector) != want or not want:
            expected = f"{asked} asked for" if asked is not None else f"{want} of the first"
            raise MalformedStreamError(
                f"the {wire} embedding answer holds a vector of {len(vector)} dimensions at"
                f" {position}, not {expected}",
                body=body[:2048],
                retryable=False,
            )


@dataclass(frozen=True)
class Embeddings(Sequence[Vector]):
    """The vectors of one :meth:`Client.embed <elelem.Client.embed>` call,
    one ``array('f')`` per input in input order, with what they cost.

    ``usage`` sums the input tokens the provider reported over every request
    (None when it reported none: Cohere on Bedrock tells them in a header,
    which is read; Gemini tells none); ``cost`` prices it (unknown, saying
    why, where the price list lacks the model).  ``dropped`` says what was
    asked that the wire cannot say (a task on a wire with none), and which
    inputs the provider cut before embedding them (Vertex AI says so).
    ``requests`` is how many requests were sent, ``request_ids`` the
    provider's id of each where it gave one.
    """

    model: str
    provider: ProviderId
    vectors: tuple[Vector, ...]
    usage: Usage | None
    cost: Cost
    dropped: tuple[Drop, ...] = ()
    requests: int = 0
    request_ids: tuple[str | None, ...] = field(default=())

    def __len__(self) -> int:
        return len(self.vectors)

    def __getitem__(self, index: Any) -> Any:
        return self.vectors[index]

    @property
    def dimensions(self) -> int | None:
        """The length of the vectors (None when there are none)."""
        return len(self.vectors[0]) if self.vectors else None

    def as_bytes(self) -> list[bytes]:
        """Each vector as its float32 bytes (native byte order)."""
        return [v.tobytes() for v in self.vectors]

    def numpy(self) -> Any:
        """The vectors as one ``float32`` numpy array of shape (inputs,
        dimensions); needs numpy, which elelem does not depend on."""
        numpy = importlib.import_module("numpy")  # optional: the arrays serve without it

        if not self.vectors:
            return numpy.zeros((0, 0), dtype=numpy.float32)
        flat = numpy.frombuffer(b"".join(self.as_bytes()), dtype=numpy.float32)
        return flat.reshape(len(self.vectors), -1)

    def __repr__(self) -> str:
        return (
            f"Embeddings(model={self.model!r}, inputs={len(self.vectors)}, "
            f"dimensions={self.dimensions}, requests={self.requests}, cost={self.cost.describe()!r})"
        )


@dataclass(frozen=True)
class EmbedPlan:
    """The requests of one embedding run (:func:`plan`)."""

    target: Target
    wire: EmbeddingWire
    calls: tuple[EmbedCall, ...]
    request: ModelRequest
    dropped: tuple[Drop, ...]

    def result(self, streams: Sequence[StreamCore]) -> Embeddings:
        """The :class:`Embeddings` of the finished ``streams`` (one per call, in order)."""
        vectors: list[Vector] = []
        total = 0
        raws: list[Any] = []
        reported = False
        dropped = list(self.dropped)
        for call, stream in zip(self.calls, streams, strict=True):
            decoded = call.decoded
            # The driver raises before a finished call is left unanswered.
            assert decoded is not None
            if vectors and decoded.vectors and len(decoded.vectors[0]) != len(vectors[0]):
                raise MalformedStreamError(
                    f"the {self.wire.name} embedding answers disagree: input {call.start} has"
                    f" {len(decoded.vectors[0])} dimensions, input 0 has {len(vectors[0])}",
                    retryable=False,
                )
            vectors.extend(decoded.vectors)
            dropped.extend(
                Drop(
                    f"inputs[{call.start + position}]",
                    "text",
                    TRUNCATED,
                    f"the {self.wire.name} embedding endpoint cut the text to what the model"
                    " takes before embedding it",
                )
                for position in decoded.truncated
            )
            usage = decoded.usage or _header_usage(stream.headers)
            if usage is not None:
                reported = True
                total += usage.input
                raws.append(usage.raw)
        usage = Usage(input=total, raw=raws) if reported else None
        target = self.target
        provider = target.provider
        cost = price(
            provider,
            target.model,
            usage,
            api_url=None if provider in PROVIDER_IDS else target.endpoint.base_url,
            at=self.request.now,
        )
        return Embeddings(
            target.address,
            provider,
            tuple(vectors),
            usage,
            cost,
            tuple(dropped),
            len(self.calls),
            tuple(s.request_id for s in streams),
        )


def _header_usage(headers: Mapping[str, str]) -> Usage | None:
    value = headers.get(TOKEN_HEADER)
    count = None if value is None else value.strip()
    # ASCII digits only ('²' is a digit to str.isdigit, no number to int),
    # and few of them (int refuses past 4,300 digits).
    if count is None or not (count.isascii() and count.isdigit()) or len(count) > 18:
        return None
    return Usage(input=int(count), raw={TOKEN_HEADER: value})


def wire_of(target: Target) -> EmbeddingWire:
    """The embedding wire ``target``'s provider speaks, or
    :class:`~elelem.errors.UnsupportedError` saying it has none."""
    wire = wire_for(target.provider, target.shape, target.model, target.spec.cloud)
    if wire is None:
        raise UnsupportedError(
            f"provider {target.provider} has no embedding endpoint elelem speaks"
            f" for model {target.model!r}"
        )
    return wire


def plan(
    target: Target,
    inputs: Sequence[str] | str,
    *,
    dimensions: int | None = None,
    task: str | None = None,
    now: datetime | None = None,
) -> EmbedPlan:
    """The requests that embed ``inputs`` (one text or a sequence) with
    ``target``'s model, cut to the wire's limits (no I/O).

    A ``task`` outside :data:`~elelem.wire.embeddings.TASKS`, a
    ``dimensions`` that is not a positive integer or an input that is not a
    string is a :class:`~elelem.errors.ConfigError` naming it.
    """
    texts = (inputs,) if isinstance(inputs, str) else tuple(inputs)
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise ConfigError(f"inputs[{index}] is a {type(text).__name__}, not a string")
    if task is not None and task not in TASKS:
        raise ConfigError(f"unknown embedding task {task!r} (known: {', '.join(TASKS)})")
    if dimensions is not None and (
        not isinstance(dimensions, int) or isinstance(dimensions, bool) or dimensions < 1
    ):
        raise ConfigError(f"dimensions must be a positive integer, not {dimensions!r}")
    wire = wire_of(target)
    dropped: tuple[Drop, ...] = ()
    sent_task = task
    if task is not None and task not in wire.tasks:
        why = "takes no task" if not wire.tasks else f"has no {task!r} task"
        dropped = (Drop("task", task, UNSUPPORTED, f"the {wire.name} embedding wire {why}"),)
        sent_task = None
    calls = tuple(
        EmbedCall(target.shape, wire, EmbedBatch(target.model, chunk, dimensions, sent_task), start)
        for start, chunk in batches(texts, wire, text_tokens)
    )
    request = ModelRequest(model=target.model, messages=(), now=now)
    return EmbedPlan(target, wire, calls, request, dropped)


__all__ = [
    "EMBEDDING_PROVIDERS",
    "TOKEN_HEADER",
    "EmbedCall",
    "EmbedPlan",
    "Embeddings",
    "batches",
    "embedding_wires",
    "plan",
    "wire_for",
    "wire_of",
]
