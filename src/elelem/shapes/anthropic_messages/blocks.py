"""How Anthropic Messages content blocks are built from their events: a
block's start, its deltas (text, citations, thinking, signatures, tool
input JSON, and deltas nobody modelled, kept), its stop, and the hosted
activity a server tool's blocks describe.  Sans-IO.

:class:`~elelem.shapes.anthropic_messages.parser.MessagesParser` reads the
message events and the fast path; :class:`MessagesBlocks`, which it is
built on, handles the content-block events in :class:`Block`.
"""

from __future__ import annotations

import copy
import html
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

import msgspec

from elelem.shapes.anthropic_messages.encoder import UNKNOWN_DELTAS
from elelem.shapes.anthropic_messages.mapping import (
    HOSTED_CALLS,
    is_hosted_result,
    mcp_input,
    mcp_outcome,
    result_outcome,
    result_tool_name,
    version_for,
)
from elelem.shapes.anthropic_messages.media import anthropic_document_source
from elelem.shapes.common import fold_fields, malformed
from elelem.shapes.media import RequestDocuments, request_documents
from elelem.stream import (
    BlockEnd,
    BlockKey,
    BlockStart,
    Chunk,
    Citation,
    Hosted,
    Payload,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
)
from elelem.vocabulary import (
    ActivityId,
    Attribution,
    HostedActivity,
    ProviderId,
    ProviderPayload,
    Source,
    neutral_activity_name,
)
from elelem.vocabulary.json import decode_json
from elelem.wire import ModelRequest

# Fields of a content block the neutral blocks model; any other field is kept
# in a ``block_fields`` payload so native replay rebuilds the block exactly.
_MODELED: dict[str, frozenset[str]] = {
    "text": frozenset({"type", "text", "citations"}),
    "thinking": frozenset({"type", "thinking", "signature"}),
    "redacted_thinking": frozenset({"type", "data"}),
    "tool_use": frozenset({"type", "id", "name", "input"}),
}

_DELTA_FIELDS: dict[str, frozenset[str]] = {
    "text_delta": frozenset({"type", "text"}),
    "citations_delta": frozenset({"type", "citation"}),
    "thinking_delta": frozenset({"type", "thinking"}),
    "signature_delta": frozenset({"type", "signature"}),
    "input_json_delta": frozenset({"type", "partial_json"}),
}
"""The fields of each known delta type the parser reads; any other field of a
known delta on a modeled block joins the block's ``block_fields``."""

RequestArg: TypeAlias = ModelRequest | Mapping[str, Any] | None
"""What a parser learns tool versions from: the neutral request, the raw wire request JSON, or nothing."""


def citation_attribution(
    provider: ProviderId, citation: Mapping[str, Any], documents: RequestDocuments | None = None
) -> Attribution:
    """An :class:`Attribution` for one Anthropic citation object, of any type.

    Search citations carry ``url`` and ``title``; document citations carry no
    URL and name the document in ``document_title``, and their source names
    where in the document (characters, pages, content blocks, search-result
    blocks) and, given the request's ``documents``, which message and block
    hold it (a missing title is the document's own).  The raw citation
    (``encrypted_index`` included) is the replay payload; the text block is
    the anchor, so there is no range.  ``cited_text`` arrives with HTML
    entities (``&amp;``, ``&#x27;``); the excerpt is the source text with them
    decoded, while the payload keeps the wire value for replay.
    """
    url = citation.get("url")
    title = citation.get("title")
    if title is None:
        title = citation.get("document_title")
    excerpt = citation.get("cited_text")
    source = anthropic_document_source(citation, documents) or Source(
        url=url if isinstance(url, str) else None,
        title=title if isinstance(title, str) else None,
    )
    return Attribution(
        source=source,
        excerpt=html.unescape(excerpt) if isinstance(excerpt, str) else None,
        range=None,
        replay=ProviderPayload(provider, "citation", None, dict(citation)),
    )


class Block:
    """What the parser keeps of one open content block."""

    __slots__ = ("deltas", "extra", "key", "kind", "raw", "started", "unknown")

    def __init__(self, key: BlockKey, kind: str, raw: dict[str, Any]) -> None:
        self.key = key
        self.kind = kind
        self.raw = raw
        self.deltas: list[str] = []
        self.started = False
        self.extra: dict[str, Any] = {}  # wire fields a modeled block does not model
        self.unknown: list[dict[str, Any]] = []  # deltas of types nobody modelled, in order


