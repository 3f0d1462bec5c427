"""Bedrock Converse stream events (and whole Converse responses) in, chunks out.  Sans-IO.

One event is one JSON object.  AWS's binary event-stream names the event in
its ``:event-type`` header and carries the body alone; SDKs and recordings
(the corpus's Vercel fixture) show it as a one-key union
``{"contentBlockDelta": {...}}``.  :meth:`BedrockParser.message` takes
either: a non-empty ``event`` is the event type of the body in ``data``, an
empty one means ``data`` is the union.

Mapping:

- ``messageStart`` -> ``response-start`` (Converse names no response id);
- ``contentBlockStart`` with ``start.toolUse`` of ``type: server_tool_use``
  (a tool the provider runs, such as Nova web grounding) and the
  ``start.toolResult`` answering it -> hosted activity *started* and
  *completed*/*failed*, the wire blocks in their payloads;
- ``contentBlockStart`` with ``start.toolUse`` -> a tool-call block; a block
  that starts with a delta is text (``delta.text``) or reasoning
  (``delta.reasoningContent``), keyed by ``contentBlockIndex``; any other
  ``start`` kind is kept in the block's :data:`DELTAS_FORMAT` payload;
- ``delta.toolUse.input`` -> argument text; ``reasoningContent.text`` ->
  reasoning text; ``reasoningContent.signature`` -> a :data:`SIGNATURE_FORMAT`
  payload, ``reasoningContent.redactedContent`` -> a :data:`REDACTED_FORMAT`
  payload (both replay verbatim); ``delta.citation`` -> an attribution (the
  raw citation its replay payload: native replay sends the text back as
  ``citationsContent``); any delta nobody modelled (and any field of a
  ``toolUse`` or ``reasoningContent`` beside the ones read) -> a
  :data:`DELTAS_FORMAT` payload listing them in order;
- ``contentBlockStop`` -> ``block-end``;
- ``messageStop.stopReason`` -> the finish reason (:data:`~elelem.shapes.bedrock_converse.mapping.FINISH_REASONS`;
  others pass through), emitted after the ``metadata`` event that follows
  it (or at the end of the body): ``metadata.usage`` -> usage, and
  ``additionalModelResponseFields``, ``metrics``, ``trace`` … -> a
  :data:`RESPONSE_FORMAT` payload on the finish;
- exception events (``throttlingException`` …, and any name ending in
  ``Exception``) -> typed errors;
- an event type nobody modelled -> an unknown block
  ``{"type": "bedrock.event", "event": name, "value": body}``; a field
  nobody modelled on a known event -> an unknown block
  ``{"type": "bedrock.event", "event": name, "field": f, "value": v}`` (the
  skeleton's :meth:`~elelem.shapes.skeleton.ParserSkeleton.event_fields`),
  except AWS's ``p``: random padding of every event, to hide the length of
  what it carries, which holds nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from elelem.shapes.bedrock_converse.errors import EXCEPTION_EVENTS, error_from_event
from elelem.shapes.bedrock_converse.fast import HOT_EVENT, HotReasoning, hot_decoder
from elelem.shapes.bedrock_converse.mapping import finish_reason, map_usage
from elelem.shapes.bedrock_converse.media import bedrock_attribution
from elelem.shapes.common import at_frame, checked_payload, decode_frame, fold_fields, malformed
from elelem.shapes.skeleton import ParserSkeleton, decode_whole_object, unknown_finish
from elelem.stream import (
    BlockEnd,
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
from elelem.vocabulary import (
    ActivityId,
    HostedActivity,
    ProviderId,
    ProviderPayload,
    neutral_activity_name,
)
from elelem.vocabulary.json import JSONValue, decode_json

CITATIONS_CONTENT_FORMAT = "citations_content"
"""Block payload: a whole response's ``citationsContent`` block as it came."""

SIGNATURE_FORMAT = "signature"
"""Reasoning payload: the ``reasoningContent.signature`` string."""

REDACTED_FORMAT = "redacted"
"""Reasoning payload: the ``reasoningContent.redactedContent`` (base64) string."""

DELTAS_FORMAT = "bedrock.deltas"
"""Block payload: citation deltas and deltas nobody modelled, in arrival order."""

