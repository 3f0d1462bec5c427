"""The Anthropic Messages frame parser (sans-IO): SSE frames in, chunks out.

One Anthropic content block becomes one block grammar (``block-start`` …
``block-end``), except server tools: a ``server_tool_use`` block (or an MCP
connector's ``mcp_tool_use``, activity ``mcp``) becomes a hosted *started*
transition and each ``*_tool_result`` block the activity's *completed* or
*failed* transition.  The activity is named by the neutral
table (``bash_code_execution`` -> ``code_execution``, ``tool_search_tool_regex``
-> ``tool_search``); the raw block in its payload keeps Anthropic's name.  Block types this parser does not model
(``compaction``, future ones) become unknown blocks holding
the raw block with its deltas applied, in position.  The non-streaming JSON
response goes through the same code (:func:`response_chunks`).
"""

from __future__ import annotations

import copy
import html
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

import msgspec

from elelem.shapes.anthropic_messages.encoder import EVENT_TYPE, UNKNOWN_DELTAS
from elelem.shapes.anthropic_messages.errors import error_from_event
from elelem.shapes.anthropic_messages.fast import (
    DELTA_EVENT,
    HotJson,
    HotText,
    HotThinking,
    hot_decoder,
)
from elelem.shapes.anthropic_messages.mapping import (
    HOSTED_CALLS,
    finish_reason,
    is_hosted_result,
    map_usage,
    mcp_input,
    mcp_outcome,
    result_outcome,
    result_tool_name,
    tool_versions_from_request,
    tool_versions_from_wire,
    version_for,
)
from elelem.shapes.anthropic_messages.media import anthropic_document_source
from elelem.shapes.common import fold_fields, malformed
from elelem.shapes.media import RequestDocuments, request_documents
from elelem.shapes.skeleton import (
    ParserSkeleton,
    decode_whole_object,
    unknown_finish,
)
from elelem.stream import (
    BlockEnd,
    BlockKey,
    BlockStart,
    Chunk,
    Citation,
    Finish,
    Hosted,
    Payload,
    ReasoningDelta,
    ResponseStart,
    TextDelta,
    ToolCallDelta,
    UsageUpdate,
)
from elelem.stream.frames import DataRun
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


_EVENT_FIELDS: dict[str, frozenset[str]] = {
    "ping": frozenset({"type"}),
    "message_start": frozenset({"type", "message"}),
    "content_block_start": frozenset({"type", "index", "content_block"}),
    "content_block_delta": frozenset({"type", "index", "delta"}),
    "content_block_stop": frozenset({"type", "index"}),
    "message_stop": frozenset({"type"}),
}
"""The fields of each known event the parser reads; any other is kept as an
``anthropic.event`` field block (``message_delta``'s other fields belong to
the message and join its envelope)."""

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


class _Block:
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
_KNOWN_DELTAS = frozenset(
    {"text_delta", "citations_delta", "thinking_delta", "signature_delta", "input_json_delta"}
)


