"""Gemini's token counting: ``POST /v1beta/models/{model}:countTokens`` takes
the whole ``generateContent`` request as ``generateContentRequest`` (its
``model`` named ``models/…``) and answers ``{"totalTokens": N, …}``."""

from __future__ import annotations

import msgspec

from elelem.errors import UnsupportedError
from elelem.wire import EncodedRequest, ModelRequest
from elelem.wire.counting import TokenCounter


def count_request(encoded: EncodedRequest, request: ModelRequest) -> EncodedRequest:
    """The ``countTokens`` call of the ``generateContent`` request ``encoded``."""
    path = encoded.path.partition("?")[0]
    base, colon, _method = path.rpartition(":")
    if not colon:
        raise UnsupportedError(f"a Gemini request path without a method: {encoded.path}")
    model = request.model if request.model.startswith("models/") else f"models/{request.model}"
    return msgspec.structs.replace(
        encoded,
        path=f"{base}:countTokens",
        body={"generateContentRequest": {"model": model, **encoded.body}},
        stream=False,
    )


COUNTER = TokenCounter(
    "Gemini countTokens", count_request, lambda answer: answer.get("totalTokens")
)
"""How the Gemini wire counts."""

__all__ = ["COUNTER", "count_request"]