RESPONSE_FORMAT = "bedrock.response"
"""Finish payload: ``messageStop``/``metadata`` (or response) fields beside the
stop reason and usage counters."""

UNKNOWN_EVENT_TYPE = "bedrock.event"
"""``type`` of the unknown block keeping an event type nobody modelled."""

PADDING = "p"
"""The field AWS pads every event-stream event with (random letters)."""

_DELTA_KINDS = frozenset({"text", "reasoningContent", "toolUse", "toolResult", "citation"})
"""The delta kinds this parser models; another on a server tool's block joins it."""

_REASONING_FIELDS = frozenset({"text", "signature", "redactedContent"})

_EVENT_FIELDS: Mapping[str, frozenset[str]] = {
    "messageStart": frozenset({"role", PADDING}),
    "contentBlockStart": frozenset({"contentBlockIndex", "start", PADDING}),
    "contentBlockDelta": frozenset({"contentBlockIndex", "delta", PADDING}),
    "contentBlockStop": frozenset({"contentBlockIndex", PADDING}),
}
"""The fields of each content event the parser reads (``messageStop`` and
``metadata`` keep every other field in the finish's :data:`RESPONSE_FORMAT`
payload)."""


class BedrockParser(ParserSkeleton):
    """Parses one Converse stream (on the
    :class:`~elelem.shapes.skeleton.ParserSkeleton`): events through
    :meth:`message` (or :meth:`feed_event`); :meth:`eof` emits a finish still
    held back.  An event type nobody modelled is kept as a ``bedrock.event``
    unknown block; a ``messageStop`` without a ``stopReason`` finishes
    ``unknown``."""

    what = "bedrock event"
    event_type = UNKNOWN_EVENT_TYPE

    def __init__(self, provider: ProviderId, request: object = None) -> None:
        del request  # nothing in the request changes how the response reads
        super().__init__(provider)
        self._open: dict[int, str] = {}  # contentBlockIndex -> block kind
        self._deltas: dict[int, list[JSONValue]] = {}
        self._stop: dict[str, Any] | None = None
        self._envelope: dict[str, JSONValue] = {}
        self._usage_seen = False
        # contentBlockIndex -> (toolUse|toolResult, the block's fields, its deltas)
        self._server: dict[int, tuple[str, dict[str, Any], list[Any]]] = {}
        self._server_names: dict[str, HostedActivity] = {}
        self._hot = hot_decoder()
        # Event name -> handler (each appends its chunks to ``out``).
        self._handlers: dict[str, Callable[[Mapping[str, Any], list[Chunk]], None]] = {
            "messageStart": self._on_message_start,
            "contentBlockStart": self._block_start,
            "contentBlockDelta": self._on_block_delta,
            "contentBlockStop": self._on_block_stop,
            "messageStop": self._on_message_stop,
            "metadata": self._on_metadata,
        }

    @property
    def done(self) -> bool:
        """Whether the finish was emitted."""
        return self.finished

    def fast(self, event: str, data: str) -> list[Chunk] | None:
        """The chunks of a hot ``contentBlockDelta`` (text or reasoning text in
        a block of that kind already open: a server block's kind is
        ``server``), or None."""
        fields = None
        try:
            if event == HOT_EVENT:
                fields = self._hot.body
                body = fields.decoder.decode(data)
            elif not event:
                body = self._hot.union.decode(data).contentBlockDelta
            else:
                return None
        except msgspec.DecodeError:  # any other shape (a ValidationError is one too)
            return None
        delta, index = body.delta, body.contentBlockIndex
        if isinstance(delta.text, str):
            if delta.reasoningContent is not msgspec.UNSET or self._open.get(index) != "text":
                return None
            out: list[Chunk] = [TextDelta(index, delta.text)] if delta.text else []
        elif isinstance(delta.reasoningContent, HotReasoning):
            if self._open.get(index) != "reasoning":
                return None
            text = delta.reasoningContent.text
            out = [ReasoningDelta(index, text)] if text else []
        else:
            return None
        if fields is not None and fields.extra and fields.raws(body) != fields.last:
            out += fields.kept(self, body)
        return out

    def decode(self, event: str, data: str) -> dict[str, Any]:
        """The frame's object, errors naming the event by number."""
        return decode_frame(data, f"bedrock event {self.frames}")

    def event(self, obj: dict[str, Any], event: str) -> list[Chunk]:
        """One decoded event: ``event`` names it, or ``obj`` is the one-key union."""
        if event:
            return self.feed_event(event, obj)
        if len(obj) != 1:
            raise malformed(
                f"bedrock event {self.frames} is not a one-key event union "
                f"(keys: {', '.join(sorted(obj))})",
                obj,
            )
        ((name, body),) = obj.items()
        if not isinstance(body, dict):
            raise malformed(f"bedrock event {self.frames}: {name} is not an object", obj)
        return self.feed_event(name, body)

    def at_eof(self) -> list[Chunk]:
        """The body ended: finish if ``messageStop`` came, else leave it incomplete."""
        if self._stop is None:
            return []
        out: list[Chunk] = []
        self._finish(out)
        return out

    # -- events --------------------------------------------------------------

    def feed_event(self, name: str, body: Mapping[str, Any]) -> list[Chunk]:
        """Apply one event ``name`` with its JSON ``body``."""
        # An event-stream exception message arrives under its exception
        # type; every Converse one ends in "Exception", known or not.
        if name in EXCEPTION_EVENTS or name.endswith("Exception"):
            raise error_from_event({name: dict(body)})
        if self.finished:
            raise malformed(f"bedrock event {self.frames} ({name}) arrived after the finish")
        out: list[Chunk] = []
        if not self.started:
            self.started = True
            out.append(ResponseStart(provider=self.provider))
        handler = self._handlers.get(name)
        if handler is None:
            return out + self.unknown_event(name, body)
        handler(body, out)
        modelled = _EVENT_FIELDS.get(name)
        if name == HOT_EVENT:
            self._hot.body.stale()
        if modelled is not None and not body.keys() <= modelled:
            if name == HOT_EVENT:
                self._hot.body.learn(set(body.keys() - modelled))
            out += self.event_fields(name, body, modelled)
        return out

    def _on_message_start(self, body: Mapping[str, Any], out: list[Chunk]) -> None:
        del body, out  # the role is always assistant; nothing else is in it

    def _on_block_delta(self, body: Mapping[str, Any], out: list[Chunk]) -> None:
        self._delta(self._index(body), body.get("delta"), out)

    def _on_block_stop(self, body: Mapping[str, Any], out: list[Chunk]) -> None:
        self._block_stop(self._index(body), out)

    def _on_message_stop(self, body: Mapping[str, Any], out: list[Chunk]) -> None:
        reason = body.get("stopReason")
        if reason is not None and not isinstance(reason, str):
            raise malformed(f"bedrock event {self.frames}: stopReason is not a string")
        self._stop = {k: v for k, v in body.items() if k != PADDING}
        if self._usage_seen:
            self._finish(out)

    def _on_metadata(self, body: Mapping[str, Any], out: list[Chunk]) -> None:
        usage = body.get("usage")
        if isinstance(usage, dict):
            self._usage_seen = True
            out.append(UsageUpdate(map_usage(usage)))
        self._envelope.update({k: v for k, v in body.items() if k not in ("usage", PADDING)})
        if self._stop is not None:
            self._finish(out)

    def _index(self, body: Mapping[str, Any]) -> int:
        index = body.get("contentBlockIndex")
        if not isinstance(index, int) or isinstance(index, bool):
            raise malformed(f"bedrock event {self.frames}: contentBlockIndex is not an integer")
        return index

    def _block_start(self, body: Mapping[str, Any], out: list[Chunk]) -> None:
        index = self._index(body)
        start = body.get("start")
        if not isinstance(start, dict):
            raise malformed(f"bedrock event {self.frames}: contentBlockStart has no start object")
        tool = start.get("toolUse")
        result = start.get("toolResult")
        if isinstance(result, dict) or (isinstance(tool, dict) and tool.get("type") == SERVER_TOOL):
            # A tool the provider runs itself (web grounding): hosted activity,
            # never a client call the tool loop would try to run.
            self._check_new(index)
            kind = "toolResult" if isinstance(result, dict) else "toolUse"
            block = dict(result if isinstance(result, dict) else tool)  # type: ignore[arg-type]
            self._open[index] = "server"
            self._server[index] = (kind, block, [])
            return
        if tool is None:
            # A start kind nobody modelled: kept on the block, whose kind its
            # deltas decide (text if none come).
            self._check_new(index)
            self._deltas.setdefault(index, []).append({"start": dict(start)})
            return
        if not isinstance(tool, dict):
            raise malformed(f"bedrock event {self.frames}: start.toolUse is not an object")
        call_id, name = tool.get("toolUseId"), tool.get("name")
        if not isinstance(call_id, str) or not isinstance(name, str) or not call_id or not name:
            raise malformed(f"bedrock event {self.frames}: toolUse needs toolUseId and name")
        self._check_new(index)
        self._open[index] = "tool-call"
        out.append(BlockStart(index=index, block="tool-call", id=call_id, name=name))
        # What the start holds beside the call's identity joins the block's
        # deltas: {"toolUse": {...}} fields of the call, {"start": {...}} others.
        rest = {k: v for k, v in tool.items() if k not in ("toolUseId", "name")}
        if rest:
            self._deltas.setdefault(index, []).append({"toolUse": rest})
        others = {k: v for k, v in start.items() if k != "toolUse"}
        if others:
            self._deltas.setdefault(index, []).append({"start": others})

    def _check_new(self, index: int) -> None:
        if index in self._open:
            raise malformed(f"bedrock event {self.frames}: block {index} is already open")

    def _ensure(self, index: int, kind: str, out: list[Chunk]) -> None:
        have = self._open.get(index)
        if have is None:
            self._open[index] = kind
            out.append(BlockStart(index=index, block=kind))
        elif have != kind:
            raise malformed(f"bedrock event {self.frames}: a {kind} delta in {have} block {index}")

    def _delta(self, index: int, delta: Any, out: list[Chunk]) -> None:
        if not isinstance(delta, dict):
            raise malformed(f"bedrock event {self.frames}: delta is not an object")
        server = self._server.get(index)
        if server is not None:
            self._server_delta(server, delta)
            return
        for key, value in delta.items():
            if key == "text" and isinstance(value, str):
                self._ensure(index, "text", out)
                if value:
                    out.append(TextDelta(index, value))
            elif key == "reasoningContent" and isinstance(value, dict):
                self._ensure(index, "reasoning", out)
                self._reasoning(index, value, out)
            elif (
                key == "toolUse" and isinstance(value, dict) and isinstance(value.get("input"), str)
            ):
                self._ensure(index, "tool-call", out)
                if value["input"]:
                    out.append(ToolCallDelta(index, value["input"]))
                rest = {k: v for k, v in value.items() if k != "input"}
                if rest:
                    self._deltas.setdefault(index, []).append({"toolUse": rest})
            elif key == "citation" and isinstance(value, dict):
                # An attribution on the text; its raw citation is the replay.
                self._ensure(index, "text", out)
                out.append(Citation(index, bedrock_attribution(value, self.provider)))
            else:
                if index not in self._open:
                    self._ensure(index, "text", out)
                self._deltas.setdefault(index, []).append({key: value})

    def _reasoning(self, index: int, value: Mapping[str, Any], out: list[Chunk]) -> None:
        for key, item in value.items():
            if key not in _REASONING_FIELDS:
                self._deltas.setdefault(index, []).append({"reasoningContent": {key: item}})
                continue
            if key != "text" and not isinstance(item, str):
                # A signature or redacted content no string: recorded on the
                # block, the answer goes on.
                fmt = SIGNATURE_FORMAT if key == "signature" else REDACTED_FORMAT
                where = at_frame(self.frames, f"reasoningContent.{key}", "event")
                out.append(Payload(index, checked_payload(self.provider, fmt, item, str, where)))
                continue
            if not isinstance(item, str):
                raise malformed(
                    f"bedrock event {self.frames}: reasoningContent.{key} is not a string"
                )
            if key == "text":
                if item:
                    out.append(ReasoningDelta(index, item))
            elif key == "signature":
                out.append(
                    Payload(index, ProviderPayload(self.provider, SIGNATURE_FORMAT, None, item))
                )
            else:
                out.append(
                    Payload(index, ProviderPayload(self.provider, REDACTED_FORMAT, None, item))
                )

    def _server_delta(
        self, server: tuple[str, dict[str, Any], list[Any]], delta: Mapping[str, Any]
    ) -> None:
        kind, block, pieces = server
        for key, value in delta.items():
            if kind == "toolUse" and key == "toolUse" and isinstance(value, dict):
                text = value.get("input")
                if not isinstance(text, str):
                    raise malformed(f"bedrock event {self.frames}: toolUse.input is not a string")
                pieces.append(text)
                # The call's other fields belong to the block replayed whole.
                fold_fields(block, {k: v for k, v in value.items() if k != "input"})
            elif kind == "toolResult" and key == "toolResult" and isinstance(value, list):
                pieces.extend(value)
            elif key not in _DELTA_KINDS:
                fold_fields(block, {key: value})  # a delta nobody modelled: the block's
            else:
                raise malformed(
                    f"bedrock event {self.frames}: a {key} delta in a server {kind} block"
                )

    def _server_stop(self, index: int) -> Hosted:
        kind, block, pieces = self._server.pop(index)
        if kind == "toolUse":
            text = "".join(pieces)
            try:
                given = decode_json(text) if text.strip() else {}
            except msgspec.DecodeError:
                raise malformed(
                    f"bedrock event {self.frames}: server toolUse input is not JSON"
                ) from None
            wire = {**block, "input": given}
            return Hosted(server_activity(self.provider, {"toolUse": wire}, self._server_names))
        wire = {**block, "content": [*block.get("content", []), *pieces]}
        return Hosted(server_activity(self.provider, {"toolResult": wire}, self._server_names))

    def _block_stop(self, index: int, out: list[Chunk]) -> None:
        if index in self._server:
            self._open.pop(index)
            out.append(self._server_stop(index))
            return
        if index not in self._open and index in self._deltas:
            self._ensure(index, "text", out)  # started (unknown kind), no delta came
        if self._open.pop(index, None) is None:
            raise malformed(f"bedrock event {self.frames}: block {index} stops but never started")
        deltas = self._deltas.pop(index, None)
        if deltas:
            out.append(Payload(index, ProviderPayload(self.provider, DELTAS_FORMAT, None, deltas)))
        out.append(BlockEnd(index))

    def _finish(self, out: list[Chunk]) -> None:
        assert self._stop is not None
        for index in [*self._open, *(i for i in self._deltas if i not in self._open)]:
            self._block_stop(index, out)
        stop = dict(self._stop)
        reason = stop.pop("stopReason", None)
        envelope = {**stop, **self._envelope}
        payloads = (
            (ProviderPayload(self.provider, RESPONSE_FORMAT, None, envelope),) if envelope else ()
        )
        if reason is None:
            out.append(unknown_finish(payloads))
        else:
            out.append(Finish(finish_reason(reason), raw=reason, payloads=payloads))
        self.finished = True


