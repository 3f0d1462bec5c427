"""Embeddings as a kind of exchange, types only: texts in, float32 vectors
and their usage out.

A shape package whose wire has an embedding endpoint holds one
:class:`EmbeddingWires` as ``embeddings.EMBEDDINGS``, and its
``SHAPE.embeddings`` is that value (a shape without one has None there): the
embedding wires the package speaks, by name, and which of them a provider
speaking the shape uses for a model when its record names none.  Each
:class:`EmbeddingWire` has the same parts under the same names: ``encode``
(an :class:`EmbedBatch` -> path and body), ``decode`` (the answer's bytes
and how many texts were sent -> :class:`Decoded`), ``max_inputs`` (the most
texts one request may carry, as the provider documents it), ``tasks``
(neutral task -> the wire's own word; empty when the wire takes none).  The
run cut to those limits, sent through the one driver and priced is
:mod:`elelem.embeddings`.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

import msgspec

from elelem.vocabulary import Usage
from elelem.vocabulary.json import JSONValue

TASKS = (
    "query",
    "document",
    "similarity",
    "classification",
    "clustering",
    "code-query",
)
"""The neutral embedding tasks (what the vector is for).  A wire that takes
no task, or not this one, reports a drop; the vectors are still made."""

Vector: TypeAlias = "array[float]"
"""One embedding: an ``array('f')`` of float32 values."""


class EmbedBatch(msgspec.Struct, frozen=True):
    """One request's worth of texts, with what was asked of them."""

    model: str
    texts: tuple[str, ...]
    dimensions: int | None = None
    task: str | None = None


class Decoded(msgspec.Struct, frozen=True):
    """A decoded answer: one vector per text, in order, and the usage the
    provider reported (None when it reports none); ``truncated`` the
    positions (in the request) of the texts the provider cut before
    embedding them, where it says so."""

    vectors: list[Vector]
    usage: Usage | None
    truncated: tuple[int, ...] = ()


@dataclass(frozen=True)
class EmbeddingWire:
    """One provider's embedding endpoint (see the module docstring)."""

    name: str
    max_inputs: int
    encode: Callable[[EmbedBatch], tuple[str, dict[str, JSONValue]]]
    decode: Callable[[bytes, int], Decoded]
    tasks: Mapping[str, str] = field(default_factory=dict)
    dimensions: bool = True
    """Whether the wire takes an output dimension."""
    max_tokens: int | None = None
    """The most tokens one request may carry in all (estimated locally)."""


@dataclass(frozen=True)
class EmbeddingWires:
    """The embedding wires of one shape package: ``wires`` by name, and
    ``choose(model, cloud)``, the one a provider speaking the shape uses for
    ``model`` (served by ``cloud`` when it is a cloud's, else ``""``) when
    its record names no wire of its own, or None when it embeds nothing."""

    wires: Mapping[str, EmbeddingWire]
    choose: Callable[[str, str], EmbeddingWire | None]


__all__ = ["TASKS", "Decoded", "EmbedBatch", "EmbeddingWire", "EmbeddingWires", "Vector"]
