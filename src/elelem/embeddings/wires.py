"""The embedding wires, sans-IO: a neutral batch in, the wire request out;
the answer's bytes in, float32 vectors and usage out.

Seven wires, one table (:data:`WIRES`), each with the same parts under the
same names: ``encode`` (model, texts, dimensions, task -> path and body),
``decode`` (body -> vectors, usage), ``max_inputs`` (the most texts one
request may carry, as the provider documents it), ``tasks`` (neutral task ->
the wire's own word; empty when the wire takes none):

=================  =======================================  ==========  =====
wire               endpoint                                 max inputs  tasks
=================  =======================================  ==========  =====
``openai``         ``POST {base}/embeddings`` (base64)      2048        no
``compatible``     ``POST {base}/embeddings`` (float)       2048        no
``mistral``        ``POST {base}/embeddings``               512         no
``voyage``         ``POST {base}/embeddings``               128         yes
``gemini``         ``POST /v1beta/models/{m}:batchEmbed…``  100         yes
``vertex``         ``POST …/publishers/google/models/{m}:…``  250 (1)     yes
``ollama``         ``POST /api/embed``                      512         no
``titan``          ``POST /model/{id}/invoke`` (Bedrock)    1           no
``cohere``         ``POST /model/{id}/invoke`` (Bedrock)    96          yes
=================  =======================================  ==========  =====

OpenAI's answer is asked for in base64 (the bytes of little-endian float32
values, what its own SDK asks for): it decodes straight into an
``array('f')`` with no float parsing.  Other servers that speak the OpenAI
wire are asked for plain floats, which every one of them honours.

Vertex AI's ``:predict`` (the Gemini embedding models and
``text-embedding-005``, ``text-multilingual-embedding-002``) takes at most
250 texts and 20,000 tokens a request, and ``gemini-embedding-*`` one text
a request, as Google documents; the request path is the Gemini API's,
moved under the project and location by the Vertex endpoint's route.  It
truncates a text longer than the model takes (its default
``autoTruncate``) and says so per text: each such text is a drop.
"""

from __future__ import annotations

import base64
import sys
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias
from urllib.parse import quote

import msgspec

from elelem.errors import MalformedStreamError
from elelem.providers.catalog import ProviderSpec, spec_of
from elelem.vocabulary import Usage
from elelem.vocabulary.json import JSONValue, decode_json
from elelem.vocabulary.registry import RecordTable

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
    """One provider's embedding endpoint (see the module table)."""

    name: str
    max_inputs: int
    encode: Callable[[EmbedBatch], tuple[str, dict[str, JSONValue]]]
    decode: Callable[[bytes, int], Decoded]
    tasks: Mapping[str, str] = field(default_factory=dict)
    dimensions: bool = True
    """Whether the wire takes an output dimension."""
    max_tokens: int | None = None
    """The most tokens one request may carry in all (estimated locally)."""


def _bad(wire: str, body: bytes, why: str) -> MalformedStreamError:
    return MalformedStreamError(
        f"the {wire} embedding answer {why}", body=body[:2048], retryable=False
    )