class MessagesParser(ParserSkeleton):
    """Parser of one streamed Anthropic Messages response (a FrameParser on
    the :class:`~elelem.shapes.skeleton.ParserSkeleton`).

    ``request`` (the neutral request, or the raw wire request JSON) tells
    which hosted tool versions were selected; it may be None.  An event type
    this parser does not model is kept as an ``anthropic.event`` unknown
    block, and so is a field it does not model on a known event (one block
    per field, again when its value changes); a field it does not model on a
    known delta joins that block's ``block_fields`` payload (strings
    appended to the same field), which native replay puts back on the block;
    a delta of a type it does not model on a modeled block is kept whole, in
    order, in the block's :data:`UNKNOWN_DELTAS` payload.
    """

    what = "anthropic"
    takes_runs = True
    event_type = EVENT_TYPE

    def __init__(self, provider: ProviderId, request: RequestArg = None) -> None:
        super().__init__(provider)
        if isinstance(request, ModelRequest):
            self._versions = tool_versions_from_request(request)
        elif isinstance(request, Mapping):
            self._versions = tool_versions_from_wire(request.get("tools"))
        else:
            self._versions = {}
        self._request = request
        self._documents: RequestDocuments | None = None
        self._history: dict[str, HostedActivity] | None = None
        self._blocks: dict[BlockKey, _Block] = {}
        self._activities: dict[str, HostedActivity] = {}
        self._early: list[Chunk] = []  # unknown events before message_start
        self._stop_reason: str | None = None
        self._envelope: dict[str, Any] = {}
        self._usage: dict[str, Any] = {}
        self._hot = hot_decoder()
        # The events after ``message_start`` this parser models (``ping`` and
        # ``error`` are decided before): event type -> handler.
        self._handlers: dict[str, Callable[[dict[str, Any]], list[Chunk]]] = {
            "content_block_start": self._block_start,
            DELTA_EVENT: self._on_block_delta,
            "content_block_stop": self._block_stop,
            "message_delta": self._message_delta,
            "message_stop": self._on_message_stop,
        }

    # -- the skeleton's hooks ------------------------------------------------

    def fast(self, event: str, data: str) -> list[Chunk] | None:
        """The chunks of a typed ``content_block_delta``, as :meth:`_block_delta`
        gives them (and the fields nobody modelled it carries, as :meth:`event`
        keeps them); None where the dict path must decide (not the hot frame
        exactly, an error, any other delta of a block kept raw)."""
        try:
            frame = self._hot.decoder.decode(data)
        except msgspec.DecodeError:
            return None
        return self._hot_frame(frame)

    def fast_values(self, run: DataRun, start: int, out: list[Chunk]) -> int:
        """The hot frames of ``run`` from frame ``start`` on: what :meth:`fast`
        does frame by frame, with text or thinking for its open block (a
        learnt field as last kept) taken inline."""
        hot = self._hot
        values = run.data
        decode, append, blocks = hot.decoder.decode, out.append, self._blocks
        index, end = start, len(values)
        base = self.frames - start  # frames[i] is frame number base + i + 1
        while index < end:
            try:
                frame = decode(values[index])
            except msgspec.DecodeError:
                break
            block = blocks.get(frame.index)
            if block is not None and (not hot.extra or hot.raws(frame) == hot.last):
                delta, kind = frame.delta, block.kind
                if kind == "text" and type(delta) is HotText:
                    append(TextDelta(frame.index, delta.text))
                    index += 1
                    continue
                if kind == "thinking" and type(delta) is HotThinking:
                    append(ReasoningDelta(frame.index, delta.thinking))
                    index += 1
                    continue
            self.frames = base + index + 1  # counted before the general rule, as in message()
            chunks = self._hot_frame(frame)
            if chunks is None:
                break
            out += chunks
            index += 1
        self.frames = base + index
        return index

    def _hot_frame(self, frame: Any) -> list[Chunk] | None:
        """A decoded hot frame's chunks, or None (before touching any state)."""
        hot = self._hot
        key = frame.index
        block = self._blocks.get(key)
        if block is None:
            return None
        delta, kind = frame.delta, block.kind
        out: list[Chunk]
        if kind == "text":
            if type(delta) is not HotText:
                return None
            out = [TextDelta(key, delta.text)]
        elif kind == "thinking":
            if type(delta) is not HotThinking:
                return None
            out = [ReasoningDelta(key, delta.thinking)]
        elif type(delta) is HotJson:
            if kind == "tool_use":
                block.deltas.append(delta.partial_json)
                out = [ToolCallDelta(key, delta.partial_json)]
            elif kind in ("server", "result", "unknown"):
                # What _fold does with a delta holding only partial_json.
                block.deltas.append(delta.partial_json)
                out = []
            else:
                return None
        else:
            return None
        if hot.extra and hot.raws(frame) != hot.last:
            out += hot.kept(self, frame)
        return out

    # -- events ---------------------------------------------------------------

    def event(self, payload: dict[str, Any], event: str = "") -> list[Chunk]:
        """Apply one decoded event payload; return its chunks."""
        etype = payload.get("type", event)
        if etype == "error":
            raise error_from_event(payload)
        if self.finished:
            if etype == "ping":
                return []
            raise malformed(f"anthropic {etype} event after message_stop", payload)
        modelled = _EVENT_FIELDS.get(etype)
        out = self._event(etype, payload)
        if modelled is None or payload.keys() <= modelled:
            return out
        if etype == DELTA_EVENT:
            self._hot.learn(payload.keys() - modelled)
        kept = self.event_fields(str(etype), payload, modelled)
        if not self.started:
            self._early.extend(kept)  # kept for after the response-start
        elif out and isinstance(out[-1], Finish):
            out[-1:-1] = kept
        else:
            out += kept
        return out

    def _event(self, etype: Any, payload: dict[str, Any]) -> list[Chunk]:
        if etype == "ping":
            return []
        if etype == "message_start":
            return self._message_start(payload)
        handler = self._handlers.get(etype) if isinstance(etype, str) else None
        if handler is None:
            kept = self.unknown_event(str(etype), payload)
            if not self.started:
                # Kept for after the response-start, which must come first.
                self._early.extend(kept)
                return []
            return kept
        if not self.started:
            raise malformed(f"anthropic {etype} event before message_start", payload)
        return handler(payload)

    def _on_block_delta(self, payload: dict[str, Any]) -> list[Chunk]:
        self._hot.stale()  # the dict path may change what the hot frame relies on
        return self._block_delta(payload)

    def _on_message_stop(self, payload: dict[str, Any]) -> list[Chunk]:
        del payload  # its fields beyond ``type`` are kept by event()
        return self._message_stop()

    def _message_start(self, payload: dict[str, Any]) -> list[Chunk]:
        if self.started:
            raise malformed("second anthropic message_start in one response", payload)
        message = payload.get("message")
        if not isinstance(message, dict):
            raise malformed("anthropic message_start without a message object", payload)
        self.started = True
        out: list[Chunk] = [self._response_start(message), *self._early]
        self._early = []
        # A message_start can arrive already holding content (programmatic tool
        # calling resumes this way); those blocks are complete.
        content = message.get("content") or []
        if not isinstance(content, list):
            raise malformed("anthropic message content is not a list", payload)
        for i, block in enumerate(content):
            out.extend(self._whole_block(f"m{i}", block))
        return out + self._usage_update(message.get("usage"))

    def _response_start(self, message: dict[str, Any]) -> ResponseStart:
        self._envelope = {k: v for k, v in message.items() if k != "content"}
        stop = message.get("stop_reason")
        if isinstance(stop, str):
            self._stop_reason = stop
        rid, model = message.get("id"), message.get("model")
        return ResponseStart(
            response_id=rid if isinstance(rid, str) else None,
            model=model if isinstance(model, str) else None,
            provider=self.provider,
        )

    def _whole_block(self, key: BlockKey, block: object) -> list[Chunk]:
        out = self._block_start({"index": key, "content_block": block})
        return out + self._block_stop({"index": key})

    def _usage_update(self, usage: object) -> list[Chunk]:
        if not isinstance(usage, dict):
            return []
        # message_delta usage is cumulative: its counters replace earlier ones.
        self._usage.update(usage)
        return [UsageUpdate(map_usage(self._usage))]

    def _message_delta(self, payload: dict[str, Any]) -> list[Chunk]:
        delta = payload.get("delta")
        if isinstance(delta, dict):
            stop = delta.get("stop_reason")
            if isinstance(stop, str):
                self._stop_reason = stop
            self._envelope.update(delta)
        for key, value in payload.items():
            if key not in ("type", "delta", "usage"):
                self._envelope[key] = value
        return self._usage_update(payload.get("usage"))

    def _message_stop(self) -> list[Chunk]:
        if self._blocks:
            keys = ", ".join(repr(k) for k in self._blocks)
            raise malformed(f"anthropic message_stop while blocks {keys} are open")
        self.finished = True
        if self._usage:
            self._envelope["usage"] = dict(self._usage)
        envelope = ProviderPayload(self.provider, "message", None, self._envelope)
        reason = self._stop_reason
        if reason is None:
            return [unknown_finish((envelope,))]
        return [Finish(finish_reason(reason), raw=reason, payloads=(envelope,))]

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
        block = _Block(key, kind, raw)
        self._blocks[key] = block
        return self._open_chunks(block)

    def _open_chunks(self, block: _Block) -> list[Chunk]:
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
            if raw.get("signature"):
                out.append(self.payload(key, "signature", raw["signature"]))
        elif block.kind == "redacted_thinking":
            out.append(BlockStart(key, "reasoning"))
            out.append(self.payload(key, "redacted_thinking", raw.get("data")))
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

    def _extra_fields(self, block: _Block, delta: Mapping[str, Any]) -> Payload:
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
            return [TextDelta(key, _text(delta, "text", key))]
        if kind == "text" and dtype == "citations_delta":
            return [self._citation(key, delta.get("citation"))]
        if kind == "thinking" and dtype == "thinking_delta":
            return [ReasoningDelta(key, _text(delta, "thinking", key))]
        if kind == "thinking" and dtype == "signature_delta":
            return [self.payload(key, "signature", _text(delta, "signature", key))]
        if kind == "tool_use" and dtype == "input_json_delta":
            block.deltas.append(_text(delta, "partial_json", key))
            return [ToolCallDelta(key, block.deltas[-1])]
        if kind in ("server", "result", "unknown"):
            _fold(block, delta, key)
            return []
        if dtype not in _KNOWN_DELTAS and block.started:
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
        _finish_input(block, key)
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
            self._history = _activities_in(self._request, self.provider, self._versions)
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