# Delta types this parser models; any other delta type on a modeled block is
# kept whole, in order, in the block's ``unknown_deltas`` payload.
KNOWN_DELTAS = frozenset(
    {"text_delta", "citations_delta", "thinking_delta", "signature_delta", "input_json_delta"}
)


class MessagesBlocks:
    """The content blocks of the message being read (a base of
    :class:`~elelem.shapes.anthropic_messages.parser.MessagesParser`, which
    sets these attributes up)."""

    provider: ProviderId
    payload: Callable[[BlockKey, str, object], Payload]  # the skeleton's
    checked: Callable[[BlockKey, str, object, type | tuple[type, ...], str], Payload]
    _versions: dict[str, str]
    _request: RequestArg
    _documents: RequestDocuments | None
    _history: dict[str, HostedActivity] | None
    _blocks: dict[BlockKey, Block]
    _activities: dict[str, HostedActivity]

    # -- blocks ---------------------------------------------------------------

    def _index(self, payload: dict[str, Any]) -> BlockKey:
        index = payload.get("index")
        if isinstance(index, bool) or not isinstance(index, (int, str)):
            raise malformed("anthropic content block event without an index", payload)
        return index

    def _block_start(self, payload: dict[str, Any]) -> list[Chunk]:
        key = self._index(payload)
        raw = payload.get("content_block")
        if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
            raise malformed("anthropic content_block_start without a typed block", payload)
        if key in self._blocks:
            raise malformed(f"anthropic block {key!r} started twice", payload)
        btype = raw["type"]
        raw = copy.deepcopy(raw)
        if btype in ("text", "thinking", "redacted_thinking", "tool_use"):
            kind = btype
        elif btype in HOSTED_CALLS:
            kind = "server"
        elif is_hosted_result(btype):
            kind = "result"
        else:
            kind = "unknown"
        block = Block(key, kind, raw)
        self._blocks[key] = block
        return self._open_chunks(block)

    def _open_chunks(self, block: Block) -> list[Chunk]:
        raw, key = block.raw, block.key
        out: list[Chunk] = []
        if block.kind == "text":
            out.append(BlockStart(key, "text"))
            for citation in raw.get("citations") or []:
                out.append(self._citation(key, citation))
            if raw.get("text"):
                out.append(TextDelta(key, str(raw["text"])))
        elif block.kind == "thinking":
            out.append(BlockStart(key, "reasoning"))
            if raw.get("thinking"):
                out.append(ReasoningDelta(key, str(raw["thinking"])))
            if raw.get("signature") not in (None, ""):
                where = "content_block.signature"
                out.append(self.checked(key, "signature", raw["signature"], str, where))
        elif block.kind == "redacted_thinking":
            out.append(BlockStart(key, "reasoning"))
            data = raw.get("data")
            out.append(self.checked(key, "redacted_thinking", data, str, "content_block.data"))
        elif block.kind == "tool_use":
            bid, name = raw.get("id"), raw.get("name")
            if not isinstance(bid, str) or not isinstance(name, str):
                raise malformed(f"anthropic tool_use block {key!r} without id and name", raw)
            out.append(BlockStart(key, "tool-call", id=bid, name=name))
        else:
            return out
        block.started = True
        block.extra = {k: v for k, v in raw.items() if k not in _MODELED[block.kind]}
        if block.extra:
            out.append(self.payload(key, "block_fields", dict(block.extra)))
        return out

    def _extra_fields(self, block: Block, delta: Mapping[str, Any]) -> Payload:
        """Fold a delta's fields nobody modelled into the block's
        ``block_fields`` (:func:`~elelem.shapes.common.fold_fields`).  The
        payload is sent whole each time; the latest replaces the earlier."""
        fold_fields(block.extra, {k: v for k, v in delta.items() if k != "type"})
        return self.payload(block.key, "block_fields", copy.deepcopy(block.extra))

    def _citation(self, key: BlockKey, citation: object) -> Citation:
        if not isinstance(citation, dict):
            raise malformed(f"anthropic citation on block {key!r} is not an object", citation)
        if self._documents is None:
            request = self._request
            messages = request.messages if isinstance(request, ModelRequest) else ()
            self._documents = request_documents(messages)
        return Citation(key, citation_attribution(self.provider, citation, self._documents))

    def _block_delta(self, payload: dict[str, Any]) -> list[Chunk]:
        key = self._index(payload)
        block = self._blocks.get(key)
        if block is None:
            raise malformed(f"anthropic delta for block {key!r} that is not open", payload)
        delta = payload.get("delta")
        if not isinstance(delta, dict) or not isinstance(delta.get("type"), str):
            raise malformed(f"anthropic delta for block {key!r} without a type", payload)
        dtype, kind = delta["type"], block.kind
        if block.started and dtype in _DELTA_FIELDS and not delta.keys() <= _DELTA_FIELDS[dtype]:
            # A known delta with fields nobody modelled: the delta itself, then
            # the rest joins the block's fields.
            known = _DELTA_FIELDS[dtype]
            out = self._block_delta(
                {**payload, "delta": {k: delta[k] for k in known if k in delta}}
            )
            rest = {k: v for k, v in delta.items() if k not in known}
            return [*out, self._extra_fields(block, rest)]
        if kind == "text" and dtype == "text_delta":
            return [TextDelta(key, delta_text(delta, "text", key))]
        if kind == "text" and dtype == "citations_delta":
            return [self._citation(key, delta.get("citation"))]
        if kind == "thinking" and dtype == "thinking_delta":
            return [ReasoningDelta(key, delta_text(delta, "thinking", key))]
        if kind == "thinking" and dtype == "signature_delta":
            signature = delta.get("signature")
            return [self.checked(key, "signature", signature, str, "delta.signature")]
        if kind == "tool_use" and dtype == "input_json_delta":
            block.deltas.append(delta_text(delta, "partial_json", key))
            return [ToolCallDelta(key, block.deltas[-1])]
        if kind in ("server", "result", "unknown"):
            fold_delta(block, delta, key)
            return []
        if dtype not in KNOWN_DELTAS and block.started:
            # Each one whole, with its type, in order: what it meant is not
            # known, so nothing of it is merged or guessed.
            block.unknown.append(copy.deepcopy(delta))
            return [self.payload(key, UNKNOWN_DELTAS, copy.deepcopy(block.unknown))]
        raise malformed(f"anthropic {dtype} delta is not valid for a {kind} block {key!r}", delta)

    def _block_stop(self, payload: dict[str, Any]) -> list[Chunk]:
        key = self._index(payload)
        block = self._blocks.pop(key, None)
        if block is None:
            raise malformed(f"anthropic content_block_stop for block {key!r} that is not open")
        if block.kind == "tool_use" and not block.deltas:
            # A complete block (non-streaming, or prefilled) carries its input whole.
            given = block.raw.get("input")
            if given not in (None, {}):
                return [ToolCallDelta(key, msgspec.json.encode(given).decode()), BlockEnd(key)]
        if block.started:
            return [BlockEnd(key)]
        finish_input(block, key)
        if block.kind == "server":
            return [Hosted(self._started_activity(block.raw))]
        if block.kind == "result":
            return [Hosted(self._result_activity(block.raw))]
        return [BlockStart(key, "unknown", raw=block.raw), BlockEnd(key)]

    def _started_activity(self, raw: dict[str, Any]) -> HostedActivity:
        aid, name, btype = raw.get("id"), raw.get("name"), str(raw["type"])
        if not isinstance(aid, str) or not isinstance(name, str):
            raise malformed(f"anthropic {btype} block without id and name", raw)
        if btype == "mcp_tool_use":
            neutral, given, version = "mcp", mcp_input(raw), None
        else:
            neutral, given = neutral_activity_name(name), raw.get("input")
            version = version_for(name, self._versions)
        activity = HostedActivity(
            id=ActivityId(aid),
            name=neutral,
            state="started",
            input=given,
            payload=ProviderPayload(self.provider, btype, version, raw),
        )
        self._activities[aid] = activity
        return activity

    def _earlier_activities(self) -> dict[str, HostedActivity]:
        if self._history is None:
            self._history = activities_in(self._request, self.provider, self._versions)
        return self._history

    def _result_activity(self, raw: dict[str, Any]) -> HostedActivity:
        aid = raw.get("tool_use_id")
        if not isinstance(aid, str):
            raise malformed(f"anthropic {raw['type']} block without tool_use_id", raw)
        started = self._activities.get(aid)
        if started is None:
            # Its server_tool_use came in an earlier response (a paused turn,
            # programmatic calls): the request history may still name it.
            started = self._earlier_activities().get(aid)
        if started is not None:
            name, given = started.name, started.input
            version = started.payload.version if started.payload is not None else None
        else:
            wire_name, given = result_tool_name(raw["type"]), None
            name, version = neutral_activity_name(wire_name), version_for(wire_name, self._versions)
        if raw["type"] == "mcp_tool_result":
            tool = given.get("name") if isinstance(given, dict) else None
            failed, summary = mcp_outcome(raw, tool)
        else:
            failed, summary = result_outcome(raw)
        return HostedActivity(
            id=ActivityId(aid),
            name=name,
            state="failed" if failed else "completed",
            input=given,
            summary=summary,
            payload=ProviderPayload(self.provider, str(raw["type"]), version, raw),
        )


