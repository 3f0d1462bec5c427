"""What the wires share about embeddings: reading an answer (a JSON object,
vectors as lists of numbers or base64 float32 bytes, counted against the
texts sent, every fault a :class:`~elelem.errors.MalformedStreamError`
naming the wire), and the OpenAI-style body (``model``, ``input``, the
dimensions) that OpenAI's ``/embeddings`` and its kin, and Ollama's
``/api/embed``, take."""

from __future__ import annotations

import base64
import sys
from array import array

import msgspec

from elelem.errors import MalformedStreamError
from elelem.vocabulary.json import JSONValue, decode_json
from elelem.wire.embeddings import EmbedBatch, Vector


def malformed(wire: str, body: bytes, why: str) -> MalformedStreamError:
    """The error of a ``wire`` embedding answer ``body`` that ``why``."""
    return MalformedStreamError(
        f"the {wire} embedding answer {why}", body=body[:2048], retryable=False
    )


def json_object(wire: str, body: bytes) -> dict[str, JSONValue]:
    """``body`` as a JSON object, or the malformed-answer error."""
    try:
        data = decode_json(body)
    except msgspec.DecodeError as exc:
        raise malformed(wire, body, f"is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise malformed(wire, body, "is not a JSON object")
    return data


def float32_le(raw: bytes) -> Vector | None:
    """The little-endian float32 values ``raw`` holds as an ``array('f')``,
    or None when its length is not a whole number of them."""
    if len(raw) % 4:
        return None
    out = array("f")
    out.frombytes(raw)
    if sys.byteorder != "little":
        out.byteswap()  # the wire's float32 bytes are little-endian
    return out


def floats(values: object, wire: str, body: bytes) -> Vector:
    """A JSON list of numbers (or a base64 string of float32 bytes) as an
    ``array('f')``; anything else is a malformed answer."""
    if isinstance(values, str):
        try:
            raw = base64.b64decode(values, validate=True)
        except ValueError:
            raise malformed(wire, body, "holds a vector that is not base64") from None
        out = float32_le(raw)
        if out is None:
            raise malformed(wire, body, "holds base64 that is not whole float32 values")
        return out
    if not isinstance(values, list):
        raise malformed(wire, body, "holds a vector that is not a list of numbers")
    try:
        return array("f", values)
    except TypeError:
        raise malformed(wire, body, "holds a vector with a value that is not a number") from None
    except OverflowError:
        # An integer past a float's range (JSON numbers have no bound).
        raise malformed(wire, body, "holds a vector with a value past float range") from None


def listed(wire: str, body: bytes, data: dict[str, JSONValue]) -> list[JSONValue]:
    """The answer's ``embeddings`` list, or its one ``embedding`` as a list
    of one (the answer of a route that embeds one text, which recordings
    and older servers still carry), else the malformed-answer error."""
    items = data.get("embeddings")
    if items is None and "embedding" in data:
        items = [data["embedding"]]
    if not isinstance(items, list):
        raise malformed(wire, body, "has no embeddings list")
    return items


def counted(wire: str, body: bytes, vectors: list[Vector], expected: int) -> list[Vector]:
    """``vectors`` when there is one per text sent, else the malformed-answer error."""
    if len(vectors) != expected:
        raise malformed(wire, body, f"holds {len(vectors)} vectors for {expected} inputs")
    return vectors


def count_of(value: JSONValue) -> int:
    """A reported token count (an int, not a bool), else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def openai_body(batch: EmbedBatch, *, b64: bool, dims: str = "dimensions") -> dict[str, JSONValue]:
    """The OpenAI-style body of ``batch``: base64 vectors asked for when
    ``b64``, the output dimension under the wire's key ``dims``."""
    body: dict[str, JSONValue] = {"model": batch.model, "input": list(batch.texts)}
    if b64:
        body["encoding_format"] = "base64"
    if batch.dimensions is not None:
        body[dims] = batch.dimensions
    return body


__all__ = [
    "count_of",
    "counted",
    "float32_le",
    "floats",
    "json_object",
    "listed",
    "malformed",
    "openai_body",
]
