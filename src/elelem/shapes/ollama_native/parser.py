"""Ollama ``/api/chat`` NDJSON lines (and whole JSON responses) in, chunks out.  Sans-IO.

Each line is one object: ``model``, ``created_at``, a ``message`` holding
this line's piece of ``thinking`` and ``content`` and any whole
``tool_calls`` (arguments arrive as parsed JSON objects, never in pieces),
and ``done``.  The last line has ``done: true``, ``done_reason``, the token
counters and the durations.

Mapping:

- ``thinking`` -> a reasoning block, ``content`` -> a text block; a block
  ends when the stream switches to the other kind (or a tool call), so blocks
  commit in the order the model produced them;
- each tool call -> one tool-call block, started and ended at once, its
  ``arguments`` object kept as compact JSON text; the call's other fields
  (``function.index`` …) ride in a :data:`TOOL_EXTRA_FORMAT` payload so
  native replay puts them back; a call without an ``id`` gets one derived
  from the line's ``created_at`` and position, marked by a
  :data:`SYNTHESIZED_ID_FORMAT` payload;
- ``message`` fields nobody modelled (``images`` …) -> an
  :class:`~elelem.vocabulary.UnknownBlock` ``{"type": "ollama.field", …}``;
- ``done_reason`` -> the finish reason (``stop`` with tool calls is
  ``tool-calls``, ``length`` is ``max-tokens``, others pass through) and
  ``prompt_eval_count``/``eval_count`` -> usage; every top-level field of
  the final line except ``message`` (durations, ``created_at``, unknown
  fields), plus the first line's ``created_at``, is kept in a
  :data:`RESPONSE_FORMAT` payload on the ``finish``;
- ``{"error": "…"}`` -> a typed error.

Per-line ``created_at`` stamps between the first and the last are timing
metadata of the transport, not content, and are not kept.  Any other
top-level field of a line before the last is kept as the skeleton keeps a
field nobody modelled: an ``ollama.event`` block ``{"event": "line", "field",
"value"}``, where it arrived and again when its value changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from elelem.shapes.common import decode_frame, malformed
from elelem.shapes.ollama_native.errors import error_from_event
from elelem.shapes.ollama_native.fast import HotLine
from elelem.shapes.ollama_native.mapping import USAGE_FIELDS, finish_reason, map_usage
from elelem.shapes.skeleton import (
    HotFields,
    ParserSkeleton,
    decode_whole_object,
    unknown_finish,
)
from elelem.stream import (
    BlockEnd,
    BlockKey,
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
from elelem.vocabulary import ProviderId, ProviderPayload
from elelem.vocabulary.json import JSONValue

RESPONSE_FORMAT = "ollama.response"
"""Finish payload format: the final line's fields beside ``message`` (durations …)."""

TOOL_EXTRA_FORMAT = "tool-call-extra"
"""Payload format of a tool call's fields beyond id/name/arguments, as
``{"call": {...}, "function": {...}}`` (replayed verbatim)."""

SYNTHESIZED_ID_FORMAT = "synthesized-id"
"""Payload format marking a tool call whose id the server did not send."""

UNKNOWN_FIELD_TYPE = "ollama.field"
"""``type`` of the unknown block keeping a ``message`` field nobody modelled."""

_KNOWN_MESSAGE = frozenset({"role", "content", "thinking", "tool_calls"})
_LINE = "line"
"""The event name of a line's fields nobody modelled."""
_LINE_FIELDS = frozenset({"model", "created_at", "message", "done"})
"""The fields of a line the parser reads (the ``done`` line keeps all of its
own in the finish's :data:`RESPONSE_FORMAT` payload)."""


