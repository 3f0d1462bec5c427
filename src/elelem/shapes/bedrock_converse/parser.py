"""Bedrock Converse stream events (and whole Converse responses) in, chunks out.  Sans-IO.

One event is one JSON object.  AWS's binary event-stream names the event in
its ``:event-type`` header and carries the body alone; SDKs and recordings
(the corpus's Vercel fixture) show it as a one-key union
``{"contentBlockDelta": {...}}``.  :meth:`BedrockParser.message` takes
either: a non-empty ``event`` is the event type of the body in ``data``, an
empty one means ``data`` is the union.

Mapping:

- ``messageStart`` -> ``response-start`` (Converse names no response id);
- ``contentBlockStart`` with ``start.toolUse`` -> a tool-call block; a block
  that starts with a delta is text (``delta.text``) or reasoning
  (``delta.reasoningContent``), keyed by ``contentBlockIndex``; any other
  ``start`` kind is kept in the block's :data:`DELTAS_FORMAT` payload;
- ``delta.toolUse.input`` -> argument text; ``reasoningContent.text`` ->
  reasoning text; ``reasoningContent.signature`` -> a :data:`SIGNATURE_FORMAT`
  payload, ``reasoningContent.redactedContent`` -> a :data:`REDACTED_FORMAT`
  payload (both replay verbatim); ``delta.citation`` and any delta nobody
  modelled -> a :data:`DELTAS_FORMAT` payload listing them in order;
- ``contentBlockStop`` -> ``block-end``;
- ``messageStop.stopReason`` -> the finish reason (:data:`STOP_REASONS`;
  others pass through), emitted after the ``metadata`` event that follows
  it (or at the end of the body): ``metadata.usage`` -> usage, and
  ``additionalModelResponseFields``, ``metrics``, ``trace`` … -> a
  :data:`RESPONSE_FORMAT` payload on the finish;
- exception events (``throttlingException`` …, and any name ending in
  ``Exception``) -> typed errors;
- an event type nobody modelled -> an unknown block
  ``{"type": "bedrock.event", "event": name, "value": body}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from elelem.shapes.bedrock_converse.errors import EXCEPTION_EVENTS, error_from_event
from elelem.shapes.common import decode_frame, malformed
from elelem.shapes.skeleton import ParserSkeleton, decode_whole_object, unknown_finish
from elelem.stream import (
    BlockEnd,
    BlockStart,
    Chunk,
    Finish,
    Payload,
    ReasoningDelta,
    ResponseStart,
    TextDelta,
    ToolCallDelta,
    UsageUpdate,
)
from elelem.vocabulary import ProviderId, ProviderPayload, Usage
from elelem.vocabulary.json import JSONValue

STOP_REASONS: Mapping[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool-calls",
    "max_tokens": "max-tokens",
    "guardrail_intervened": "content-filter",
    "content_filtered": "content-filter",
}
"""Converse ``stopReason`` -> finish reason; others pass through unchanged."""

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


def map_usage(usage: Mapping[str, Any]) -> Usage:
    """Converse ``usage`` -> :class:`Usage` (``inputTokens`` already excludes cache)."""

    def count(name: str) -> int:
        value = usage.get(name, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise malformed(f"bedrock usage {name} is not a count", dict(usage))
        return value

    return Usage(
        input=count("inputTokens"),
        output=count("outputTokens"),
        cache_read=count("cacheReadInputTokens"),
        cache_write=count("cacheWriteInputTokens"),
        raw=dict(usage),
    )


class BedrockParser(ParserSkeleton):
    """Parses one Converse stream (on the
    :class:`~elelem.shapes.skeleton.ParserSkeleton`): events through
    :meth:`message` (or :meth:`feed_event`); :meth:`eof` emits a finish still
    held back.  An event type nobody modelled is kept as a ``bedrock.event``
    unknown block; a ``messageStop`` without a ``stopReason`` finishes
    ``unknown``."""

    what = "bedrock event"
    event_type = UNKNOWN_EVENT_TYPE

    def __init__(self, provider: ProviderId) -> None:
        super().__init__(provider)
        self._open: dict[int, str] = {}  # contentBlockIndex -> block kind
        self._deltas: dict[int, list[JSONValue]] = {}
        self._stop: dict[str, Any] | None = None
        self._envelope: dict[str, JSONValue] = {}
        self._usage_seen = False

    @property
    def done(self) -> bool:
        """Whether the finish was emitted."""
        return self.finished

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
            raise error_from_event(name, body)
        if self.finished:
            raise malformed(f"bedrock event {self.frames} ({name}) arrived after the finish")
        out: list[Chunk] = []
        if not self.started:
            self.started = True
            out.append(ResponseStart(provider=self.provider))
        if name == "messageStart":
            pass  # the role is always assistant; nothing else is in it
        elif name == "contentBlockStart":
            self._block_start(body, out)
        elif name == "contentBlockDelta":
            self._delta(self._index(body), body.get("delta"), out)
        elif name == "contentBlockStop":
            self._block_stop(self._index(body), out)
        elif name == "messageStop":
            reason = body.get("stopReason")
            if reason is not None and not isinstance(reason, str):
                raise malformed(f"bedrock event {self.frames}: stopReason is not a string")
            self._stop = dict(body)
            if self._usage_seen:
                self._finish(out)
        elif name == "metadata":
            usage = body.get("usage")
            if isinstance(usage, dict):
                self._usage_seen = True
                out.append(UsageUpdate(map_usage(usage)))
            self._envelope.update({k: v for k, v in body.items() if k != "usage"})
            if self._stop is not None:
                self._finish(out)
        else:
            out += self.unknown_event(name, body)
        return out

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
            else:
                if index not in self._open:
                    self._ensure(index, "text", out)
                self._deltas.setdefault(index, []).append({key: value})

    def _reasoning(self, index: int, value: Mapping[str, Any], out: list[Chunk]) -> None:
        for key, item in value.items():
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
            elif key == "redactedContent":
                out.append(
                    Payload(index, ProviderPayload(self.provider, REDACTED_FORMAT, None, item))
                )
            else:
                self._deltas.setdefault(index, []).append({"reasoningContent": {key: item}})

    def _block_stop(self, index: int, out: list[Chunk]) -> None:
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
            out.append(Finish(STOP_REASONS.get(reason, reason), raw=reason, payloads=payloads))
        self.finished = True


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
        if kind == "toolUse" and isinstance(value, dict):
            start = {"toolUseId": value.get("toolUseId"), "name": value.get("name")}
            out += parser.feed_event(
                "contentBlockStart", {"contentBlockIndex": index, "start": {"toolUse": start}}
            )
            text = msgspec.json.encode(value.get("input", {})).decode()
            delta: dict[str, Any] = {"toolUse": {"input": text}}
        elif kind == "reasoningContent" and isinstance(value, dict):
            inner = value.get("reasoningText")
            delta = {"reasoningContent": dict(inner) if isinstance(inner, dict) else dict(value)}
        else:
            delta = {kind: value}
        out += parser.feed_event("contentBlockDelta", {"contentBlockIndex": index, "delta": delta})
        out += parser.feed_event("contentBlockStop", {"contentBlockIndex": index})
    out += parser.feed_event(
        "messageStop",
        {
            "stopReason": reason,
            **{k: v for k, v in obj.items() if k not in ("output", "stopReason", "usage")},
        },
    )
    usage = obj.get("usage")
    out += parser.feed_event("metadata", {"usage": usage} if isinstance(usage, dict) else {})
    out += parser.eof()
    return out


def parse_body(body: bytes, provider: ProviderId) -> list[Chunk]:
    """Map a non-streaming Converse body to the chunks a stream gives."""
    obj = decode_whole_object(body, "bedrock response body")
    return response_chunks(obj, provider)


__all__ = [
    "DELTAS_FORMAT",
    "REDACTED_FORMAT",
    "RESPONSE_FORMAT",
    "SIGNATURE_FORMAT",
    "STOP_REASONS",
    "UNKNOWN_EVENT_TYPE",
    "BedrockParser",
    "map_usage",
    "parse_body",
    "response_chunks",
]