def activities_in(
    request: RequestArg, provider: ProviderId, versions: Mapping[str, str]
) -> dict[str, HostedActivity]:
    """The started hosted activities a request's history holds, by id."""
    found: dict[str, HostedActivity] = {}
    if isinstance(request, ModelRequest):
        for message in request.messages:
            for part in message.content:
                if isinstance(part, HostedActivity) and part.state == "started":
                    found[part.id] = part
        return found
    messages = request.get("messages") if isinstance(request, Mapping) else None
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, Mapping) else None
        for block in content if isinstance(content, list) else []:
            if not (isinstance(block, Mapping) and block.get("type") in HOSTED_CALLS):
                continue
            aid, name, btype = block.get("id"), block.get("name"), str(block["type"])
            if isinstance(aid, str) and isinstance(name, str):
                mcp = btype == "mcp_tool_use"
                version = None if mcp else version_for(name, versions)
                payload = ProviderPayload(provider, btype, version, copy.deepcopy(block))
                found[aid] = HostedActivity(
                    ActivityId(aid),
                    "mcp" if mcp else neutral_activity_name(name),
                    "started",
                    mcp_input(block) if mcp else block.get("input"),
                    "",
                    payload,
                )
    return found


def delta_text(delta: Mapping[str, Any], field: str, key: BlockKey) -> str:
    """The string ``field`` of ``delta``; malformed without one."""
    value = delta.get(field)
    if not isinstance(value, str):
        raise malformed(f"anthropic {delta.get('type')} on block {key!r} lacks string {field!r}")
    return value


