"""Ollama's own embeddings, ``POST /api/embed`` (at most 512 texts a
request, as elelem sends them), sans-IO: the OpenAI-style body, answered by
``{"embeddings": [[…], …], "prompt_eval_count": N}``."""

from __future__ import annotations

from elelem.shapes.embeddings import count_of, counted, floats, json_object, listed, openai_body
from elelem.vocabulary import Usage
from elelem.wire.embeddings import Decoded, EmbeddingWire, EmbeddingWires


def _ollama_decode(body: bytes, expected: int) -> Decoded:
    data = json_object("ollama", body)
    # The older /api/embeddings route answers one "embedding": elelem calls
    # /api/embed, but recordings and servers still carry the old one.
    vectors = [floats(item, "ollama", body) for item in listed("ollama", body, data)]
    count = data.get("prompt_eval_count")
    usage = (
        Usage(input=count_of(count), raw={"prompt_eval_count": count})
        if count is not None
        else None
    )
    return Decoded(counted("ollama", body, vectors, expected), usage)


_OLLAMA = EmbeddingWire(
    "ollama", 512, lambda batch: ("/api/embed", openai_body(batch, b64=False)), _ollama_decode
)

EMBEDDINGS = EmbeddingWires({"ollama": _OLLAMA}, lambda _model, _cloud: _OLLAMA)
"""Ollama's embedding wire."""

__all__ = ["EMBEDDINGS"]
