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
  when the request asked for computer use, a call of one of its predefined
  functions is the ``computer`` tool's call, its arguments ``{"action":
  name, …}`` (:mod:`elelem.shapes.gemini.computer`), given whole at the
  step's end, the wire name kept for replay;
- ``*_call`` / ``*_result`` of hosted tools (``google_search``,
  ``url_context``, ``code_execution``, …) -> hosted activity, started then
  completed (or failed on ``is_error``), the raw step as payload;
- any other step -> an unknown block holding the raw step.

Every step field no neutral block models is kept (``step_fields`` /
``content_fields`` payloads), so :func:`interaction_steps` rebuilds the
steps exactly as the API returned them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import msgspec

from elelem.shapes.common import at_frame, checked_payload, malformed
from elelem.shapes.gemini.computer import ACTION_FORMAT, call_arguments, computer_actions
from elelem.shapes.gemini.grounding import annotation_attribution
from elelem.shapes.gemini_interactions.errors import error_from_event
from elelem.shapes.gemini_interactions.fast import hot_decoder
from elelem.shapes.gemini_interactions.mapping import HOSTED_NAMES, finish_reason, map_usage
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
from elelem.vocabulary import ActivityId, HostedActivity, ProviderId, ProviderPayload


class _Step:
    __slots__ = (
        "action",
        "annotations",
        "arguments",
        "content_fields",
        "key",
        "kind",
        "raw",
        "text",
    )

    def __init__(self, key: int, kind: str, raw: dict[str, Any]) -> None:
        self.action: str | None = None  # a computer call's predefined function name
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
        super().__init__(provider)
        # Computer use makes its predefined functions the computer tool's calls.
        self._computer = computer_actions(request)
        self._steps: dict[int, _Step] = {}
        self._next = 0
        self._calls = 0
        self._activities: dict[str, HostedActivity] = {}
        self._hot = hot_decoder()
        self._interaction_id: str | None = None

    def message(self, event: str, data: str) -> Sequence[Chunk]:
        """One SSE frame (``[DONE]`` ends the stream and carries nothing: the
        terminal event is ``interaction.completed``)."""
        if data.strip() == "[DONE]":
            return ()
        return super().message(event, data)

    def fast(self, event: str, data: str) -> list[Chunk] | None:
        """The chunk of a typed ``step.delta`` of text or thought, or None."""
        del event
        try:
            hot = self._hot.decode(data)
        except msgspec.DecodeError:  # any other frame (a ValidationError is one too)
            return None
        block = self._steps.get(hot.index)
        if hot.event_type != "step.delta" or block is None:
            return None
        delta = hot.delta
        if block.kind == "text" and delta.type == "text":
            block.text.append(delta.text)
            return [TextDelta(block.key, delta.text)]
        if block.kind == "thought" and delta.type != "thought_signature":
            block.text.append(delta.text)
            return [ReasoningDelta(block.key, delta.text)]
        return None

    def event(self, data: dict[str, Any], event: str = "") -> list[Chunk]:
        """Apply one decoded event (its handler from :attr:`HANDLERS`); return its chunks."""
        etype = data.get("event_type")
        if etype == "error" or (etype is None and isinstance(data.get("error"), dict)):
            raise error_from_event(data)
        if self.finished:
            raise malformed(f"gemini interactions {etype} event after interaction.completed", data)
        if etype == "interaction.created":
            return self._created(data.get("interaction"))
        if not self.started:
            raise malformed(f"gemini interactions {etype} event before interaction.created", data)
        handler = self.HANDLERS.get(etype) if isinstance(etype, str) else None
        if handler is None:
            return self.unknown_event(str(etype), data)
        return handler(self, data)

    def _on_step_start(self, data: dict[str, Any]) -> list[Chunk]:
        return self._step_start(self._index(data), data.get("step"))

    def _on_step_delta(self, data: dict[str, Any]) -> list[Chunk]:
        return self._step_delta(self._index(data), data.get("delta"))

    def _on_step_stop(self, data: dict[str, Any]) -> list[Chunk]:
        return self._step_stop(self._index(data))

    def _on_completed(self, data: dict[str, Any]) -> list[Chunk]:
        return self._completed(data.get("interaction"))

    def _on_status_update(self, data: dict[str, Any]) -> list[Chunk]:
        del data  # a status between steps carries nothing to keep
        return []

    HANDLERS: ClassVar[dict[str, Callable[[InteractionsParser, dict[str, Any]], list[Chunk]]]] = {
        "interaction.status_update": _on_status_update,
        "step.start": _on_step_start,
        "step.delta": _on_step_delta,
        "step.stop": _on_step_stop,
        "interaction.completed": _on_completed,
    }
    """Event type -> handler, for a started interaction (``interaction.created``
    starts one; any other type is kept as an unknown event)."""

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
        self._interaction_id = iid if isinstance(iid, str) else None
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
            if name not in self._computer:
                # Arguments given whole at the start (no arguments_delta follows) are the call's.
                start: list[Chunk] = [BlockStart(key, "tool-call", id=cid, name=name)]
                return start + [ToolCallDelta(key, piece) for piece in block.arguments]
            # A computer-use action: the computer tool's call, the wire name kept.
            block.action = name
            action = self._payload(key, ACTION_FORMAT, {"name": name, "args": True})
            return [BlockStart(key, "tool-call", id=cid, name="computer"), action]
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
            if block.action is not None:
                return []  # given whole, with its action, at the step's end
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
            if signature is not None:
                # One that is no string is recorded malformed on the block
                # (kept, not replayed), the answer going on.
                where = at_frame(self.frames, "thought.signature")
                out.append(
                    Payload(key, checked_payload(self.provider, "signature", signature, str, where))
                )
            fields = {k: v for k, v in raw.items() if k not in ("type", "summary", "signature")}
        else:
            fields = {k: v for k, v in raw.items() if k not in ("type", "id", "name", "arguments")}
            if block.action is not None:
                args = self._computer_arguments(block.action, block.arguments)
                out.append(ToolCallDelta(key, args))
        if fields:
            out.append(self._payload(key, "step_fields", fields))
        return [*out, BlockEnd(key)]

    @staticmethod
    def _computer_arguments(action: str, pieces: list[str]) -> str:
        """A computer call's neutral arguments: its action, then the wire's;
        arguments that are no JSON object are kept as they came (the tool
        refuses them, as it would any call's)."""
        text = "".join(pieces) or "{}"
        try:
            args = msgspec.json.decode(text)
        except msgspec.DecodeError:
            return text
        if not isinstance(args, dict):
            return text
        return msgspec.json.encode(call_arguments(action, args)).decode()

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
        if "id" not in envelope and self._interaction_id is not None:
            # Named at interaction.created only: the id the next request
            # continues from (previous_interaction_id).
            envelope = {"id": self._interaction_id, **envelope}
        payload = ProviderPayload(self.provider, "interaction", None, envelope)
        out.append(Finish(reason, raw=status, payloads=(payload,)))
        return out


def interaction_chunks(
    interaction: Mapping[str, Any], provider: ProviderId, request: object = None
) -> list[Chunk]:
    """The chunks of a non-streaming interaction object (the same a stream
    gives) answering ``request``."""
    parser = InteractionsParser(provider, request)
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


def parse_body(body: bytes, provider: ProviderId, request: object = None) -> list[Chunk]:
    """The chunks of a non-streaming interaction body."""
    data = decode_whole_body(body, "gemini interaction body")
    if not isinstance(data, dict):
        raise malformed("gemini interaction body is not a JSON object")
    if isinstance(data.get("error"), dict):
        raise error_from_event(data)
    return interaction_chunks(data, provider, request)