def fold_delta(block: Block, delta: dict[str, Any], key: BlockKey) -> None:
    """Apply a delta to a block kept raw: JSON input is buffered, strings are
    appended to the same-named field, a citation joins ``citations``."""
    raw = block.raw
    for field, value in delta.items():
        if field == "type":
            continue
        if field == "partial_json" and isinstance(value, str):
            block.deltas.append(value)
        elif field == "citation":
            citations = raw.setdefault("citations", [])
            if not isinstance(citations, list):
                raise malformed(f"cannot add a citation to block {key!r}", delta)
            citations.append(value)
        elif field == "signature" or raw.get(field) is None:
            raw[field] = copy.deepcopy(value)
        elif isinstance(raw[field], str) and isinstance(value, str):
            raw[field] += value
        else:
            raise malformed(
                f"cannot apply anthropic {delta.get('type')} field {field!r} "
                f"to {raw.get('type')} block {key!r}",
                delta,
            )


def finish_input(block: Block, key: BlockKey) -> None:
    """Decode a finished tool block's streamed argument JSON into its ``input``."""
    if not block.deltas:
        return
    text = "".join(block.deltas)
    if not text.strip():
        return
    try:
        block.raw["input"] = decode_json(text)
    except msgspec.DecodeError as exc:
        raise malformed(f"anthropic block {key!r} input JSON is incomplete: {exc}") from None


__all__ = [
    "KNOWN_DELTAS",
    "Block",
    "MessagesBlocks",
    "RequestArg",
    "activities_in",
    "citation_attribution",
    "delta_text",
    "finish_input",
    "fold_delta",
]
