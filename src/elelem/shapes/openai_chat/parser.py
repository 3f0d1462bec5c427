"""Chat Completions frames (and whole JSON responses) in, chunks out.  Sans-IO.

One parser serves every OpenAI-compatible server; the variants it handles are
the ones recorded traffic shows:

- ``delta.content`` as a string, or (Mistral) as a list of ``text`` and
  ``thinking`` parts;
- reasoning as ``delta.reasoning_content`` (DeepSeek, llama.cpp, Moonshot,
  Alibaba, xAI) or ``delta.reasoning`` (Groq, Cerebras, OpenRouter), and
  OpenRouter's ``reasoning_details`` (signatures, encrypted data), kept as a
  payload on the reasoning block so native replay can send it back verbatim;
- ``tool_calls`` deltas keyed by their ``index`` (the opaque block key: each
  call is its own block, left open until the stream ends, because the wire
  has no block end);
- ``refusal`` deltas: a text block marked with a ``refusal`` payload;
- ``annotations`` (``url_citation``) and Perplexity's top-level ``citations``
  / ``search_results``: attributions on the text block;
- ``usage`` anywhere (the usage-only final chunk with empty ``choices``
  included; Groq's ``x_groq.usage`` where the top level has none);
- the ``[DONE]`` sentinel, or the end of the body after a ``finish_reason``;
- mid-stream ``error`` objects: raised as typed :class:`StreamError`\\ s.

A text or reasoning block ends when the stream switches to another kind of
content, so blocks commit in the order the model produced them.  Inline
``<think>`` tags are kept as text: no recorded response carries them, and
guessing would turn user-visible text into hidden reasoning.

Delta fields nobody modelled are never dropped: strings are concatenated,
other values collected, and each field becomes an :class:`UnknownBlock`
``{"type": "openai_chat.field", "field": name, "value": …}`` which native
replay puts back on the assistant message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from elelem.errors import MalformedStreamError, StreamError
from elelem.shapes.media import generated_audio
from elelem.shapes.openai_chat.citations import annotation_attribution, perplexity_attributions
from elelem.shapes.openai_chat.errors import error_from_event
from elelem.shapes.openai_chat.fast import hot_decoder
from elelem.shapes.openai_chat.mapping import finish_reason, map_usage
from elelem.shapes.openai_chat.merging import Alternative, Details, merge_values
from elelem.shapes.skeleton import (
    ParserSkeleton,
    decode_whole_object,
    unknown_block,
    unknown_finish,
)
from elelem.stream import (
    BlockEnd,
    BlockKey,
    BlockStart,
    Chunk,
    Citation,
    Finish,
    Payload,
    ReasoningDelta,
    ResponseStart,
    TextDelta,
    ToolCallDelta,
    UsageUpdate,
)
from elelem.stream.frames import DataRun
from elelem.vocabulary import ProviderId, ProviderPayload, Usage
from elelem.vocabulary.json import JSONValue, decode_json

DONE = "[DONE]"
"""The sentinel data of the last SSE frame."""

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

# Top-level chunk fields that are metadata about the response, not content.
_METADATA = frozenset(
    {
        "id",
        "object",
        "created",
        "model",
        "choices",
        "usage",
        "citations",
        "search_results",
        "system_fingerprint",
        "service_tier",
        "provider",
        "obfuscation",
        "x_groq",
        "prompt_filter_results",
        "moderation",
        "timings",
        "time_info",
        "error",
    }
)

_MAX_EXTRA = 32
"""How many unlisted top-level field names the fast path takes on per stream."""

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
_KNOWN_CHOICE = frozenset({"index", "delta", "message", "finish_reason"})


def _malformed(message: str) -> MalformedStreamError:
    # A frame the server sent wrong will be sent wrong again: not retryable.
    return MalformedStreamError(message, retryable=False)


class ChatParser(ParserSkeleton):
    """Parses one Chat Completions response (on the
    :class:`~elelem.shapes.skeleton.ParserSkeleton`).

    Feed SSE frames through :meth:`message` (or whole chunk objects through
    :meth:`feed_object`); :meth:`eof` flushes.  ``finish`` is emitted at
    ``[DONE]``, or at the end of the body once a ``finish_reason`` was seen
    (usage may still follow the finish reason, so it is never emitted early).
    A ``[DONE]`` after no ``finish_reason`` finishes ``unknown``, keeping
    every block and the usage.
    """

    what = "chat"
    end_marker = DONE
    takes_runs = True
    event_type = "openai_chat.event"

    def __init__(self, provider: ProviderId, request: object = None) -> None:
        del request  # nothing in the request changes how the response reads
        super().__init__(provider)
        self._current: tuple[str, BlockKey] | None = None  # (kind, key) of text/reasoning/refusal
        self._serial = 0
        self._text: list[str] = []
        self._annotations: list[dict[str, Any]] = []
        self._details: Details | None = None
        self._tools: dict[BlockKey, tuple[str, str]] = {}  # wire index -> (id, name)
        self._tool_order: list[BlockKey] = []
        self._custom: dict[BlockKey, bool] = {}  # custom calls -> whether input began
        self._unknown: dict[str, list[Any]] = {}
        self._response_fields: dict[str, Any] = {}
        self._choice_fields: dict[str, list[Any]] = {}
        self._citations: list[str] = []
        self._search_results: list[Any] = []
        self._usage: Usage | None = None
        self._finish_raw: str | None = None
        self._refused = False
        self._audio: dict[str, Any] | None = None
        self._response_id: str | None = None
        # The fast path's decoder (it grows by the top-level fields nobody
        # listed that this stream sends), and the raw bytes of each field it
        # applied last: a field sent again unchanged is not applied again.
        self._hot = hot_decoder()
        self._no_raws = (None,) * len(self._hot.applied)  # a chunk with none of them
        self._extra: frozenset[str] = frozenset()
        self._choice_extra: frozenset[str] = frozenset()
        self._seen: dict[str, msgspec.Raw] = {}
        self._raws: tuple[Any, ...] | None = None  # the applied raw fields of the last hot chunk
        self._quiet: tuple[Any, ...] | None = None  # others known to change nothing
        self._choice_raws: tuple[Any, ...] | None = None  # and its choice's
        self._choice_seen: dict[str, msgspec.Raw] = {}
        self._held_usage: msgspec.Raw | None = None  # the fast path's, for release()
        self._alternatives: dict[int, Alternative] = {}  # choices beyond the first (n>1)

    # -- the skeleton's hooks -------------------------------------------------

    def fast(self, event: str, data: str) -> list[Chunk] | None:
        """The chunks of a hot chunk (see :mod:`~elelem.shapes.openai_chat.fast`):
        its one choice's delta, then the raw top-level fields that changed."""
        if event == "error":
            return None
        try:
            hot = self._hot.decoder.decode(data)
        except msgspec.DecodeError:
            return None  # not a hot chunk exactly: the dict path decides what it is
        return self._apply_hot(hot)

    def fast_values(self, run: DataRun, start: int, out: list[Chunk]) -> int:
        """The hot frames of ``run`` from frame ``start`` on, up to an
        ``error`` event: what :meth:`fast` does frame by frame, with the
        commonest chunk (more text or reasoning for the open block, nothing
        else changed) taken inline."""
        values, events = run.data, run.events
        decoder, _, getter, _, choice_getter = self._hot
        decode, apply, append = decoder.decode, self._apply_hot, out.append
        no_raws, usage_only = self._no_raws, self._usage_only
        index, end = start, len(values)
        # What the inline case reads; read again after a frame the general rule applied.
        kind, key = self._current or ("", "")
        last, last_choice, keep = self._raws, self._choice_raws, self._text.append
        quiet, finish = self._quiet, self._finish_raw
        base = self.frames - start  # frames[i] is frame number base + i + 1
        while index < end:
            if events is not None and events[index] == b"error":
                break  # the dict path's, as in fast()
            try:
                hot = decode(values[index])
            except msgspec.DecodeError:
                break  # the dict path decides what it is
            choices = hot.choices
            if len(choices) == 1:
                choice = choices[0]
                delta = choice.delta
                if (
                    # A finish reason sent again (some servers repeat it) changes nothing.
                    (choice.finish_reason is None or choice.finish_reason == finish)
                    and not choice.index
                    and not delta.refusal
                    and choice_getter(choice) == last_choice
                ):
                    text = delta.content
                    if type(text) is list and len(text) == 1:
                        text = text[0].text  # one text part (Mistral), as _feed_hot reads it
                    if kind == "text":
                        if (
                            type(text) is str
                            and text
                            and not (delta.reasoning_content or delta.reasoning)
                        ):
                            raws = getter(hot)
                            fresh = raws != last and raws != no_raws and raws != quiet
                            if not fresh or usage_only(raws):
                                last, quiet = self._raws, self._quiet
                                keep(text)
                                append(TextDelta(key, text))
                                index += 1
                                continue
                    elif kind == "reasoning" and not text:
                        thought, other = delta.reasoning_content, delta.reasoning
                        if (not thought) is not (not other):  # one of the two
                            raws = getter(hot)
                            fresh = raws != last and raws != no_raws and raws != quiet
                            if not fresh or usage_only(raws):
                                last, quiet = self._raws, self._quiet
                                append(ReasoningDelta(key, thought or other))
                                index += 1
                                continue
            self.frames = base + index + 1  # counted before the general rule, as in message()
            chunks = apply(hot)
            if chunks is None:
                break
            out += chunks
            index += 1
            kind, key = self._current or ("", "")
            last, last_choice, keep = self._raws, self._choice_raws, self._text.append
            quiet, finish = self._quiet, self._finish_raw
        self.frames = base + index
        return index

    def _usage_only(self, raws: tuple[Any, ...]) -> bool:
        """When of a hot chunk's applied fields only ``usage`` (the first,
        :data:`~elelem.shapes.openai_chat.fast.RAW_FIELDS`) changed, to an
        object: hold it (as :meth:`_apply_hot` does) and say so."""
        last, usage = self._raws, raws[0]
        if last is None or usage is None or raws[1:] != last[1:] or memoryview(usage)[0] != 0x7B:
            return False
        self._raws = raws
        if self._seen.get("usage") != usage:
            self._seen["usage"] = self._held_usage = usage
            self._quiet = None  # it held an older usage
            self.holding = True
        return True

    def _apply_hot(self, hot: Any) -> list[Chunk] | None:
        """A decoded hot chunk's chunks, or None (before touching any state)."""
        _, applied, getter, choice_fields, choice_getter = self._hot
        choices = hot.choices
        if len(choices) != 1 or choices[0].index != 0:
            return None
        choice = choices[0]
        choice_raws = choice_getter(choice)
        if choice_raws != self._choice_raws:
            self._choice_raws = choice_raws
            seen = self._choice_seen
            for name, raw in zip(choice_fields, choice_raws, strict=True):
                if raw is not None and seen.get(name) != raw:
                    seen[name] = raw
                    self._keep_choice_field(name, decode_json(raw))
        delta = choice.delta
        text = delta.content
        thought = delta.reasoning_content
        other = delta.reasoning
        current = self._current
        out: list[Chunk]
        # Most chunks: more text (or more reasoning, in one field) for the
        # block already open; what _feed_hot gives, without its calls.
        if current is None or delta.refusal:
            out = self._feed_hot(choice)
        elif current[0] == "text" and type(text) is str and text and not (thought or other):
            self._text.append(text)
            out = [TextDelta(current[1], text)]
        elif current[0] == "reasoning" and not text and bool(thought) != bool(other):
            out = [ReasoningDelta(current[1], thought or other)]
        else:
            out = self._feed_hot(choice)
        if choice.finish_reason is not None:
            self._finish_raw = choice.finish_reason
        raws = getter(hot)
        if (
            raws == self._raws
            or raws == self._no_raws
            or raws == self._quiet
            or self._usage_only(raws)
        ):
            return out  # nothing new (the fields are the last ones, or absent), or a usage held
        seen = self._seen
        changed = {
            name: raw
            for (_, name), raw in zip(applied, raws, strict=True)
            if raw is not None and seen.get(name) != raw
        }
        if not changed:
            # The fields it sends are the ones applied (a stream whose chunks
            # take turns with and without a field): the next such is passed over.
            self._quiet = raws
            return out
        self._raws, self._quiet = raws, None
        # What the dict path does with these fields, for only those that changed.
        usage = changed.get("usage")
        if usage is not None and len(changed) == 1 and memoryview(usage)[0] == 0x7B:
            # A usage object that grows on every chunk (Perplexity): held
            # for the read's end (the skeleton's rule), the last one mapped.
            self._held_usage = usage
            self.holding = True
        else:
            if self.holding:
                self.holding = False
                out += self.release()
            self._top_level({k: decode_json(v) for k, v in changed.items()}, out)
        seen.update(changed)
        return out

    def release(self) -> list[Chunk]:
        """The usage the fast path held: the read's last ``usage`` object."""
        out: list[Chunk] = []
        held, self._held_usage = self._held_usage, None
        if held is not None:
            self._apply_usage(decode_json(held), {"usage": held}, out, decoded=True)
        return out

    def decode(self, event: str, data: str) -> dict[str, Any]:
        """The frame's chunk object; an ``error`` object (or a plain-text
        ``error`` event) raises the provider's error, the frame as its body."""
        if event == "error":
            try:
                decode_json(data)
            except msgspec.DecodeError:
                raise error_from_event({"error": {"message": data}}, data.encode()) from None
        obj = super().decode(event, data)
        if event == "error" or (obj.get("error") and not obj.get("choices")):
            raise error_from_event(obj, data.encode())
        return obj

    def event(self, obj: dict[str, Any], event: str) -> list[Chunk]:
        """One chunk object."""
        return self.feed_object(obj)

    def end(self) -> list[Chunk]:
        """``[DONE]``: every block closed, and the finish."""
        return self._finalize()

    def at_eof(self) -> list[Chunk]:
        """The body ended: finish if a ``finish_reason`` arrived, else emit
        nothing, leaving the stream incomplete for the driver to report."""
        if self._finish_raw is None:
            return []
        return self._finalize()

    # -- chunk objects -------------------------------------------------------

    def feed_object(self, obj: Mapping[str, Any]) -> list[Chunk]:
        """Apply one ``chat.completion.chunk`` object."""
        out: list[Chunk] = []
        choices = obj.get("choices") or []
        if not isinstance(choices, list):
            raise _malformed(f"frame {self.frames}: 'choices' is not a list")
        if not self.started and (obj.get("id") or choices):
            self._start(obj, out)
        for choice in choices:
            if not isinstance(choice, dict):
                raise _malformed(f"frame {self.frames}: a choice is not an object")
            if not self.started:
                self._start(obj, out)
            number = choice.get("index", 0)
            if number != 0:
                self._alternative(number).add(choice)
                continue
            for key, value in choice.items():
                if key not in _KNOWN_CHOICE:
                    self._keep_choice_field(key, value)
            delta = choice.get("delta")
            if delta is None:
                delta = choice.get("message")
            if delta is not None:
                if not isinstance(delta, dict):
                    raise _malformed(f"frame {self.frames}: 'delta' is not an object")
                self._apply_delta(delta, out)
            reason = choice.get("finish_reason")
            if reason is not None:
                if not isinstance(reason, str):
                    raise _malformed(f"frame {self.frames}: 'finish_reason' is not a string")
                self._finish_raw = reason
        self._top_level(obj, out)
        self._learn(obj)
        return out

    def _alternative(self, number: Any) -> Alternative:
        """The choice ``number`` beyond the first (``n>1``), kept whole for
        :data:`ALTERNATIVES_FORMAT`."""
        if not isinstance(number, int) or isinstance(number, bool) or number < 0:
            raise _malformed(f"frame {self.frames}: choice index {number!r} is not a count")
        found = self._alternatives.get(number)
        if found is None:
            found = self._alternatives[number] = Alternative(number)
        return found

    def _keep_choice_field(self, name: str, value: Any) -> None:
        if value not in (None, "", [], {}):
            values = self._choice_fields.setdefault(name, [])
            if not values or values[-1] != value:
                values.append(value)

    def _learn(self, obj: Mapping[str, Any]) -> None:
        """After a chunk of the dict path: the fast path forgets which raw
        fields it applied last (this chunk may have changed what they set),
        and takes the top-level fields nobody listed that this chunk carried,
        so the stream's next chunks stay typed."""
        self._seen.clear()
        self._raws = self._quiet = None
        self._choice_seen.clear()
        self._choice_raws = None
        if not self.started:
            return
        extra = frozenset(k for k in obj if k not in _METADATA) - self._extra
        choices = obj.get("choices") or ()
        choice_extra = (
            frozenset(k for c in choices for k in c if k not in _KNOWN_CHOICE) - self._choice_extra
        )
        if (extra or choice_extra) and len(self._extra) + len(self._choice_extra) < _MAX_EXTRA:
            self._extra |= extra
            self._choice_extra |= choice_extra
            self._hot = hot_decoder(self._extra, self._choice_extra)
            self._no_raws = (None,) * len(self._hot.applied)

    def _feed_hot(self, choice: Any) -> list[Chunk]:
        """What :meth:`feed_object` gives for the delta of the typed choice
        (index 0) of a hot chunk of a started response (its finish reason is
        the caller's)."""
        out: list[Chunk] = []
        delta = choice.delta
        # The same order as _apply_delta: reasoning fields, text, refusal.
        if delta.reasoning_content:
            self._reasoning(delta.reasoning_content, "reasoning_content", out)
        if delta.reasoning:
            self._reasoning(delta.reasoning, "reasoning", out)
        content = delta.content
        if isinstance(content, str):
            if content:
                self._text_delta(content, out)
        elif content:
            for part in content:  # text parts, as _content_parts takes them
                if part.text:
                    self._text_delta(part.text, out)
        if delta.refusal:
            self._refusal(delta.refusal, out)
        return out

    def _start(self, obj: Mapping[str, Any], out: list[Chunk]) -> None:
        self.started = True
        rid = obj.get("id")
        self._response_id = rid if isinstance(rid, str) and rid else None
        model = obj.get("model")
        out.append(
            ResponseStart(
                response_id=rid if isinstance(rid, str) and rid else None,
                model=model if isinstance(model, str) and model else None,
                provider=self.provider,
            )
        )

    def _top_level(self, obj: Mapping[str, Any], out: list[Chunk]) -> None:
        for key, value in obj.items():
            if key not in _METADATA and value not in (None, "", [], {}):
                # Repeated on every chunk by the servers that send them: latest wins.
                self._response_fields[key] = value
        citations = obj.get("citations")
        if isinstance(citations, list) and citations:
            self._citations = [c for c in citations if isinstance(c, str)]
        results = obj.get("search_results")
        if isinstance(results, list) and results:
            self._search_results = list(results)
        usage = obj.get("usage")
        if not isinstance(usage, dict):
            groq = obj.get("x_groq")
            usage = groq.get("usage") if isinstance(groq, dict) else None
        if isinstance(usage, dict):
            self._apply_usage(usage, obj, out)

    def _apply_usage(
        self,
        usage: dict[str, Any],
        obj: Mapping[str, Any],
        out: list[Chunk],
        *,
        decoded: bool = False,
    ) -> None:
        mapped = map_usage(usage, decoded=decoded)
        if mapped != self._usage:
            self._usage = mapped
            if not self.started:
                self._start(obj, out)
            out.append(UsageUpdate(mapped))

    # -- deltas --------------------------------------------------------------

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
            raise _malformed(f"frame {self.frames}: 'content' is a {type(content).__name__}")
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            self._refusal(refusal, out)
        annotations = delta.get("annotations")
        if isinstance(annotations, list) and annotations:
            self._ensure("text", out)
            self._annotations.extend(a for a in annotations if isinstance(a, dict))
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
        data, transcript = "".join(held.pop("data")), "".join(held.pop("transcript"))
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
        for detail in details:
            if not isinstance(detail, dict):
                raise _malformed(f"frame {self.frames}: a reasoning detail is not an object")
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
                raise _malformed(f"frame {self.frames}: a content part is not an object")
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str):
                if part["text"]:
                    self._text_delta(part["text"], out)
            elif kind == "thinking" and isinstance(part.get("thinking"), list):
                for inner in part["thinking"]:
                    text = inner.get("text") if isinstance(inner, dict) else None
                    if not isinstance(text, str):
                        raise _malformed(f"frame {self.frames}: a thinking part has no text")
                    if text:
                        self._reasoning(text, "thinking", out)
            else:
                # A part type nobody modelled: kept whole, in position.
                self._close_current(out)
                key = self._new_key("part")
                if not isinstance(kind, str):
                    raise _malformed(f"frame {self.frames}: a content part has no string type")
                out.append(BlockStart(index=key, block="unknown", raw=dict(part)))
                out.append(BlockEnd(key))

    def _tool_delta(
        self, call: Any, position: int, out: list[Chunk], key: BlockKey | None = None
    ) -> None:
        if not isinstance(call, dict):
            raise _malformed(f"frame {self.frames}: a tool call delta is not an object")
        index = call.get("index", position) if key is None else key
        if key is None and (not isinstance(index, int) or isinstance(index, bool)):
            raise _malformed(f"frame {self.frames}: tool call index {index!r} is not an integer")
        # A custom tool (type "custom") names itself and streams its free-form
        # input in "custom", as a function streams its arguments in "function".
        custom = call.get("type") == "custom" or ("custom" in call and "function" not in call)
        function = call.get("custom" if custom else "function") or {}
        if not isinstance(function, dict):
            raise _malformed(f"frame {self.frames}: tool call 'function' is not an object")
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
                raise _malformed(f"frame {self.frames}: tool call 'custom' is not an object")
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
            raise _malformed(f"frame {self.frames}: tool call {index} starts without a name")
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

    # -- ending --------------------------------------------------------------

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

    def _finalize(self) -> list[Chunk]:
        out: list[Chunk] = []
        if not self.started:
            self._start({}, out)
        attributions = perplexity_attributions(self._citations, self._search_results, self.provider)
        if attributions:
            key = self._ensure("text", out)
            out.extend(Citation(key, a) for a in attributions)
        self._close_current(out)
        out += self._audio_block()
        for field, values in self._unknown.items():
            key = self._new_key("field")
            value = merge_values(values)
            out += unknown_block(key, {"type": UNKNOWN_FIELD_TYPE, "field": field, "value": value})
        for field, values in self._choice_fields.items():
            key = self._new_key("field")
            raw: dict[str, JSONValue] = {"type": CHOICE_FIELD_TYPE, "field": field, "value": values}
            out += unknown_block(key, raw)
        for field, value in self._response_fields.items():
            key = self._new_key("field")
            out += unknown_block(key, {"type": RESPONSE_FIELD_TYPE, "field": field, "value": value})
        for index in self._tool_order:
            self._end_tool(index, out)
        self._tool_order = []
        reason = self._finish_raw
        finish = unknown_finish() if reason is None else self._finish(reason)
        if self._alternatives:
            # The other choices of an n>1 request: the response's, not the
            # message's (a conversation continues with one choice).
            kept = [self._alternatives[n].value() for n in sorted(self._alternatives)]
            alternatives = ProviderPayload(self.provider, ALTERNATIVES_FORMAT, None, kept)
            finish = msgspec.structs.replace(finish, payloads=(*finish.payloads, alternatives))
        out.append(finish)
        self.finished = True
        return out

    def _finish(self, raw: str) -> Finish:
        if raw == "error":
            return Finish("error", raw=raw, failure="the provider ended the choice with an error")
        return Finish(finish_reason(raw, refused=self._refused), raw=raw)


def parse_body(body: bytes, provider: ProviderId, request: object = None) -> list[Chunk]:
    """Map a non-streaming ``chat.completion`` body to the chunks a stream gives.

    The body's end is its end marker: a body with no ``finish_reason``
    finishes ``unknown``, keeping what it holds.
    """
    obj = decode_whole_object(body, "chat response body")
    if obj.get("error") and not obj.get("choices"):
        raise error_from_event(obj, body)
    parser = ChatParser(provider)
    chunks = parser.feed_object(obj)
    chunks.extend(parser.end())
    return chunks


__all__ = [
    "ALTERNATIVES_FORMAT",
    "AUDIO_FORMAT",
    "CHOICE_FIELD_TYPE",
    "DONE",
    "FUNCTION_CALL_FORMAT",
    "REASONING_DETAILS_FORMAT",
    "REASONING_FIELD_FORMAT",
    "REFUSAL_FORMAT",
    "RESPONSE_FIELD_TYPE",
    "SYNTHESIZED_ID_FORMAT",
    "TOOL_EXTRA_FORMAT",
    "UNKNOWN_FIELD_TYPE",
    "ChatParser",
    "StreamError",
    "parse_body",
]
