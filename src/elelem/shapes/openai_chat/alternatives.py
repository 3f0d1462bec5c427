"""The other choices of an ``n>1`` Chat Completions response, as responses.

A request with ``n`` greater than one gets ``n`` choices.  The first is the
response's content, as for ``n=1``; the others are kept whole on the
response's finish (:data:`~elelem.shapes.openai_chat.parser.ALTERNATIVES_FORMAT`),
each as the ``message`` a non-streamed response holds, never an error and
never merged into the first.  :func:`alternatives` reads each one back
through the same parser, so an alternative is a response like the first: its
text, reasoning and tool calls as blocks, its payloads ready for native
replay (``alternatives(r)[0].to_message()`` continues a conversation with
the second choice instead of the first).
"""

from __future__ import annotations

from typing import Any

import msgspec

from elelem.shapes.openai_chat.blocks import ALTERNATIVES_FORMAT
from elelem.shapes.openai_chat.parser import parse_body
from elelem.stream import AssembledResponse, assemble
from elelem.vocabulary import ProviderId


def alternatives(response: AssembledResponse) -> tuple[AssembledResponse, ...]:
    """The choices beyond the first of ``response``, in choice order, each
    assembled as its own response (same id, model and provider; no usage:
    the wire counts all choices once, on the first)."""
    finish = response.finish
    if finish is None:
        return ()
    out: list[AssembledResponse] = []
    for payload in finish.payloads:
        if payload.format != ALTERNATIVES_FORMAT or not isinstance(payload.value, list):
            continue
        provider = ProviderId(payload.provider)
        for choice in payload.value:
            if not isinstance(choice, dict):
                continue
            one: dict[str, Any] = {**choice, "index": 0}
            body = {"id": response.response_id, "model": response.model, "choices": [one]}
            chunks = parse_body(msgspec.json.encode(body), provider)
            out.append(assemble(chunks, provider))
    return tuple(out)


__all__ = ["alternatives"]