def _json(wire: str, body: bytes) -> dict[str, JSONValue]:
    try:
        data = decode_json(body)
    except msgspec.DecodeError as exc:
        raise _bad(wire, body, f"is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise _bad(wire, body, "is not a JSON object")
    return data


def floats(values: object, wire: str, body: bytes) -> Vector:
    """A JSON list of numbers (or a base64 string of float32 bytes) as an
    ``array('f')``; anything else is a malformed answer."""
    if isinstance(values, str):
        try:
            raw = base64.b64decode(values, validate=True)
        except ValueError:
            raise _bad(wire, body, "holds a vector that is not base64") from None
        if len(raw) % 4:
            raise _bad(wire, body, "holds base64 that is not whole float32 values")
        out = array("f")
        out.frombytes(raw)
        if sys.byteorder != "little":
            out.byteswap()  # the wire's float32 bytes are little-endian
        return out
    if not isinstance(values, list):
        raise _bad(wire, body, "holds a vector that is not a list of numbers")
    try:
        return array("f", values)
    except TypeError:
        raise _bad(wire, body, "holds a vector with a value that is not a number") from None
    except OverflowError:
        # An integer past a float's range (JSON numbers have no bound).
        raise _bad(wire, body, "holds a vector with a value past float range") from None


def _counted(wire: str, body: bytes, vectors: list[Vector], expected: int) -> list[Vector]:
    if len(vectors) != expected:
        raise _bad(wire, body, f"holds {len(vectors)} vectors for {expected} inputs")
    return vectors


def _int(value: JSONValue) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


# -- the OpenAI wire and its kin -------------------------------------------------


def _openai_body(batch: EmbedBatch, *, b64: bool, dims: str = "dimensions") -> dict[str, JSONValue]:
    body: dict[str, JSONValue] = {"model": batch.model, "input": list(batch.texts)}
    if b64:
        body["encoding_format"] = "base64"
    if batch.dimensions is not None:
        body[dims] = batch.dimensions
    return body


def _openai_decode(wire: str) -> Callable[[bytes, int], Decoded]:
    def decode(body: bytes, expected: int) -> Decoded:
        data = _json(wire, body)
        items = data.get("data")
        if not isinstance(items, list):
            raise _bad(wire, body, "has no data list")
        slots: list[Vector | None] = [None] * len(items)
        for position, item in enumerate(items):
            if not isinstance(item, dict):
                raise _bad(wire, body, "holds an item that is not an object")
            index = item.get("index", position)
            if (
                not isinstance(index, int)
                or isinstance(index, bool)
                or not 0 <= index < len(items)
                or slots[index] is not None
            ):
                raise _bad(wire, body, f"holds an item with a bad index {index!r}")
            slots[index] = floats(item.get("embedding"), wire, body)
        vectors = [v for v in slots if v is not None]
        raw = data.get("usage")
        usage = None
        if isinstance(raw, dict):
            tokens = raw.get("prompt_tokens", raw.get("total_tokens"))
            usage = Usage(input=_int(tokens), raw=raw)
        return Decoded(_counted(wire, body, vectors, expected), usage)

    return decode


# -- Gemini ------------------------------------------------------------------------

GEMINI_TASKS = {
    "query": "RETRIEVAL_QUERY",
    "document": "RETRIEVAL_DOCUMENT",
    "similarity": "SEMANTIC_SIMILARITY",
    "classification": "CLASSIFICATION",
    "clustering": "CLUSTERING",
    "code-query": "CODE_RETRIEVAL_QUERY",
}


def _gemini_model(model: str) -> str:
    return model if model.startswith("models/") else f"models/{model}"


def _gemini_encode(batch: EmbedBatch) -> tuple[str, dict[str, JSONValue]]:
    name = _gemini_model(batch.model)
    requests: list[JSONValue] = []
    for text in batch.texts:
        one: dict[str, JSONValue] = {"model": name, "content": {"parts": [{"text": text}]}}
        if batch.task in GEMINI_TASKS:
            one["taskType"] = GEMINI_TASKS[batch.task]
        if batch.dimensions is not None:
            one["outputDimensionality"] = batch.dimensions
        requests.append(one)
    return f"/v1beta/{quote(name, safe='/')}:batchEmbedContents", {"requests": requests}


def _gemini_decode(body: bytes, expected: int) -> Decoded:
    data = _json("gemini", body)
    items = data.get("embeddings")
    if items is None and "embedding" in data:
        # :embedContent's answer, one vector (elelem asks :batchEmbedContents,
        # but recordings of the SDKs' single calls hold this one).
        items = [data["embedding"]]
    if not isinstance(items, list):
        raise _bad("gemini", body, "has no embeddings list")
    vectors = [
        floats(item.get("values") if isinstance(item, dict) else None, "gemini", body)
        for item in items
    ]
    meta = data.get("usageMetadata")
    usage = None
    if isinstance(meta, dict):
        usage = Usage(input=_int(meta.get("promptTokenCount")), raw=meta)
    return Decoded(_counted("gemini", body, vectors, expected), usage)


# -- Vertex AI ---------------------------------------------------------------------


def _vertex_encode(batch: EmbedBatch) -> tuple[str, dict[str, JSONValue]]:
    instances: list[JSONValue] = []
    for text in batch.texts:
        one: dict[str, JSONValue] = {"content": text}
        if batch.task in GEMINI_TASKS:
            one["task_type"] = GEMINI_TASKS[batch.task]
        instances.append(one)
    body: dict[str, JSONValue] = {"instances": instances}
    if batch.dimensions is not None:
        body["parameters"] = {"outputDimensionality": batch.dimensions}
    # The Gemini API's path: the Vertex endpoint's route moves it under the
    # project and location (elelem.providers.clouds.vertex_gemini_route).
    return f"/v1beta/{quote(_gemini_model(batch.model), safe='/')}:predict", body


def _token_count(value: JSONValue) -> int | None:
    # Vertex writes the count as a JSON number that may carry a fraction
    # part (6.0): an integral float is the count, anything else is not one.
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    return None


def _vertex_decode(body: bytes, expected: int) -> Decoded:
    data = _json("vertex", body)
    items = data.get("predictions")
    if not isinstance(items, list):
        raise _bad("vertex", body, "has no predictions list")
    vectors: list[Vector] = []
    statistics: list[JSONValue] = []
    truncated: list[int] = []
    total, counted = 0, False
    for position, item in enumerate(items):
        embedding = item.get("embeddings") if isinstance(item, dict) else None
        if not isinstance(embedding, dict):
            raise _bad("vertex", body, f"holds prediction {position} without embeddings")
        vectors.append(floats(embedding.get("values"), "vertex", body))
        stats = embedding.get("statistics")
        if stats is None:
            continue
        if not isinstance(stats, dict):
            raise _bad(
                "vertex", body, f"holds prediction {position} whose statistics are no object"
            )
        statistics.append(stats)
        if "token_count" in stats:
            count = _token_count(stats["token_count"])
            if count is None:
                raise _bad(
                    "vertex",
                    body,
                    f"holds a token_count that is no count: {stats['token_count']!r}",
                )
            total, counted = total + count, True
        if stats.get("truncated") is True:
            truncated.append(position)
    usage = None
    if counted:
        raw: dict[str, JSONValue] = {"statistics": statistics}
        if "metadata" in data:
            raw["metadata"] = data["metadata"]  # billableCharacterCount, where given
        usage = Usage(input=total, raw=raw)
    return Decoded(_counted("vertex", body, vectors, expected), usage, tuple(truncated))


# -- Ollama's own API ------------------------------------------------------------


def _ollama_decode(body: bytes, expected: int) -> Decoded:
    data = _json("ollama", body)
    items = data.get("embeddings")
    if items is None and "embedding" in data:
        # The older /api/embeddings route answers one vector, {"embedding":
        # [...]}: elelem calls /api/embed, but recordings and servers still
        # carry the old one.
        items = [data["embedding"]]
    if not isinstance(items, list):
        raise _bad("ollama", body, "has no embeddings list")
    vectors = [floats(item, "ollama", body) for item in items]
    count = data.get("prompt_eval_count")
    usage = (
        Usage(input=_int(count), raw={"prompt_eval_count": count}) if count is not None else None
    )
    return Decoded(_counted("ollama", body, vectors, expected), usage)


# -- Bedrock: Amazon Titan and Cohere Embed ------------------------------------------


def _invoke_path(model: str) -> str:
    return f"/model/{quote(model, safe='')}/invoke"


def _titan_encode(batch: EmbedBatch) -> tuple[str, dict[str, JSONValue]]:
    (text,) = batch.texts
    body: dict[str, JSONValue] = {"inputText": text}
    if batch.dimensions is not None:
        body["dimensions"] = batch.dimensions
    return _invoke_path(batch.model), body


def _titan_decode(body: bytes, expected: int) -> Decoded:
    data = _json("titan", body)
    vector = floats(data.get("embedding"), "titan", body)
    count = data.get("inputTextTokenCount")
    usage = None
    if count is not None:
        usage = Usage(input=_int(count), raw={"inputTextTokenCount": count})
    return Decoded(_counted("titan", body, [vector], expected), usage)


COHERE_TASKS = {
    "query": "search_query",
    "document": "search_document",
    "classification": "classification",
    "clustering": "clustering",
}


def _cohere_encode(batch: EmbedBatch) -> tuple[str, dict[str, JSONValue]]:
    # input_type is required by Embed v3: a batch with no task (or one
    # Cohere lacks) is embedded as documents, the default for a corpus.
    body: dict[str, JSONValue] = {
        "texts": list(batch.texts),
        "input_type": COHERE_TASKS.get(batch.task or "", "search_document"),
        "embedding_types": ["float"],
    }
    if batch.dimensions is not None:
        body["output_dimension"] = batch.dimensions
    return _invoke_path(batch.model), body


def _cohere_decode(body: bytes, expected: int) -> Decoded:
    data = _json("cohere", body)
    found = data.get("embeddings")
    if isinstance(found, dict):  # response_type embeddings_by_type
        found = found.get("float")
    if not isinstance(found, list):
        raise _bad("cohere", body, "has no float embeddings")
    vectors = [floats(item, "cohere", body) for item in found]
    return Decoded(_counted("cohere", body, vectors, expected), None)


VOYAGE_TASKS = {"query": "query", "document": "document"}


def _voyage_encode(batch: EmbedBatch) -> tuple[str, dict[str, JSONValue]]:
    body = _openai_body(batch, b64=False, dims="output_dimension")
    if batch.task in VOYAGE_TASKS:
        body["input_type"] = VOYAGE_TASKS[batch.task]
    return "/embeddings", body


def _openai_like(name: str, *, b64: bool, dims: str = "dimensions", max_inputs: int = 2048,
                 max_tokens: int | None = None) -> EmbeddingWire:  # fmt: skip
    return EmbeddingWire(
        name,
        max_inputs,
        lambda batch: ("/embeddings", _openai_body(batch, b64=b64, dims=dims)),
        _openai_decode(name),
        max_tokens=max_tokens,
    )


WIRES: dict[str, EmbeddingWire] = {
    # OpenAI: at most 2048 inputs and 300,000 tokens in one request.
    "openai": _openai_like("openai", b64=True, max_tokens=300_000),
    "compatible": _openai_like("compatible", b64=False, max_tokens=300_000),
    "mistral": _openai_like("mistral", b64=False, dims="output_dimension", max_inputs=512),
    "voyage": EmbeddingWire(
        "voyage", 128, _voyage_encode, _openai_decode("voyage"), VOYAGE_TASKS, max_tokens=120_000
    ),
    "gemini": EmbeddingWire("gemini", 100, _gemini_encode, _gemini_decode, GEMINI_TASKS),
    # Vertex AI: 250 texts and 20,000 tokens a request; its Gemini embedding
    # models take one text a request.
    "vertex": EmbeddingWire(
        "vertex", 250, _vertex_encode, _vertex_decode, GEMINI_TASKS, max_tokens=20_000
    ),
    "vertex-gemini": EmbeddingWire(
        "vertex-gemini", 1, _vertex_encode, _vertex_decode, GEMINI_TASKS, max_tokens=20_000
    ),
    "ollama": EmbeddingWire(
        "ollama",
        512,
        lambda batch: ("/api/embed", _openai_body(batch, b64=False)),
        _ollama_decode,
    ),
    "titan": EmbeddingWire("titan", 1, _titan_encode, _titan_decode),
    "cohere": EmbeddingWire("cohere", 96, _cohere_encode, _cohere_decode, COHERE_TASKS),
}
"""Every embedding wire, by name."""


EMBEDDING_PROVIDERS: Mapping[str, ProviderSpec] = RecordTable(
    lambda r: None if r.chat else spec_of(r)
)
"""Providers that only embed (records with no chat model, which the catalog
does not list): ``voyage:voyage-3.5`` resolves here when the catalog has no
``voyage``."""


_OWN_WIRE: Mapping[str, str] = RecordTable(lambda r: r.kinds.get("embeddings"))
"""Providers whose embedding wire is their own, not their chat shape's kin
(each record's ``kinds["embeddings"]``: a name of :data:`WIRES`)."""


def wire_for(provider: str, shape: str, model: str, cloud: str = "") -> EmbeddingWire | None:
    """The embedding wire of ``provider`` (speaking chat ``shape``, served by
    ``cloud`` when it is a cloud's) for ``model``, or None when it has no
    embedding endpoint elelem speaks."""
    if cloud == "vertex":
        if shape != "gemini":
            return None  # Claude on Vertex embeds nothing
        return WIRES["vertex-gemini" if "gemini-embedding" in model else "vertex"]
    own = _OWN_WIRE.get(provider)
    if own is not None:
        return WIRES[own]
    if provider == "ollama-native" or shape == "ollama_native":
        return WIRES["ollama"]
    if shape == "gemini":
        return WIRES["gemini"]
    if shape == "bedrock_converse":
        # Model ids and ARNs, with or without a cross-region prefix (us.).
        if "titan-embed" in model:
            return WIRES["titan"]
        if "cohere.embed" in model:
            return WIRES["cohere"]
        return None
    if shape in ("openai_chat", "openai_responses"):
        return WIRES["compatible"]
    return None


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


__all__ = [
    "COHERE_TASKS",
    "EMBEDDING_PROVIDERS",
    "GEMINI_TASKS",
    "TASKS",
    "VOYAGE_TASKS",
    "WIRES",
    "Decoded",
    "EmbedBatch",
    "EmbeddingWire",
    "Vector",
    "batches",
    "floats",
    "wire_for",
]
