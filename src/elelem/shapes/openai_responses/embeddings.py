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

from elelem.shapes.embeddings import count_of, counted, floats, json_object, malformed, openai_body
from elelem.vocabulary import Usage
from elelem.vocabulary.json import JSONValue
from elelem.wire.embeddings import Decoded, EmbedBatch, EmbeddingWire, EmbeddingWires, Vector


def openai_decode(wire: str) -> Callable[[bytes, int], Decoded]:
    """The reader of an OpenAI-style answer (``data[].embedding`` by
    ``index``, ``usage.prompt_tokens``) for the wire named ``wire``."""

    def decode(body: bytes, expected: int) -> Decoded:
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
        raw = data.get("usage")
        usage = None
        if isinstance(raw, dict):
            tokens = raw.get("prompt_tokens", raw.get("total_tokens"))
            usage = Usage(input=count_of(tokens), raw=raw)
        return Decoded(counted(wire, body, vectors, expected), usage)

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
        openai_decode(name),
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
