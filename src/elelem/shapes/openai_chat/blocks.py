"""How Chat Completions deltas become blocks: the content blocks (text,
reasoning, refusal, parts nobody modelled, generated audio) and the tool
calls keyed by their wire index.  Sans-IO.

:class:`~elelem.shapes.openai_chat.parser.ChatParser` reads the frames and
says what each delta holds; :class:`ChatBlocks`, which it is built on, opens,
feeds and ends the blocks, and names the payloads that mark them.  The
formats and field types are the ones the encoder's native replay reads back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from elelem.errors import MalformedStreamError
from elelem.shapes.common import at_frame, checked_payload
from elelem.shapes.media import generated_audio, joined_base64
from elelem.shapes.openai_chat.citations import annotation_attribution, annotation_url
from elelem.shapes.openai_chat.merging import Details
from elelem.shapes.skeleton import unknown_block
from elelem.stream import (
    BlockEnd,
    BlockKey,
    BlockStart,
    Chunk,
    Citation,
    Payload,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
)
from elelem.vocabulary import ProviderId, ProviderPayload

UNKNOWN_FIELD_TYPE = "openai_chat.field"
"""``type`` of the unknown block that keeps a delta field nobody modelled."""

CHOICE_FIELD_TYPE = "openai_chat.choice_field"
"""``type`` of the unknown block that keeps a choice field nobody modelled
(``logprobs``, ``native_finish_reason``, ``content_filter_results``, …),
as the list of its values (each one that differs from the last one kept):
what the server said about its choice, like ``finish_reason``, which no
request carries back, so native replay leaves it out (and says so)."""

RESPONSE_FIELD_TYPE = "openai_chat.response_field"
"""``type`` of the unknown block that keeps a top-level chunk field nobody
modelled (Perplexity ``images``, ``related_questions``, …): response-level
data, so native replay does not send it back (and says so)."""

REFUSAL_FORMAT = "refusal"
"""Payload format marking a text block as the message's ``refusal``."""

REASONING_FIELD_FORMAT = "reasoning-field"
"""Payload format naming the wire field reasoning arrived in (for echo replay)."""

REASONING_DETAILS_FORMAT = "reasoning_details"
"""Payload format of OpenRouter's merged ``reasoning_details`` list."""

ALTERNATIVES_FORMAT = "alternatives"
"""Finish payload format of the choices beyond the first of an ``n>1``
response: a list of ``{"index", "message", "finish_reason", …}`` as a
non-streamed response holds them (see
:func:`~elelem.shapes.openai_chat.alternatives.alternatives`)."""

SYNTHESIZED_ID_FORMAT = "synthesized-id"
"""Payload format marking a tool call whose id the server did not send."""

FUNCTION_CALL_FORMAT = "function-call"
"""Payload format marking a tool call that came as the deprecated
``function_call`` (replayed as one, its result as a ``function`` message)."""

FUNCTION_CALL_KEY = "function_call"
"""The block key of the deprecated ``function_call`` (one per message)."""

AUDIO_FORMAT = "audio"
"""Payload format of generated audio's ``id`` and ``expires_at`` (what a
follow-up request names the audio by)."""

TOOL_EXTRA_FORMAT = "tool-call-extra"
"""Payload format of a tool call's fields beyond id/type/function (replayed verbatim)."""

# Fields whose meaning this parser models (or, for labels such as Groq's
# ``channel``, deliberately ignores: they carry no content).
_KNOWN_DELTA = frozenset(
    {
        "role",
        "content",
        "reasoning_content",
        "reasoning",
        "reasoning_details",
        "tool_calls",
        "refusal",
        "annotations",
        "channel",
        "function_call",
        "audio",
    }
)
_TOOL_KEYS = frozenset({"index", "id", "type", "function", "custom"})


def malformed(message: str) -> MalformedStreamError:
    """The error for a frame the server sent wrong (never retried)."""
    # A frame the server sent wrong will be sent wrong again: not retryable.
    return MalformedStreamError(message, retryable=False)


_DETAIL_STRINGS = {"reasoning.encrypted": ("data",), "reasoning.text": ("signature",)}
"""The payload fields of OpenRouter's reasoning detail types
(openrouter.ai/docs/use-cases/reasoning-tokens#reasoning-details-api-shape):
``data`` a string; ``signature`` a string or null."""


