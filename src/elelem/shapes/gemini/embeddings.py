"""Google's embeddings, sans-IO: the Gemini API's
``POST /v1beta/models/{m}:batchEmbedContents`` (at most 100 texts a
request) and Vertex AI's ``:predict``.

Vertex AI's ``:predict`` (the Gemini embedding models and
``text-embedding-005``, ``text-multilingual-embedding-002``) takes at most
250 texts and 20,000 tokens a request, and ``gemini-embedding-*`` one text
a request, as Google documents; the request path is the Gemini API's,
moved under the project and location by the Vertex endpoint's route.  It
truncates a text longer than the model takes (its default
``autoTruncate``) and says so per text: each such text is a drop.
"""

from __future__ import annotations

from urllib.parse import quote

from elelem.shapes.embeddings import count_of, counted, floats, json_object, listed, malformed
from elelem.vocabulary import Usage
from elelem.vocabulary.json import JSONValue
from elelem.wire.embeddings import Decoded, EmbedBatch, EmbeddingWire, EmbeddingWires, Vector

GEMINI_TASKS = {
    "query": "RETRIEVAL_QUERY",
    "document": "RETRIEVAL_DOCUMENT",
    "similarity": "SEMANTIC_SIMILARITY",
    "classification": "CLASSIFICATION",
    "clustering": "CLUSTERING",
    "code-query": "CODE_RETRIEVAL_QUERY",
}
"""Google's ``taskType`` of each neutral task."""


def _model_name(model: str) -> str:
    return model if model.startswith("models/") else f"models/{model}"


def _gemini_encode(batch: EmbedBatch) -> tuple[str, dict[str, JSONValue]]:
    name = _model_name(batch.model)
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
    data = json_object("gemini", body)
    # :embedContent answers one "embedding" (elelem asks
    # :batchEmbedContents, but recordings of the SDKs' single calls hold it).
    items = listed("gemini", body, data)
    vectors = [
        floats(item.get("values") if isinstance(item, dict) else None, "gemini", body)
        for item in items
    ]
    meta = data.get("usageMetadata")
    usage = None
    if isinstance(meta, dict):
        usage = Usage(input=count_of(meta.get("promptTokenCount")), raw=meta)
    return Decoded(counted("gemini", body, vectors, expected), usage)


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
    return f"/v1beta/{quote(_model_name(batch.model), safe='/')}:predict", body


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
    data = json_object("vertex", body)
    items = data.get("predictions")
    if not isinstance(items, list):
        raise malformed("vertex", body, "has no predictions list")
    vectors: list[Vector] = []
    statistics: list[JSONValue] = []
    truncated: list[int] = []
    total, reported = 0, False
    for position, item in enumerate(items):
        embedding = item.get("embeddings") if isinstance(item, dict) else None
        if not isinstance(embedding, dict):
            raise malformed("vertex", body, f"holds prediction {position} without embeddings")
        vectors.append(floats(embedding.get("values"), "vertex", body))
        stats = embedding.get("statistics")
        if stats is None:
            continue
        if not isinstance(stats, dict):
            raise malformed(
                "vertex", body, f"holds prediction {position} whose statistics are no object"
            )
        statistics.append(stats)
        if "token_count" in stats:
            count = _token_count(stats["token_count"])
            if count is None:
                raise malformed(
                    "vertex",
                    body,
                    f"holds a token_count that is no count: {stats['token_count']!r}",
                )
            total, reported = total + count, True
        if stats.get("truncated") is True:
            truncated.append(position)
    usage = None
    if reported:
        raw: dict[str, JSONValue] = {"statistics": statistics}
        if "metadata" in data:
            raw["metadata"] = data["metadata"]  # billableCharacterCount, where given
        usage = Usage(input=total, raw=raw)
    return Decoded(counted("vertex", body, vectors, expected), usage, tuple(truncated))


_WIRES = {
    "gemini": EmbeddingWire("gemini", 100, _gemini_encode, _gemini_decode, GEMINI_TASKS),
    # Vertex AI: 250 texts and 20,000 tokens a request; its Gemini embedding
    # models take one text a request.
    "vertex": EmbeddingWire(
        "vertex", 250, _vertex_encode, _vertex_decode, GEMINI_TASKS, max_tokens=20_000
    ),
    "vertex-gemini": EmbeddingWire(
        "vertex-gemini", 1, _vertex_encode, _vertex_decode, GEMINI_TASKS, max_tokens=20_000
    ),
}


def _choose(model: str, cloud: str) -> EmbeddingWire:
    if cloud == "vertex":
        return _WIRES["vertex-gemini" if "gemini-embedding" in model else "vertex"]
    return _WIRES["gemini"]


EMBEDDINGS = EmbeddingWires(_WIRES, _choose)
"""Google's embedding wires: the Gemini API's, and Vertex AI's on its cloud."""

__all__ = ["EMBEDDINGS", "GEMINI_TASKS"]
