"""What the wires share about counting tokens: a counting endpoint beside the
sending one that takes a subset of the same body (Anthropic's
``/messages/count_tokens``, OpenAI's ``/responses/input_tokens``)."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from elelem.wire import EncodedRequest, ModelRequest


def endpoint_beside(
    suffix: str, keys: frozenset[str]
) -> Callable[[EncodedRequest, ModelRequest], EncodedRequest]:
    """A rewrite of the sending request to its path plus ``suffix``, keeping
    only the body's ``keys``, not streamed."""

    def rewrite(encoded: EncodedRequest, _request: ModelRequest) -> EncodedRequest:
        return msgspec.structs.replace(
            encoded,
            path=encoded.path.rstrip("/") + suffix,
            body={k: v for k, v in encoded.body.items() if k in keys},
            stream=False,
        )

    return rewrite


__all__ = ["endpoint_beside"]
