"""Embeddings on Bedrock, sans-IO: ``POST /model/{id}/invoke`` of Amazon
Titan (one text a request) and Cohere Embed (at most 96), the model id or
ARN, with or without a cross-region prefix (``us.``), saying which.
Cohere's answer holds no usage: Bedrock tells the input tokens in a header,
which :mod:`elelem.embeddings` reads."""

from __future__ import annotations

from urllib.parse import quote

from elelem.shapes.embeddings import count_of, counted, floats, json_object, malformed
from elelem.vocabulary import Usage
from elelem.vocabulary.json import JSONValue
from elelem.wire.embeddings import Decoded, EmbedBatch, EmbeddingWire, EmbeddingWires


def _invoke_path(model: str) -> str:
    return f"/model/{quote(model, safe='')}/invoke"


def _titan_encode(batch: EmbedBatch) -> tuple[str, dict[str, JSONValue]]:
    (text,) = batch.texts
    body: dict[str, JSONValue] = {"inputText": text}
    if batch.dimensions is not None:
        body["dimensions"] = batch.dimensions
    return _invoke_path(batch.model), body


def _titan_decode(body: bytes, expected: int) -> Decoded:
    data = json_object("titan", body)
    vector = floats(data.get("embedding"), "titan", body)
    count = data.get("inputTextTokenCount")
    usage = None
    if count is not None:
        usage = Usage(input=count_of(count), raw={"inputTextTokenCount": count})
    return Decoded(counted("titan", body, [vector], expected), usage)


COHERE_TASKS = {
    "query": "search_query",
    "document": "search_document",
    "classification": "classification",
    "clustering": "clustering",
}
"""Cohere's ``input_type`` of each neutral task it takes."""


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
    data = json_object("cohere", body)
    found = data.get("embeddings")
    if isinstance(found, dict):  # response_type embeddings_by_type
        found = found.get("float")
    if not isinstance(found, list):
        raise malformed("cohere", body, "has no float embeddings")
    vectors = [floats(item, "cohere", body) for item in found]
    return Decoded(counted("cohere", body, vectors, expected), None)


_WIRES = {
    "titan": EmbeddingWire("titan", 1, _titan_encode, _titan_decode),
    "cohere": EmbeddingWire("cohere", 96, _cohere_encode, _cohere_decode, COHERE_TASKS),
}


def _choose(model: str, _cloud: str) -> EmbeddingWire | None:
    if "titan-embed" in model:
        return _WIRES["titan"]
    if "cohere.embed" in model:
        return _WIRES["cohere"]
    return None


EMBEDDINGS = EmbeddingWires(_WIRES, _choose)
"""Bedrock's embedding wires, chosen by the model id."""

__all__ = ["COHERE_TASKS", "EMBEDDINGS"]
