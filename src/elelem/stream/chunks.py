"""The chunk protocol every shape emits.

A stream is ``response-start``, then any interleaving of block grammars
(``block-start``, deltas, ``citation``, ``payload``, ``block-end``) and
``hosted`` transitions and ``usage`` reports, then ``finish`` exactly once,
last.  A ``retry`` notice (the client's visible retry policy) may come before
``response-start``: it belongs to no response.  ``index`` is an opaque grouping key chosen by the shape, not a slot:
it may be reused after its block ended.
"""

from __future__ import annotations

from typing import TypeAlias

import msgspec

from elelem.vocabulary import Attribution, HostedActivity, ProviderId, ProviderPayload, Usage
from elelem.vocabulary.json import JSONValue

BlockKey: TypeAlias = int | str


class ResponseStart(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="response-start"):
    """A provider response began: its id and model, where the wire names them."""

    response_id: str | None = None
    model: str | None = None
    provider: ProviderId | None = None


class BlockStart(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="block-start"):
    """A content block opens under ``index``.

    ``block`` is the block kind: ``text``, ``reasoning`` or ``tool-call``,
    whose content streams in deltas, or any other kind (conventionally
    ``unknown``) for a provider block that arrives whole as the JSON object
    ``raw``.  The assembler builds that from ``raw["type"]``: the registered
    plugin type for the tag, else an ``UnknownBlock``.  A tool call carries
    ``id`` and ``name``.
    """

    index: BlockKey
    block: str
    id: str | None = None
    name: str | None = None
    raw: dict[str, JSONValue] | None = None


class TextDelta(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="text-delta"):
    """More text for the open text block ``index``."""

    index: BlockKey
    text: str


class ReasoningDelta(
    msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="reasoning-delta"
):
    """More reasoning text for the open reasoning block ``index``."""

    index: BlockKey
    text: str


class ToolCallDelta(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="tool-call-delta"):
    """More argument JSON text for the open tool-call block ``index``."""

    index: BlockKey
    arguments: str


class Citation(msgspec.Struct, frozen=True, tag_field="type", tag="citation"):
    """An attribution for the open text block ``index``, in arrival order."""

    index: BlockKey
    attribution: Attribution


class Payload(msgspec.Struct, frozen=True, tag_field="type", tag="payload"):
    """A provider payload for the open block ``index``.

    Replace semantics: a payload with the same provider and format as an
    earlier one on the same block replaces it (a later signature wins).
    """

    index: BlockKey
    payload: ProviderPayload


class BlockEnd(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="block-end"):
    """The block ``index`` is complete; the assembler commits it."""

    index: BlockKey


class Hosted(msgspec.Struct, frozen=True, tag_field="type", tag="hosted"):
    """A hosted-activity transition, committed as it arrives."""

    transition: HostedActivity


class UsageUpdate(msgspec.Struct, frozen=True, tag_field="type", tag="usage"):
    """The response's usage so far.  Replace semantics: the latest report wins
    (shapes turn cumulative or split wire counters into one full value)."""

    usage: Usage


class Finish(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="finish"):
    """The response ended.  ``reason`` is a member of the open set of finish
    reasons; ``raw`` the provider's own value; ``failure`` says why for
    ``error``.  ``payloads`` keep response-level native data (the provider's
    message envelope: stop details, container, context management) that no
    block owns."""

    reason: str
    raw: str | None = None
    failure: str | None = None
    payloads: tuple[ProviderPayload, ...] = ()


class Retry(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="retry"):
    """The transport is about to send the request again (the client's visible
    retry policy): attempt ``attempt`` failed before any chunk of a response
    arrived, with an error of ``kind`` (``rate-limit``, ``transport``, …;
    ``status`` when the server answered), and the next attempt starts after
    ``delay`` seconds (the server's ``retry-after`` honoured).  ``reason`` is
    a short phrase for a person (``rate limit``); ``message`` the start of
    the error's own, ``request_id`` the failed attempt's.  ``fallback`` names
    the target the request moves to when a :class:`~elelem.Fallback` moves
    on (``delay`` 0), and is None for a retry of the same target.

    Not part of any response's grammar: it comes before the ``response-start``
    of the attempt that follows, and the assembler passes it over.
    """

    attempt: int
    delay: float
    reason: str
    kind: str
    status: int | None = None
    message: str = ""
    request_id: str | None = None
    fallback: str | None = None


Chunk: TypeAlias = (
    ResponseStart
    | BlockStart
    | TextDelta
    | ReasoningDelta
    | ToolCallDelta
    | Citation
    | Payload
    | BlockEnd
    | Hosted
    | UsageUpdate
    | Finish
    | Retry
)

__all__ = [
    "BlockEnd",
    "BlockKey",
    "BlockStart",
    "Chunk",
    "Citation",
    "Finish",
    "Hosted",
    "Payload",
    "ReasoningDelta",
    "ResponseStart",
    "Retry",
    "TextDelta",
    "ToolCallDelta",
    "UsageUpdate",
]
