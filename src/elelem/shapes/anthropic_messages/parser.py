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

from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from elelem.shapes.anthropic_messages.blocks import (
    Block,
    MessagesBlocks,
    RequestArg,
    citation_attribution,
)
from elelem.shapes.anthropic_messages.encoder import EVENT_TYPE
from elelem.shapes.anthropic_messages.errors import error_from_event
from elelem.shapes.anthropic_messages.fast import (
    DELTA_EVENT,
    HotJson,
    HotText,
    HotThinking,
    hot_decoder,
)
from elelem.shapes.anthropic_messages.mapping import (
    finish_reason,
    map_usage,
    tool_versions_from_request,
    tool_versions_from_wire,
)
from elelem.shapes.common import malformed
from elelem.shapes.media import RequestDocuments
from elelem.shapes.skeleton import (
    ParserSkeleton,
    decode_whole_object,
    unknown_finish,
)
from elelem.stream import (
    BlockKey,
    Chunk,
    Finish,
    ReasoningDelta,
    ResponseStart,
    TextDelta,
    ToolCallDelta,
    UsageUpdate,
)
from elelem.stream.frames import DataRun
from elelem.vocabulary import (
    HostedActivity,
    ProviderId,
    ProviderPayload,
)
from elelem.wire import ModelRequest

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


class MessagesParser(MessagesBlocks, ParserSkeleton):
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
        self._blocks: dict[BlockKey, Block] = {}
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
                # What fold_delta does with a delta holding only partial_json.
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