class OllamaParser(ParserSkeleton):
    """Parses one ``/api/chat`` response (on the
    :class:`~elelem.shapes.skeleton.ParserSkeleton`): NDJSON lines through
    :meth:`message` (or whole objects through :meth:`feed_object`); the
    ``done`` line ends it (without a ``done_reason`` it finishes ``unknown``)."""

    what = "ollama line"
    event_type = "ollama.event"

    def __init__(self, provider: ProviderId, request: object = None) -> None:
        del request  # nothing in the request changes how the response reads
        super().__init__(provider)
        self._current: tuple[str, BlockKey] | None = None
        self._serial = 0
        self._calls = 0
        self._first_created: JSONValue = None
        self._unknown: dict[str, list[Any]] = {}
        self._hot = HotFields(_LINE, HotLine)

    @property
    def done(self) -> bool:
        """Whether the final (``done: true``) object arrived."""
        return self.finished

    def fast(self, event: str, data: str) -> list[Chunk] | None:
        """The chunks of a hot line (a piece of text or thinking, not done), or None."""
        hot = self._hot
        try:
            line = hot.decoder.decode(data)
        except msgspec.DecodeError:  # any other shape (a ValidationError is one too)
            return None
        if line.done:
            return None
        out: list[Chunk] = []
        message = line.message
        if message.thinking:
            key = self._ensure("reasoning", out)
            out.append(ReasoningDelta(key, message.thinking))
        if message.content:
            key = self._ensure("text", out)
            out.append(TextDelta(key, message.content))
        if hot.extra and hot.raws(line) != hot.last:
            out += hot.kept(self, line)
        return out

    def decode(self, event: str, data: str) -> dict[str, Any]:
        """One NDJSON line's object; an ``{"error": …}`` object raises its error."""
        obj = decode_frame(data, f"ollama line {self.frames}")
        if "error" in obj and "message" not in obj:
            raise error_from_event(obj, data.encode())
        return obj

    def event(self, obj: dict[str, Any], event: str) -> list[Chunk]:
        """One response object."""
        return self.feed_object(obj)

    # -- objects -------------------------------------------------------------

    def feed_object(self, obj: Mapping[str, Any]) -> list[Chunk]:
        """Apply one response object (a stream line or a whole response)."""
        if self.finished:
            raise malformed(f"ollama line {self.frames} arrived after the done line", obj)
        out: list[Chunk] = []
        if not self.started:
            self.started = True
            model = obj.get("model")
            self._first_created = obj.get("created_at")
            out.append(
                ResponseStart(
                    model=model if isinstance(model, str) and model else None,
                    provider=self.provider,
                )
            )
        message = obj.get("message")
        if message is not None:
            if not isinstance(message, dict):
                raise malformed(f"ollama line {self.frames}: 'message' is not an object", obj)
            self._message(message, obj.get("created_at"), out)
        done = obj.get("done", False)
        if not isinstance(done, bool):
            raise malformed(f"ollama line {self.frames}: 'done' is not a boolean", obj)
        if done:
            self._finish(obj, out)
            return out
        self._hot.stale()
        if not obj.keys() <= _LINE_FIELDS:
            self._hot.learn(obj.keys() - _LINE_FIELDS)
            out += self.event_fields(_LINE, obj, _LINE_FIELDS)
        return out

    def _message(self, message: Mapping[str, Any], created: Any, out: list[Chunk]) -> None:
        for field in ("thinking", "content"):
            value = message.get(field)
            if value is None:
                continue
            if not isinstance(value, str):
                raise malformed(f"ollama line {self.frames}: message.{field} is not a string")
            if value:
                key = self._ensure("reasoning" if field == "thinking" else "text", out)
                delta = ReasoningDelta if field == "thinking" else TextDelta
                out.append(delta(key, value))
        calls = message.get("tool_calls")
        if calls is not None:
            if not isinstance(calls, list):
                raise malformed(f"ollama line {self.frames}: message.tool_calls is not a list")
            for call in calls:
                self._tool_call(call, created, out)
        for key, value in message.items():
            if key not in _KNOWN_MESSAGE and value not in (None, "", [], {}):
                self._unknown.setdefault(key, []).append(value)

    def _ensure(self, kind: str, out: list[Chunk]) -> BlockKey:
        if self._current is not None and self._current[0] == kind:
            return self._current[1]
        self._close(out)
        key = self._key(kind)
        self._current = (kind, key)
        out.append(BlockStart(index=key, block=kind))
        return key

    def _key(self, kind: str) -> str:
        self._serial += 1
        return f"{kind}-{self._serial}"

    def _close(self, out: list[Chunk]) -> None:
        if self._current is not None:
            out.append(BlockEnd(self._current[1]))
            self._current = None

    def _tool_call(self, call: Any, created: Any, out: list[Chunk]) -> None:
        where = f"ollama line {self.frames}: tool call"
        if not isinstance(call, dict):
            raise malformed(f"{where} is not an object", call)
        function = call.get("function")
        if not isinstance(function, dict):
            raise malformed(f"{where} has no 'function' object", call)
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise malformed(f"{where} has no name", call)
        arguments = function.get("arguments", {})
        # A server that sends JSON text already keeps it as sent.
        text = arguments if isinstance(arguments, str) else msgspec.json.encode(arguments).decode()
        self._close(out)
        self._calls += 1
        call_id = call.get("id")
        synthesized = not isinstance(call_id, str) or not call_id
        if synthesized:
            # Ollama before 0.12 sends no call id; results must still link to
            # their call and ids must differ across turns.
            stamp = created if isinstance(created, str) and created else "call"
            call_id = f"ollama-{stamp}-{self._calls}"
        key = self._key("tool")
        out.append(BlockStart(index=key, block="tool-call", id=str(call_id), name=name))
        if synthesized:
            out.append(
                Payload(key, ProviderPayload(self.provider, SYNTHESIZED_ID_FORMAT, None, True))
            )
        extra: dict[str, JSONValue] = {}
        outer = {k: v for k, v in call.items() if k not in ("id", "function")}
        inner = {k: v for k, v in function.items() if k not in ("name", "arguments")}
        if outer:
            extra["call"] = outer
        if inner:
            extra["function"] = inner
        if isinstance(arguments, str):
            extra["arguments_text"] = True
        if extra:
            out.append(Payload(key, ProviderPayload(self.provider, TOOL_EXTRA_FORMAT, None, extra)))
        out.append(ToolCallDelta(key, text))
        out.append(BlockEnd(key))

    def _finish(self, obj: Mapping[str, Any], out: list[Chunk]) -> None:
        self._close(out)
        for field, values in self._unknown.items():
            key = self._key("field")
            value: JSONValue = values[0] if len(values) == 1 else list(values)
            if all(isinstance(v, str) for v in values):
                value = "".join(values)
            raw: dict[str, JSONValue] = {"type": UNKNOWN_FIELD_TYPE, "field": field, "value": value}
            out.append(BlockStart(index=key, block="unknown", raw=raw))
            out.append(BlockEnd(key))
        counts = {f: obj[f] for f in USAGE_FIELDS if f in obj}
        for field, count in counts.items():
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                raise malformed(f"ollama line {self.frames}: {field} is not a count", obj)
        if counts:
            out.append(UsageUpdate(map_usage(counts)))
        reason = obj.get("done_reason")
        if reason is not None and not isinstance(reason, str):
            raise malformed(f"ollama line {self.frames}: done_reason is not a string", obj)
        envelope: dict[str, JSONValue] = {k: v for k, v in obj.items() if k != "message"}
        if self._first_created is not None and self._first_created != obj.get("created_at"):
            envelope["first_created_at"] = self._first_created
        payload = ProviderPayload(self.provider, RESPONSE_FORMAT, None, envelope)
        if not reason:
            out.append(unknown_finish((payload,)))
        else:
            mapped = finish_reason(reason, self._calls > 0)
            out.append(Finish(mapped, raw=reason, payloads=(payload,)))
        self.finished = True


def parse_body(body: bytes, provider: ProviderId, request: object = None) -> list[Chunk]:
    """Map a non-streaming ``/api/chat`` body (one object, ``done: true``) to chunks.

    An ``{"error": …}`` body raises its typed error; a body that is not a JSON
    object, is not UTF-8 or is not done, raises
    :class:`~elelem.errors.MalformedStreamError`.
    """
    obj = decode_whole_object(body, "ollama response body")
    if "error" in obj and "message" not in obj:
        raise error_from_event(obj, body)
    parser = OllamaParser(provider)
    chunks = parser.feed_object(obj)
    if not parser.done:
        raise malformed("the ollama response body is not done (no 'done': true)", obj)
    return chunks


__all__ = [
    "RESPONSE_FORMAT",
    "SYNTHESIZED_ID_FORMAT",
    "TOOL_EXTRA_FORMAT",
    "UNKNOWN_FIELD_TYPE",
    "OllamaParser",
    "parse_body",
]
