"""Gemini's Interactions API (``POST /v1beta/interactions``): the response side.

A stream is ``interaction.created``, ``interaction.status_update``, then per
step ``step.start`` / ``step.delta`` / ``step.stop`` (keyed by ``index``),
then ``interaction.completed`` (usage and final status).  The non-streaming
body is the interaction object with its ``steps``.  Steps map as follows:

- ``thought`` -> a reasoning block (``summary`` text; ``signature`` payload);
- ``model_output`` -> a text block per step; ``url_citation`` annotations ->
  attributions whose UTF-8 byte offsets become code-point ranges, verified
  by slicing (a range that cuts a character or leaves the text is dropped);
- ``function_call`` -> a tool-call block (``arguments_delta`` streams its JSON);
- ``*_call`` / ``*_result`` of hosted tools (``google_search``,
  ``url_context``, ``code_execution``, …) -> hosted activity, started then
  completed (or failed on ``is_error``), the raw step as payload;
- any other step -> an unknown block holding the raw step.

Every step field no neutral block models is kept (``step_fields`` /
``content_fields`` payloads), so :func:`interaction_steps` rebuilds the
steps exactly as the API returned them.  Request encoding for this API is not
built: :data:`SHAPE` raises :class:`~elelem.errors.UnsupportedError` there.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from elelem.errors import (
    PayloadError,
    StreamError,
    UnsupportedError,
)
from elelem.shapes.base import ShapeSpec
from elelem.shapes.classify import ErrorFields, ErrorTable, classify_event, text_field
from elelem.shapes.common import malformed, part_type, stream_event, stream_event_drop
from elelem.shapes.gemini.errors import STATUS_TYPES, classify_error
from elelem.shapes.skeleton import ParserSkeleton, decode_whole_body
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
    Attribution,
    Drop,
    HostedActivity,
    Message,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    Source,
    TextBlock,
    ToolCallBlock,
    UnknownBlock,
    Usage,
    neutral_activity_name,
)
from elelem.vocabulary.drop import UNREPLAYABLE, UNSUPPORTED
from elelem.wire import EncodedRequest, ModelRequest

HOSTED_NAMES: dict[str, str] = {
    tool: neutral_activity_name(tool)
    for tool in ("google_search", "url_context", "code_execution", "file_search", "google_maps")
}
"""Interactions hosted tool (the step type without ``_call``/``_result``) -> neutral
name, through the one table of :func:`elelem.vocabulary.neutral_activity_name`."""

FINISH_REASONS: dict[str, str] = {
    "completed": "stop",
    "requires_action": "tool-calls",
    "incomplete": "max-tokens",
    "failed": "error",
    "cancelled": "aborted",
}
"""Final interaction ``status`` -> neutral finish reason (unknown ones kept)."""


def finish_reason(status: str) -> str:
    """The neutral finish reason of a final interaction ``status`` (unknown ones kept)."""
    return FINISH_REASONS.get(status, status)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def map_usage(raw: Mapping[str, Any]) -> Usage:
    """A :class:`Usage` from an interaction's ``usage`` (cached input counted
    once; the tool-use prompt tokens are ``input``, as in ``usageMetadata``)."""
    cached = _count(raw.get("total_cached_tokens"))
    tool_prompt = _count(raw.get("total_tool_use_tokens"))
    return Usage(
        input=max(_count(raw.get("total_input_tokens")) - cached, 0) + tool_prompt,
        output=_count(raw.get("total_output_tokens")),
        cache_read=cached,
        reasoning=_count(raw.get("total_thought_tokens")),
        raw=dict(raw),
    )


def annotation_attribution(
    provider: ProviderId, text: str, annotation: Mapping[str, Any]
) -> Attribution:
    """An attribution for one ``url_citation`` annotation of ``text``.

    Offsets are UTF-8 bytes, as in ``groundingSupports``; the range is kept
    only when the byte span lies in the text and cuts no character.
    """
    data = text.encode("utf-8")
    start, end = annotation.get("start_index"), annotation.get("end_index")
    span: tuple[int, int] | None = None
    if isinstance(start, int) and isinstance(end, int) and 0 <= start <= end <= len(data):
        try:
            head, inside = data[:start].decode("utf-8"), data[start:end].decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            span = (len(head), len(head) + len(inside))
    url, title = annotation.get("url"), annotation.get("title")
    return Attribution(
        source=Source(
            url=url if isinstance(url, str) else None,
            title=title if isinstance(title, str) else None,
        ),
        range=span,
        replay=ProviderPayload(provider, "annotation", None, dict(annotation)),
    )


class _Step:
    __slots__ = ("annotations", "arguments", "content_fields", "key", "kind", "raw", "text")

    def __init__(self, key: int, kind: str, raw: dict[str, Any]) -> None:
        self.key = key
        self.kind = kind
        self.raw = raw
        self.text: list[str] = []
        self.arguments: list[str] = []
        self.annotations: list[Any] = []
        self.content_fields: dict[str, Any] = {"type": "text"}


class InteractionsParser(ParserSkeleton):
    """Parser of one streamed interaction (a FrameParser on the
    :class:`~elelem.shapes.skeleton.ParserSkeleton`)."""

    what = "gemini interactions"
    event_type = "gemini_interactions.event"

    def __init__(self, provider: ProviderId, request: object = None) -> None:
        del request  # nothing in the request changes how an interaction reads
        super().__init__(provider)
        self._steps: dict[int, _Step] = {}
        self._next = 0
        self._calls = 0
        self._activities: dict[str, HostedActivity] = {}

    def message(self, event: str, data: str) -> Sequence[Chunk]:
        """One SSE frame (``[DONE]`` ends the stream and carries nothing: the
        terminal event is ``interaction.completed``)."""
        if data.strip() == "[DONE]":
            return ()
        return super().message(event, data)

    def event(self, data: dict[str, Any], event: str = "") -> list[Chunk]:
        """Apply one decoded event; return its chunks."""
        etype = data.get("event_type")
        if etype == "error" or (etype is None and isinstance(data.get("error"), dict)):
            raise error_from_event(data)
        if self.finished:
            raise malformed(f"gemini interactions {etype} event after interaction.completed", data)
        if etype == "interaction.created":
            return self._created(data.get("interaction"))
        if not self.started:
            raise malformed(f"gemini interactions {etype} event before interaction.created", data)
        if etype == "interaction.status_update":
            return []
        if etype == "step.start":
            return self._step_start(self._index(data), data.get("step"))
        if etype == "step.delta":
            return self._step_delta(self._index(data), data.get("delta"))
        if etype == "step.stop":
            return self._step_stop(self._index(data))
        if etype == "interaction.completed":
            return self._completed(data.get("interaction"))
        return self.unknown_event(str(etype), data)

    def _index(self, data: Mapping[str, Any]) -> int:
        index = data.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            raise malformed("gemini interactions step event without an index", data)
        return index

    def _created(self, interaction: object) -> list[Chunk]:
        if self.started:
            raise malformed("second gemini interaction.created in one stream")
        if not isinstance(interaction, dict):
            raise malformed("gemini interaction.created without an interaction object")
        self.started = True
        iid, model = interaction.get("id"), interaction.get("model")
        return [
            ResponseStart(
                response_id=iid if isinstance(iid, str) else None,
                model=model if isinstance(model, str) else None,
                provider=self.provider,
            )
        ]

    def _payload(self, key: int, fmt: str, value: Any) -> Payload:
        return Payload(key, ProviderPayload(self.provider, fmt, None, value))

    def _step_start(self, index: int, step: object) -> list[Chunk]:
        if not isinstance(step, dict) or not isinstance(step.get("type"), str):
            raise malformed(f"gemini interactions step {index} without a type", step)
        if index in self._steps:
            raise malformed(f"gemini interactions step {index} started twice", step)
        raw = copy.deepcopy(step)
        stype = raw["type"]
        key = self._next
        self._next += 1
        if stype == "thought":
            kind = "thought"
        elif stype == "model_output":
            kind = "text"
        elif stype == "function_call":
            kind = "call"
        elif stype.endswith(("_call", "_result")) and stype.rsplit("_", 1)[0] in HOSTED_NAMES:
            kind = "hosted"
        else:
            kind = "unknown"
        block = self._steps[index] = _Step(key, kind, raw)
        if kind == "thought":
            return [BlockStart(key, "reasoning")]
        if kind == "text":
            return [BlockStart(key, "text")]
        if kind == "call":
            cid, name = raw.get("id"), raw.get("name")
            if not isinstance(cid, str) or not isinstance(name, str):
                raise malformed("gemini interactions function_call without id and name", raw)
            self._calls += 1
            given = raw.get("arguments")
            if isinstance(given, dict) and given:
                block.arguments.append(msgspec.json.encode(given).decode())
            return [BlockStart(key, "tool-call", id=cid, name=name)]
        return []

    def _step_delta(self, index: int, delta: object) -> list[Chunk]:
        block = self._steps.get(index)
        if block is None:
            raise malformed(f"gemini interactions delta for step {index} that is not open", delta)
        if not isinstance(delta, dict):
            raise malformed(f"gemini interactions delta for step {index} is not an object", delta)
        dtype = delta.get("type")
        if block.kind == "text" and dtype == "text" and isinstance(delta.get("text"), str):
            block.text.append(delta["text"])
            return [TextDelta(block.key, delta["text"])]
        if block.kind == "text" and isinstance(delta.get("annotations"), list):
            block.annotations.extend(delta["annotations"])
            return []
        if block.kind == "thought" and dtype == "thought_signature":
            block.raw["signature"] = delta.get("signature")
            return []
        if block.kind == "thought" and isinstance(delta.get("text"), str):
            block.text.append(delta["text"])
            return [ReasoningDelta(block.key, delta["text"])]
        if block.kind == "call" and dtype == "arguments_delta":
            if not isinstance(delta.get("arguments"), str):
                raise malformed(
                    "gemini interactions arguments_delta without string arguments", delta
                )
            block.arguments.append(delta["arguments"])
            return [ToolCallDelta(block.key, delta["arguments"])]
        # Any other delta is kept on the raw step (its fields replay as they came).
        for field, value in delta.items():
            if field != "type" or field not in block.raw:
                block.raw[field] = copy.deepcopy(value)
        return []

    def _step_stop(self, index: int) -> list[Chunk]:
        block = self._steps.pop(index, None)
        if block is None:
            raise malformed(f"gemini interactions step.stop for step {index} that is not open")
        key, raw = block.key, block.raw
        if block.kind == "hosted":
            return [Hosted(self._hosted(raw))]
        if block.kind == "unknown":
            return [BlockStart(key, "unknown", raw=raw), BlockEnd(key)]
        out: list[Chunk] = []
        if block.kind == "text":
            text = "".join(block.text)
            for annotation in block.annotations:
                if isinstance(annotation, dict):
                    out.append(
                        Citation(key, annotation_attribution(self.provider, text, annotation))
                    )
            fields = {k: v for k, v in raw.items() if k not in ("type", "content")}
            if block.content_fields != {"type": "text"}:
                out.append(self._payload(key, "content_fields", block.content_fields))
        elif block.kind == "thought":
            signature = raw.get("signature")
            if isinstance(signature, str):
                out.append(self._payload(key, "signature", signature))
            fields = {k: v for k, v in raw.items() if k not in ("type", "summary", "signature")}
        else:
            fields = {k: v for k, v in raw.items() if k not in ("type", "id", "name", "arguments")}
        if fields:
            out.append(self._payload(key, "step_fields", fields))
        return [*out, BlockEnd(key)]

    def _hosted(self, raw: dict[str, Any]) -> HostedActivity:
        stype: str = raw["type"]
        tool, _, side = stype.rpartition("_")
        name = HOSTED_NAMES[tool]
        payload = ProviderPayload(self.provider, "step", None, raw)
        if side == "call":
            aid = raw.get("id")
            if not isinstance(aid, str):
                raise malformed(f"gemini interactions {stype} step without an id", raw)
            activity = HostedActivity(
                ActivityId(aid), name, "started", raw.get("arguments"), "", payload
            )
            self._activities[aid] = activity
            return activity
        aid = raw.get("call_id")
        if not isinstance(aid, str):
            raise malformed(f"gemini interactions {stype} step without a call_id", raw)
        started = self._activities.get(aid) or HostedActivity(ActivityId(aid), name, "started")
        result = raw.get("result")
        count = len(result) if isinstance(result, list) else 0
        summary = f"{count} result{'' if count == 1 else 's'}"
        failed = raw.get("is_error") is True
        return started.transition(
            "failed" if failed else "completed", summary=summary, payload=payload
        )

    def _completed(self, interaction: object) -> list[Chunk]:
        if not isinstance(interaction, dict):
            raise malformed("gemini interaction.completed without an interaction object")
        if self._steps:
            raise malformed(
                f"gemini interaction.completed while steps {sorted(self._steps)} are open"
            )
        self.finished = True
        out: list[Chunk] = []
        usage = interaction.get("usage")
        if isinstance(usage, dict):
            out.append(UsageUpdate(map_usage(usage)))
        status = interaction.get("status")
        status = status if isinstance(status, str) else "completed"
        reason = finish_reason(status)
        if reason == "stop" and self._calls:
            reason = "tool-calls"
        envelope = {k: v for k, v in interaction.items() if k not in ("steps", "usage")}
        payload = ProviderPayload(self.provider, "interaction", None, envelope)
        out.append(Finish(reason, raw=status, payloads=(payload,)))
        return out


def _event_fields(data: Any, headers: Mapping[str, str]) -> ErrorFields:
    """An interactions error event: ``{"error": {"code": "INVALID_ARGUMENT", "message"}}``."""
    del headers
    error = data.get("error") if isinstance(data, Mapping) else None
    return ErrorFields(type=text_field(error, "code"), message=text_field(error, "message"))


EVENT_ERRORS = ErrorTable("gemini interactions", _event_fields, types=STATUS_TYPES)
"""The table of an interactions stream's error events (HTTP errors are Gemini's)."""


def error_from_event(data: Mapping[str, Any]) -> StreamError:
    return classify_event(EVENT_ERRORS, data)


def interaction_chunks(interaction: Mapping[str, Any], provider: ProviderId) -> list[Chunk]:
    """The chunks of a non-streaming interaction object (the same a stream gives)."""
    parser = InteractionsParser(provider)
    head = {k: v for k, v in interaction.items() if k not in ("steps", "usage")}
    out = parser.event({"event_type": "interaction.created", "interaction": head})
    steps = interaction.get("steps") or []
    if not isinstance(steps, list):
        raise malformed("gemini interaction steps is not a list")
    for index, step in enumerate(steps):
        if not isinstance(step, dict):
            raise malformed(f"gemini interaction step {index} is not an object", step)
        whole = copy.deepcopy(step)
        start = dict(whole)
        if whole.get("type") == "model_output":
            start.pop("content", None)
        elif whole.get("type") == "thought":
            start.pop("summary", None)
        elif whole.get("type") == "function_call":
            start["arguments"] = {}
        out += parser.event({"event_type": "step.start", "index": index, "step": start})
        out += _whole_step_deltas(parser, index, whole)
        out += parser.event({"event_type": "step.stop", "index": index})
    out += parser.event({"event_type": "interaction.completed", "interaction": dict(interaction)})
    return out


def _whole_step_deltas(parser: InteractionsParser, index: int, step: dict[str, Any]) -> list[Chunk]:
    def delta(body: dict[str, Any]) -> list[Chunk]:
        return parser.event({"event_type": "step.delta", "index": index, "delta": body})

    out: list[Chunk] = []
    stype = step.get("type")
    if stype == "model_output":
        content = step.get("content") or []
        texts = [c for c in content if isinstance(c, dict) and c.get("type") == "text"]
        if len(texts) != len(content) or len(texts) > 1:
            raise malformed(
                "gemini interaction model_output with non-text or several contents", step
            )
        for item in texts:
            block = parser._steps[index]
            block.content_fields = {
                k: v for k, v in item.items() if k not in ("text", "annotations")
            }
            out += delta({"type": "text", "text": item.get("text", "")})
            if item.get("annotations"):
                out += delta({"type": "text_annotation_delta", "annotations": item["annotations"]})
    elif stype == "thought":
        for item in step.get("summary") or []:
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                out += delta({"type": "thought_summary", "text": item["text"]})
    elif stype == "function_call" and step.get("arguments"):
        out += delta(
            {
                "type": "arguments_delta",
                "arguments": msgspec.json.encode(step["arguments"]).decode(),
            }
        )
    return out


def interaction_steps(
    message: Message, provider: ProviderId
) -> tuple[dict[str, Any], tuple[Drop, ...]]:
    """The steps of one assistant message as the Interactions API returned them.

    Only ``provider``'s own blocks rebuild; anything else is reported dropped.
    """
    steps: list[dict[str, Any]] = []
    dropped: list[Drop] = []

    def find(payloads: tuple[ProviderPayload, ...], fmt: str) -> Any:
        for p in payloads:
            if p.provider == provider and p.format == fmt:
                return p.value
        return None

    for i, part in enumerate(message.content):
        if isinstance(part, ReasoningBlock):
            step: dict[str, Any] = {"type": "thought"}
            signature = find(part.payloads, "signature")
            if signature is not None:
                step["signature"] = signature
            if part.text:
                step["summary"] = [{"type": "text", "text": part.text}]
        elif isinstance(part, TextBlock):
            item = dict(find(part.payloads, "content_fields") or {"type": "text"})
            item["text"] = part.text
            notes = [
                a.replay.value
                for a in part.attributions
                if a.replay and a.replay.provider == provider
            ]
            if notes:
                item["annotations"] = notes
            step = {"type": "model_output", "content": [item]}
        elif isinstance(part, ToolCallBlock):
            step = {
                "type": "function_call",
                "id": part.id,
                "name": part.name,
                "arguments": part.input,
            }
        elif isinstance(part, HostedActivity):
            if part.payload is None or part.payload.provider != provider:
                dropped.append(
                    Drop(
                        f"content[{i}]", "hosted", UNREPLAYABLE, f"{part.name}: no {provider} step"
                    )
                )
                continue
            if not isinstance(part.payload.value, dict):
                raise PayloadError(f"part {i}: {provider} step payload is not an object", "$.value")
            steps.append(dict(part.payload.value))
            continue
        elif isinstance(part, UnknownBlock) and stream_event(part):
            dropped.append(stream_event_drop(f"content[{i}]", part))
            continue
        elif isinstance(part, UnknownBlock):
            steps.append(dict(part.raw))
            continue
        else:
            dropped.append(
                Drop(f"content[{i}]", part_type(part), UNSUPPORTED, "no interactions step")
            )
            continue
        step.update(find(part.payloads, "step_fields") or {})
        steps.append(step)
    return {"steps": steps}, tuple(dropped)


assistant_wire = interaction_steps
"""The ``assistant_wire`` hook ``elelem inspect --wire-replay`` calls."""


def encode_request(
    request: ModelRequest, *, provider: ProviderId, stream: bool = True
) -> EncodedRequest:
    """Not built yet: raises :class:`~elelem.errors.UnsupportedError`."""
    raise UnsupportedError("requests to the Gemini Interactions API are not supported yet")


def parse_body(body: bytes, provider: ProviderId, request: object = None) -> list[Chunk]:
    """The chunks of a non-streaming interaction body."""
    del request
    data = decode_whole_body(body, "gemini interaction body")
    if not isinstance(data, dict):
        raise malformed("gemini interaction body is not a JSON object")
    if isinstance(data.get("error"), dict):
        raise error_from_event(data)
    return interaction_chunks(data, provider)


SHAPE = ShapeSpec(
    "gemini_interactions",
    "sse",
    encode=encode_request,
    parser=InteractionsParser,
    parse_body=parse_body,
    # HTTP errors carry the same Google error bodies as generateContent's.
    classify=classify_error,
)
"""The Gemini Interactions shape (response side)."""

__all__ = [
    "FINISH_REASONS",
    "HOSTED_NAMES",
    "SHAPE",
    "InteractionsParser",
    "annotation_attribution",
    "assistant_wire",
    "encode_request",
    "error_from_event",
    "finish_reason",
    "interaction_chunks",
    "interaction_steps",
    "map_usage",
    "parse_body",
]