SERVER_TOOL = "server_tool_use"
"""``toolUse.type`` of a tool the provider runs itself (Nova web grounding)."""


def server_activity(
    provider: ProviderId, block: dict[str, Any], started: dict[str, HostedActivity]
) -> HostedActivity:
    """The hosted transition of a server tool's ``toolUse`` (started) or its
    ``toolResult`` (completed, or failed on ``status: error``); ``block`` is the
    wire content block, kept whole in the payload for native replay.
    ``started`` remembers the calls by id, so a result takes its call's name."""
    ((kind, wire),) = block.items()
    aid = wire.get("toolUseId")
    if not isinstance(aid, str) or not aid:
        raise malformed(f"bedrock server {kind} block without a toolUseId", block)
    payload = ProviderPayload(
        provider, SERVER_TOOL if kind == "toolUse" else "tool_result", None, block
    )
    if kind == "toolUse":
        name = wire.get("name")
        if not isinstance(name, str) or not name:
            raise malformed("bedrock server toolUse block without a name", block)
        activity = HostedActivity(
            ActivityId(aid), neutral_activity_name(name), "started", wire.get("input"), "", payload
        )
        started[aid] = activity
        return activity
    call = started.get(aid)
    content = wire.get("content") or []
    failed = wire.get("status") == "error"
    n = len(content) if isinstance(content, list) else 0
    return HostedActivity(
        ActivityId(aid),
        call.name if call is not None else neutral_activity_name(str(wire.get("type") or "tool")),
        "failed" if failed else "completed",
        call.input if call is not None else None,
        "error" if failed else (f"{n} result" if n == 1 else f"{n} results"),
        payload,
    )