def detail_fault(detail: object, provider: str, where: str) -> ProviderPayload | None:
    """The malformed record of one ``reasoning_details`` entry that is no
    object, or whose signature or encrypted data is no string; None when it
    is well formed (a type nobody modelled is kept as it came)."""
    if not isinstance(detail, dict):
        return checked_payload(provider, REASONING_DETAILS_FORMAT, detail, dict, where)
    for field in _DETAIL_STRINGS.get(str(detail.get("type")), ()):
        value = detail.get(field)
        if value is not None and not isinstance(value, str):
            return checked_payload(
                provider, REASONING_DETAILS_FORMAT, value, str, f"{where}.{field}"
            )
    return None


class ChatBlocks:
    """The block state of one response and the methods that write its
    chunks (a base of :class:`~elelem.shapes.openai_chat.parser.ChatParser`,
    which sets these attributes up and reads the frames)."""

    provider: ProviderId
    frames: int
    _current: tuple[str, BlockKey] | None  # (kind, key) of text/reasoning/refusal
    _serial: int
    _text: list[str]
    _annotations: list[dict[str, Any]]
    _annotated_urls: set[str]
    _details: Details | None
    _tools: dict[BlockKey, tuple[str, str]]  # wire index -> (id, name)
    _tool_order: list[BlockKey]
    _custom: dict[BlockKey, bool]  # custom calls -> whether input began
    _refused: bool
    _audio: dict[str, Any] | None
    _response_id: str | None
    _unknown: dict[str, list[Any]]

    def _apply_delta(self, delta: Mapping[str, Any], out: list[Chunk]) -> None:
        content = delta.get("content")
        reasoning_field = None
        for field in ("reasoning_content", "reasoning"):
            value = delta.get(field)
            if isinstance(value, str) and value:
                reasoning_field = field
                self._reasoning(value, field, out)
        details = delta.get("reasoning_details")
        if isinstance(details, list) and details:
            self._reasoning_details(details, reasoning_field is None, out)
        if isinstance(content, str):
            if content:
                self._text_delta(content, out)
        elif isinstance(content, list):
            self._content_parts(content, out)
        elif content is not None:
            raise malformed(f"frame {self.frames}: 'content' is a {type(content).__name__}")
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            self._refusal(refusal, out)
        annotations = delta.get("annotations")
        if isinstance(annotations, list) and annotations:
            self._ensure("text", out)
            for annotation in annotations:
                if isinstance(annotation, dict):
                    self._annotations.append(annotation)
                    url = annotation_url(annotation)
                    if url is not None:
                        self._annotated_urls.add(url)
        calls = delta.get("tool_calls")
        if isinstance(calls, list):
            for position, call in enumerate(calls):
                self._tool_delta(call, position, out)
        legacy = delta.get("function_call")
        if legacy is not None:
            # The deprecated functions API: one call, no id, a block like any
            # other tool call (marked, so native replay spells it this way).
            self._tool_delta({"function": legacy}, 0, out, FUNCTION_CALL_KEY)
        audio = delta.get("audio")
        if isinstance(audio, dict) and audio:
            self._audio_piece(audio)
        elif audio not in (None, "", [], {}):
            self._unknown.setdefault("audio", []).append(audio)
        for key, value in delta.items():
            if key not in _KNOWN_DELTA and value not in (None, "", [], {}):
                self._unknown.setdefault(key, []).append(value)

    def _audio_piece(self, piece: Mapping[str, Any]) -> None:
        """Gather generated audio (``message.audio``, or ``delta.audio`` in
        pieces): its base64 ``data`` and ``transcript`` concatenated, its
        ``id``, ``expires_at`` and any other field as last given."""
        held = self._audio if self._audio is not None else {"data": [], "transcript": []}
        self._audio = held
        for key, value in piece.items():
            if key in ("data", "transcript") and isinstance(value, str):
                held[key].append(value)
            elif value is not None:
                held[key] = value

    def _audio_block(self) -> list[Chunk]:
        """The generated audio as an audio block (its id and expiry kept for
        replay); kept as an unknown field when it holds no bytes."""
        held = self._audio
        self._audio = None
        if held is None:
            return []
        data, transcript = joined_base64(held.pop("data")), "".join(held.pop("transcript"))
        payloads = [ProviderPayload(self.provider, AUDIO_FORMAT, None, held)] if held else []
        raw = generated_audio(data, None, transcript or None, payloads)
        key = self._new_key("audio")
        if raw is None:
            value = dict(held)
            value.update({k: v for k, v in (("data", data), ("transcript", transcript)) if v})
            return unknown_block(
                key, {"type": UNKNOWN_FIELD_TYPE, "field": "audio", "value": value}
            )
        return [BlockStart(key, "audio", raw=raw), BlockEnd(key)]

    def _new_key(self, kind: str) -> str:
        self._serial += 1
        return f"{kind}-{self._serial}"

    def _ensure(self, kind: str, out: list[Chunk], field: str | None = None) -> BlockKey:
        """The open block of ``kind`` (text, reasoning, refusal), opening it
        (and closing another kind) as needed."""
        if self._current is not None and self._current[0] == kind:
            return self._current[1]
        self._close_current(out)
        key = self._new_key(kind)
        self._current = (kind, key)
        out.append(BlockStart(index=key, block="reasoning" if kind == "reasoning" else "text"))
        if kind == "refusal":
            self._refused = True
            out.append(Payload(key, ProviderPayload(self.provider, REFUSAL_FORMAT, None, True)))
        if kind == "reasoning":
            self._details = None
            if field is not None:
                out.append(
                    Payload(
                        key, ProviderPayload(self.provider, REASONING_FIELD_FORMAT, None, field)
                    )
                )
        return key

    def _text_delta(self, text: str, out: list[Chunk]) -> None:
        key = self._ensure("text", out)
        self._text.append(text)
        out.append(TextDelta(key, text))

    def _reasoning(self, text: str, field: str, out: list[Chunk]) -> None:
        key = self._ensure("reasoning", out, field)
        out.append(ReasoningDelta(key, text))

    def _reasoning_details(self, details: list[Any], use_text: bool, out: list[Chunk]) -> None:
        key = self._ensure("reasoning", out, "reasoning_details")
        if self._details is None:
            self._details = Details()
        for i, detail in enumerate(details):
            bad = detail_fault(
                detail, self.provider, at_frame(self.frames, f"reasoning_details[{i}]")
            )
            if bad is not None:
                # Recorded on the block and left out of what replays; the
                # answer goes on.
                out.append(Payload(key, bad))
                continue
            self._details.add(detail)
            if use_text:
                # Only where no plain reasoning string carried the same text.
                text = detail.get("text") or detail.get("summary")
                if isinstance(text, str) and text:
                    out.append(ReasoningDelta(key, text))

    def _refusal(self, text: str, out: list[Chunk]) -> None:
        key = self._ensure("refusal", out)
        out.append(TextDelta(key, text))

    def _content_parts(self, parts: list[Any], out: list[Chunk]) -> None:
        for part in parts:
            if not isinstance(part, dict):
                raise malformed(f"frame {self.frames}: a content part is not an object")
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str):
                if part["text"]:
                    self._text_delta(part["text"], out)
            elif kind == "thinking" and isinstance(part.get("thinking"), list):
                for inner in part["thinking"]:
                    text = inner.get("text") if isinstance(inner, dict) else None
                    if not isinstance(text, str):
                        raise malformed(f"frame {self.frames}: a thinking part has no text")
                    if text:
                        self._reasoning(text, "thinking", out)
            else:
                # A part type nobody modelled: kept whole, in position.
                self._close_current(out)
                key = self._new_key("part")
                if not isinstance(kind, str):
                    raise malformed(f"frame {self.frames}: a content part has no string type")
                out.append(BlockStart(index=key, block="unknown", raw=dict(part)))
                out.append(BlockEnd(key))

    def _tool_delta(
        self, call: Any, position: int, out: list[Chunk], key: BlockKey | None = None
    ) -> None:
        if not isinstance(call, dict):
            raise malformed(f"frame {self.frames}: a tool call delta is not an object")
        index = call.get("index", position) if key is None else key
        if key is None and (not isinstance(index, int) or isinstance(index, bool)):
            raise malformed(f"frame {self.frames}: tool call index {index!r} is not an integer")
        # A custom tool (type "custom") names itself and streams its free-form
        # input in "custom", as a function streams its arguments in "function".
        custom = call.get("type") == "custom" or ("custom" in call and "function" not in call)
        function = call.get("custom" if custom else "function") or {}
        if not isinstance(function, dict):
            raise malformed(f"frame {self.frames}: tool call 'function' is not an object")
        call_id = call.get("id")
        known = self._tools.get(index)
        if known is not None and isinstance(call_id, str) and call_id and call_id != known[0]:
            # A server that reuses an index for a new call: the old one is complete.
            self._end_tool(index, out)
            self._tool_order.remove(index)
            known = None
        if known is None:
            self._open_tool(index, call, function, custom, key is not None, out)
        elif index in self._custom and not custom:
            custom = True
            function = call.get("custom") or {}
            if not isinstance(function, dict):
                raise malformed(f"frame {self.frames}: tool call 'custom' is not an object")
        if custom:
            text = function.get("input")
            if isinstance(text, str) and text:
                piece = msgspec.json.encode(text).decode()[1:-1]
                if not self._custom[index]:
                    self._custom[index] = True
                    piece = '"' + piece
                out.append(ToolCallDelta(index, piece))
            return
        arguments = function.get("arguments")
        if isinstance(arguments, str) and arguments:
            out.append(ToolCallDelta(index, arguments))
        elif isinstance(arguments, (dict, list)):
            # Some servers (Ollama) send parsed arguments; keep them as JSON text.
            out.append(ToolCallDelta(index, msgspec.json.encode(arguments).decode()))

    def _open_tool(
        self,
        index: BlockKey,
        call: dict[str, Any],
        function: dict[str, Any],
        custom: bool,
        legacy: bool,
        out: list[Chunk],
    ) -> None:
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise malformed(f"frame {self.frames}: tool call {index} starts without a name")
        call_id = call.get("id")
        synthesized = not isinstance(call_id, str) or not call_id
        if not isinstance(call_id, str) or not call_id:
            # Some local servers (and the deprecated function_call) send no
            # call id.  The result must still link to its call, and ids must
            # differ across turns: derive one from the response id, and say
            # so in a payload.
            call_id = f"{self._response_id or 'call'}-{index}"
        self._close_current(out)
        self._tools[index] = (call_id, name)
        self._tool_order.append(index)
        if custom:
            self._custom[index] = False
        out.append(BlockStart(index=index, block="tool-call", id=call_id, name=name))
        extra = {k: v for k, v in call.items() if k not in _TOOL_KEYS}
        if call.get("type") not in (None, "function"):
            extra["type"] = call["type"]
        elif custom:
            extra["type"] = "custom"
        if synthesized:
            out.append(
                Payload(index, ProviderPayload(self.provider, SYNTHESIZED_ID_FORMAT, None, True))
            )
        if legacy:
            out.append(
                Payload(index, ProviderPayload(self.provider, FUNCTION_CALL_FORMAT, None, True))
            )
        if extra:
            out.append(
                Payload(index, ProviderPayload(self.provider, TOOL_EXTRA_FORMAT, None, extra))
            )

    def _end_tool(self, index: BlockKey, out: list[Chunk]) -> None:
        """The tool call ``index`` is complete: a custom call's input, sent as
        the JSON string its arguments are, gets its closing quote."""
        started = self._custom.pop(index, None)
        if started is not None:
            out.append(ToolCallDelta(index, '"' if started else '""'))
        out.append(BlockEnd(index))

    def _close_current(self, out: list[Chunk]) -> None:
        if self._current is None:
            return
        kind, key = self._current
        if kind == "text":
            text = "".join(self._text)
            for annotation in self._annotations:
                out.append(Citation(key, annotation_attribution(annotation, text, self.provider)))
            self._text = []
            self._annotations = []
        elif kind == "reasoning" and self._details is not None:
            out.append(
                Payload(
                    key,
                    ProviderPayload(
                        self.provider, REASONING_DETAILS_FORMAT, None, self._details.items
                    ),
                )
            )
            self._details = None
        out.append(BlockEnd(key))
        self._current = None


__all__ = [
    "ALTERNATIVES_FORMAT",
    "AUDIO_FORMAT",
    "CHOICE_FIELD_TYPE",
    "FUNCTION_CALL_FORMAT",
    "FUNCTION_CALL_KEY",
    "REASONING_DETAILS_FORMAT",
    "REASONING_FIELD_FORMAT",
    "REFUSAL_FORMAT",
    "RESPONSE_FIELD_TYPE",
    "SYNTHESIZED_ID_FORMAT",
    "TOOL_EXTRA_FORMAT",
    "UNKNOWN_FIELD_TYPE",
    "ChatBlocks",
    "malformed",
]