def _activities_in(
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


def _text(delta: Mapping[str, Any], field: str, key: BlockKey) -> str:
    value = delta.get(field)
    if not isinstance(value, str):
        raise malformed(f"anthropic {delta.get('type')} on block {key!r} lacks string {field!r}")
    return value


def _fold(block: _Block, delta: dict[str, Any], key: BlockKey) -> None:
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


def _finish_input(block: _Block, key: BlockKey) -> None:
    if not block.deltas:
        return
    text = "".join(block.deltas)
    if not text.strip():
        return
    try:
        block.raw["input"] = decode_json(text)
    except msgspec.DecodeError as exc:
        raise malformed(f"anthropic block {key!r} input JSON is incomplete: {exc}") from None


def parse_body(body: bytes, provider: ProviderId, request: RequestArg = None) -> list[Chunk]:
    """The chunks of a non-streaming JSON response body (the same a stream gives).

    An ``error`` object raises its typed error; a body that is not a JSON
    object raises :class:`~elelem.errors.MalformedStreamError`.
    """
    data = decode_whole_object(body, "anthropic response body")
    if data.get("type") == "error":
        raise error_from_event(data)
    return response_chunks(data, provider, request)


def response_chunks(
    message: Mapping[str, Any], provider: ProviderId, request: RequestArg = None
) -> list[Chunk]:
    """The chunks of a non-streaming Messages response (the same a stream gives)."""
    parser = MessagesParser(provider, request)
    start = {k: v for k, v in message.items() if k != "content"}
    chunks = parser.event({"type": "message_start", "message": {**start, "content": []}})
    content = message.get("content") or []
    if not isinstance(content, list):
        raise malformed("anthropic message content is not a list")
    for i, block in enumerate(content):
        chunks.extend(parser._whole_block(i, block))
    chunks.extend(parser.event({"type": "message_stop"}))
    return chunks


__all__ = [
    "MessagesParser",
    "citation_attribution",
    "parse_body",
    "response_chunks",
]