def response_chunks(obj: Mapping[str, Any], provider: ProviderId) -> list[Chunk]:
    """The chunks of a whole Converse response object (``output.message.content``)."""
    output = obj.get("output")
    message = output.get("message") if isinstance(output, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        raise malformed("the bedrock response has no output.message.content list", dict(obj))
    reason = obj.get("stopReason")
    if reason is not None and not isinstance(reason, str):
        raise malformed("the bedrock response stopReason is not a string", dict(obj))
    parser = BedrockParser(provider)
    out = parser.feed_event("messageStart", {"role": "assistant"})
    for index, block in enumerate(content):
        if not isinstance(block, dict) or len(block) != 1:
            raise malformed(f"bedrock response content block {index} is not a one-key object")
        ((kind, value),) = block.items()
        if kind == "toolResult" and isinstance(value, dict):
            # Only the provider's own tools answer inside an assistant message.
            head = {k: v for k, v in value.items() if k != "content"}
            out += parser.feed_event(
                "contentBlockStart", {"contentBlockIndex": index, "start": {"toolResult": head}}
            )
            delta: dict[str, Any] = {"toolResult": list(value.get("content") or [])}
        elif kind == "toolUse" and isinstance(value, dict):
            start = {k: v for k, v in value.items() if k != "input"}
            out += parser.feed_event(
                "contentBlockStart", {"contentBlockIndex": index, "start": {"toolUse": start}}
            )
            text = msgspec.json.encode(value.get("input", {})).decode()
            delta = {"toolUse": {"input": text}}
        elif kind == "reasoningContent" and isinstance(value, dict):
            inner = value.get("reasoningText")
            if isinstance(inner, dict):
                # Its text and signature, and whatever else the block holds.
                rest = {k: v for k, v in value.items() if k != "reasoningText"}
                delta = {"reasoningContent": {**inner, **rest}}
            else:
                delta = {"reasoningContent": dict(value)}
        elif kind == "citationsContent" and isinstance(value, dict):
            # Cited text: its text, then its citations, as a stream gives them;
            # the whole block is kept for exact replay.
            parts = value.get("content") or []
            text = "".join(
                p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
            )
            out += parser.feed_event(
                "contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": text}}
            )
            for citation in value.get("citations") or []:
                out += parser.feed_event(
                    "contentBlockDelta",
                    {"contentBlockIndex": index, "delta": {"citation": citation}},
                )
            out.append(parser.payload(index, CITATIONS_CONTENT_FORMAT, value))
            out += parser.feed_event("contentBlockStop", {"contentBlockIndex": index})
            continue
        else:
            delta = {kind: value}
        out += parser.feed_event("contentBlockDelta", {"contentBlockIndex": index, "delta": delta})
        out += parser.feed_event("contentBlockStop", {"contentBlockIndex": index})
    stop = {k: v for k, v in obj.items() if k not in ("output", "stopReason", "usage")}
    # What output and its message hold beside the content (and the role,
    # always the assistant's) is the response's too.
    assert isinstance(output, dict) and isinstance(message, dict)
    kept: dict[str, Any] = {k: v for k, v in output.items() if k != "message"}
    inner = {k: v for k, v in message.items() if k not in ("content", "role")}
    if inner:
        kept["message"] = inner
    if kept:
        stop["output"] = kept
    out += parser.feed_event("messageStop", {"stopReason": reason, **stop})
    usage = obj.get("usage")
    out += parser.feed_event("metadata", {"usage": usage} if isinstance(usage, dict) else {})
    out += parser.eof()
    return out


def parse_body(body: bytes, provider: ProviderId, request: object = None) -> list[Chunk]:
    """Map a non-streaming Converse body to the chunks a stream gives."""
    obj = decode_whole_object(body, "bedrock response body")
    return response_chunks(obj, provider)


__all__ = [
    "DELTAS_FORMAT",
    "REDACTED_FORMAT",
    "RESPONSE_FORMAT",
    "SERVER_TOOL",
    "SIGNATURE_FORMAT",
    "UNKNOWN_EVENT_TYPE",
    "BedrockParser",
    "parse_body",
    "response_chunks",
    "server_activity",
]
