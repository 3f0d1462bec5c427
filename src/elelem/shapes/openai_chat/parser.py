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
- mid-stream ``error`` objects: raised as typed
  :class:`~elelem.errors.StreamError`\\ s.

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

from elelem.shapes.openai_chat.blocks import (
    ALTERNATIVES_FORMAT,
    CHOICE_FIELD_TYPE,
    RESPONSE_FIELD_TYPE,
    UNKNOWN_FIELD_TYPE,
    ChatBlocks,
    malformed,
)
from elelem.shapes.openai_chat.citations import perplexity_attributions
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
    BlockKey,
    Chunk,
    Citation,
    Finish,
    ReasoningDelta,
    ResponseStart,
    TextDelta,
    UsageUpdate,
)
from elelem.stream.frames import DataRun
from elelem.vocabulary import ProviderId, ProviderPayload, Usage
from elelem.vocabulary.json import JSONValue, decode_json

DONE = "[DONE]"
"""The sentinel data of the last SSE frame."""

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

_KNOWN_CHOICE = frozenset({"index", "delta", "message", "finish_reason"})


class ChatParser(ChatBlocks, ParserSkeleton):
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
        self._annotated_urls: set[str] = set()
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
            raise malformed(f"frame {self.frames}: 'choices' is not a list")
        if not self.started and (obj.get("id") or choices):
            self._start(obj, out)
        for choice in choices:
            if not isinstance(choice, dict):
                raise malformed(f"frame {self.frames}: a choice is not an object")
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
                    raise malformed(f"frame {self.frames}: 'delta' is not an object")
                self._apply_delta(delta, out)
            reason = choice.get("finish_reason")
            if reason is not None:
                if not isinstance(reason, str):
                    raise malformed(f"frame {self.frames}: 'finish_reason' is not a string")
                self._finish_raw = reason
        self._top_level(obj, out)
        self._learn(obj)
        return out

    def _alternative(self, number: Any) -> Alternative:
        """The choice ``number`` beyond the first (``n>1``), kept whole for
        :data:`ALTERNATIVES_FORMAT`."""
        if not isinstance(number, int) or isinstance(number, bool) or number < 0:
            raise malformed(f"frame {self.frames}: choice index {number!r} is not a count")
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

    # -- ending --------------------------------------------------------------

    def _finalize(self) -> list[Chunk]:
        out: list[Chunk] = []
        if not self.started:
            self._start({}, out)
        attributions = perplexity_attributions(
            self._citations, self._search_results, self.provider, self._annotated_urls
        )
        if any(url in self._annotated_urls for url in self._citations):
            # The URLs are attributed once, by their annotations; the list
            # itself (the order the text's [n] markers count in) is kept.
            self._response_fields["citations"] = list(self._citations)
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


__all__ = ["DONE", "ChatParser", "parse_body"]
