"""OpenAI's embeddings, ``POST {base}/embeddings``, and the kin that speak
it, sans-IO:

==============  ========================  ==========  ======================
wire            asks for                  max inputs  also
==============  ========================  ==========  ======================
``openai``      base64 float32            2048        300,000 tokens a call
``compatible``  floats                    2048        300,000 tokens a call
``mistral``     floats                    512         ``output_dimension``
``voyage``      floats                    128         tasks, 120,000 tokens
==============  ========================  ==========  ======================

OpenAI's answer is asked for in base64 (the bytes of little-endian float32
values, what its own SDK asks for): it decodes straight into an
``array('f')`` with no float parsing.  Other servers that speak the OpenAI
wire are asked for plain floats, which every one of them honours.  A
provider speaking an OpenAI shape embeds on ``compatible`` unless its record
names its own wire (``kinds["embeddings"]``: OpenAI, Mistral, Voyage).
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from elelem.shapes.embeddings import (
    count_of,
    counted,
    float32_le,
    floats,
    json_object,
    malformed,
    openai_body,
)
from elelem.vocabulary import Usage
from elelem.vocabulary.json import JSONValue, decode_json
from elelem.wire.embeddings import Decoded, EmbedBatch, EmbeddingWire, EmbeddingWires, Vector


class _Base64Item(msgspec.Struct):
    embedding: bytes  # msgspec decodes the base64 text itself
    index: int | msgspec.UnsetType = msgspec.UNSET


class _Base64Answer(msgspec.Struct):
    data: list[_Base64Item]
    usage: msgspec.Raw = msgspec.Raw()


_BASE64_ANSWER = msgspec.json.Decoder(_Base64Answer)


def _base64_answer(body: bytes) -> tuple[list[Vector], JSONValue] | None:
    """The vectors (by ``index``) and raw usage of an answer of base64
    vectors, decoded in one typed pass; None for any answer this pass does
    not take as it is (floats, a bad index, bad base64, not JSON…), which
    the general reader then reads, or refuses with its own error.

    Typed, msgspec decodes each vector's base64 straight to bytes, where the
    general reader makes a ``str`` of it, then decodes that with
    ``base64.b64decode``: for 2,048 vectors of 1,536 dimensions that was
    most of an embed call's instructions.  msgspec's base64 takes no text
    that ``b64decode(validate=True)`` refuses and decodes what it takes to
    the same bytes; it refuses some padding ``b64decode`` lets through,
    and those answers go the general way."""
    try:
        answer = _BASE64_ANSWER.decode(body)
        usage = decode_json(answer.usage) if answer.usage else None
    except (msgspec.DecodeError, RecursionError):
        return None
    items = answer.data
    slots: list[Vector | None] = [None] * len(items)
    for position, item in enumerate(items):
        index = position if item.index is msgspec.UNSET else item.index
        if not 0 <= index < len(items) or slots[index] is not None:
            return None
        slots[index] = float32_le(item.embedding)
        if slots[index] is None:
            return None
    return [v for v in slots if v is not None], usage


def _usage(raw: JSONValue) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    return Usage(input=count_of(raw.get("prompt_tokens", raw.get("total_tokens"))), raw=raw)


def openai_decode(wire: str, *, b64: bool = False) -> Callable[[bytes, int], Decoded]:
    """The reader of an OpenAI-style answer (``data[].embedding`` by
    ``index``, ``usage.prompt_tokens``) for the wire named ``wire``; with
    ``b64`` (the wire asks for base64 vectors) a typed pass reads such an
    answer first."""

    def decode(body: bytes, expected: int) -> Decoded:
        if b64 and (typed := _base64_answer(body)) is not None:
            vectors, usage = typed
            return Decoded(counted(wire, body, vectors, expected), _usage(usage))
        data = json_object(wire, body)
        items = data.get("data")
        if not isinstance(items, list):
            raise malformed(wire, body, "has no data list")
        slots: list[Vector | None] = [None] * len(items)
        for position, item in enumerate(items):
            if not isinstance(item, dict):
                raise malformed(wire, body, "holds an item that is not an object")
            index = item.get("index", position)
            if (
                not isinstance(index, int)
                or isinstance(index, bool)
                or not 0 <= index < len(items)
                or slots[index] is not None
            ):
                raise malformed(wire, body, f"holds an item with a bad index {index!r}")
            slots[index] = floats(item.get("embedding"), wire, body)
        vectors = [v for v in slots if v is not None]
        return Decoded(counted(wire, body, vectors, expected), _usage(data.get("usage")))

    return decode


VOYAGE_TASKS = {"query": "query", "document": "document"}
"""Voyage's ``input_type`` of each neutral task it takes."""


def _voyage_encode(batch: EmbedBatch) -> tuple[str, dict[str, JSONValue]]:
    body = openai_body(batch, b64=False, dims="output_dimension")
    if batch.task in VOYAGE_TASKS:
        body["input_type"] = VOYAGE_TASKS[batch.task]
    return "/embeddings", body


def _openai_like(name: str, *, b64: bool, dims: str = "dimensions", max_inputs: int = 2048,
                 max_tokens: int | None = None) -> EmbeddingWire:  # fmt: skip
    return EmbeddingWire(
        name,
        max_inputs,
        lambda batch: ("/embeddings", openai_body(batch, b64=b64, dims=dims)),
        openai_decode(name, b64=b64),
        max_tokens=max_tokens,
    )


COMPATIBLE = _openai_like("compatible", b64=False, max_tokens=300_000)
"""The wire of a server that speaks OpenAI's, asked for plain floats."""

EMBEDDINGS = EmbeddingWires(
    {
        # OpenAI: at most 2048 inputs and 300,000 tokens in one request.
        "openai": _openai_like("openai", b64=True, max_tokens=300_000),
        "compatible": COMPATIBLE,
        "mistral": _openai_like("mistral", b64=False, dims="output_dimension", max_inputs=512),
        "voyage": EmbeddingWire(
            "voyage",
            128,
            _voyage_encode,
            openai_decode("voyage"),
            VOYAGE_TASKS,
            max_tokens=120_000,
        ),
    },
    lambda _model, _cloud: COMPATIBLE,
)
"""OpenAI's embedding wire and its kin."""

__all__ = ["COMPATIBLE", "EMBEDDINGS", "VOYAGE_TASKS", "openai_decode"]
