"""The Gemini frame parser (sans-IO): ``GenerateContentResponse`` chunks in, chunks out.

Every SSE frame (``alt=sse``) holds one response chunk; the non-streaming
body is one chunk and goes through the same code (:func:`response_chunks`).
``candidates[0].content.parts`` map as follows:

- ``text`` parts -> one text block, kept open across chunks until a part of
  another kind interrupts it or the stream ends, because grounding supports
  (citations) arrive on the last chunk and must precede the block's end;
- ``thought: true`` parts -> a reasoning block, kept open the same way;
- ``thoughtSignature`` on any part -> a ``thought_signature`` payload on that
  part's block (a signature that arrived on its own empty part also gets a
  ``signature_layout`` payload, so native replay rebuilds that part);
- ``functionCall`` -> a tool-call block (Vertex ``partialArgs`` pieces are
  rebuilt into one argument object); a call without an id gets a
  synthesized one, recorded in a ``synthesized_id`` payload;
- ``executableCode`` / ``codeExecutionResult`` -> a ``code_execution``
  hosted activity, started then completed or failed (raw part as payload);
- any other part -> an unknown block ``{"type": <part kind>, "part": …}``.

At the end: ``groundingMetadata.webSearchQueries`` -> a ``web_search``
activity; ``urlContextMetadata`` -> a ``web_fetch`` activity; the finish
reason, with every envelope field no block owns kept in ``Finish.payloads``
(the chunk's, the first candidate's, and its content's beside the parts;
the other candidates whole).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import msgspec

from elelem.shapes.common import malformed
from elelem.shapes.gemini.computer import computer_actions
from elelem.shapes.gemini.errors import error_from_event
from elelem.shapes.gemini.fast import HotChunk, decode_usage, extra_fields, hot_decoder
from elelem.shapes.gemini.grounding import (
    fetch_activity,
    search_activity,
)
from elelem.shapes.gemini.mapping import finish_reason, map_usage
from elelem.shapes.gemini.parts import GeminiParts, OpenBlock
from elelem.shapes.skeleton import ParserSkeleton, decode_whole_body, unknown_finish
from elelem.stream import (
    Chunk,
    Finish,
    Hosted,
    ReasoningDelta,
    ResponseStart,
    TextDelta,
    UsageUpdate,
)
from elelem.stream.frames import DataRun
from elelem.vocabulary import HostedActivity, ProviderId, ProviderPayload
from elelem.vocabulary.json import decode_json

_ENVELOPE_SKIP = frozenset({"candidates", "usageMetadata"})
_CONTENT_FIELDS = frozenset({"parts", "role"})
_HOT_FIELDS = frozenset({"candidates", "usageMetadata", "modelVersion", "responseId"})
_MAX_EXTRA = 32
"""How many top-level field names nobody listed the fast path takes on per stream."""
_FAST_MISS_LIMIT = 4
"""Consecutive frames the typed decode may miss before a parser stops trying it
(a stream whose chunks all carry something else should not decode twice)."""


class GeminiParser(GeminiParts, ParserSkeleton):
    """Parser of one streamed Gemini response (a FrameParser on the
    :class:`~elelem.shapes.skeleton.ParserSkeleton`).  The stream's terminal
    event is a ``finishReason`` (or a prompt ``blockReason``); the finish is
    emitted when the body ends after it."""

    what = "gemini"
    event_type = "gemini.event"
    takes_runs = True

    def __init__(self, provider: ProviderId, request: object = None) -> None:
        super().__init__(provider)
        # Computer use makes its predefined functions the computer tool's calls.
        self._computer = computer_actions(request)
        self._next_key = 0
        self._open: OpenBlock | None = None
        self._text_bytes = 0
        self._calls = 0
        self._code = 0
        self._pending_code: dict[str, HostedActivity] = {}
        self._response_id: str | None = None
        self._finish: str | None = None
        self._block_reason: str | None = None
        self._envelope: dict[str, Any] = {}
        self._candidate: dict[str, Any] = {}
        self._others: list[Any] = []
        self._others_open: set[object] = set()  # other candidates' indices not finished yet
        self._grounding: dict[str, Any] | None = None
        self._url_context: dict[str, Any] | None = None
        self._usage_raw: dict[str, Any] | None = None  # the last usageMetadata reported
        # The wire bytes of _usage_raw when the fast path saw them last (None:
        # unknown), so a repeated report is recognised without decoding it.
        self._usage_wire: msgspec.Raw | None = None
        self._fast_misses = 0  # consecutive frames the typed text-chunk decode did not fit
        # The fast path's decoder (grown by the envelope fields nobody listed
        # that this stream sends), and the wire bytes of each such field when
        # it last set the envelope (cleared by the dict path, as _usage_wire).
        self._hot = hot_decoder()
        self._extra: tuple[tuple[str, str], ...] = ()
        self._extra_wire: dict[str, msgspec.Raw] = {}

    # -- the skeleton's hooks ------------------------------------------------

    def fast(self, event: str, data: str) -> list[Chunk] | None:
        """The chunks of a typed text-only chunk, or None."""
        if self._fast_misses >= _FAST_MISS_LIMIT:
            return None
        try:
            hot = self._hot.decode(data)
        except msgspec.DecodeError:  # any other shape (a ValidationError is one too)
            hot = None
        out = None if hot is None else self._text_chunk(hot)
        if out is not None:
            self._fast_misses = 0
            return out
        self._fast_misses += 1
        return None

    def fast_values(self, run: DataRun, start: int, out: list[Chunk]) -> int:
        """The hot frames of ``run`` from frame ``start`` on: what
        :meth:`fast` does frame by frame, with one text (or thought) part
        for the open block of its kind taken inline; a changed usage is held
        as :meth:`_text_chunk` holds it."""
        values = run.data
        decode, append, text_chunk = self._hot.decode, out.append, self._text_chunk
        envelope, candidate = self._envelope, self._candidate
        index, end = start, len(values)
        # The inline case's preconditions, :meth:`_text_chunk`'s (a learnt
        # envelope field, if any, as last kept); read again after each frame
        # it applied.
        block, usage_wire = self._open, self._usage_wire
        inline = "modelVersion" in envelope and "responseId" in envelope
        extras, kept = self._kept_extras()
        base = self.frames - start  # frames[i] is frame number base + i + 1
        while index < end:
            if self._fast_misses >= _FAST_MISS_LIMIT:
                break
            try:
                hot = decode(values[index])
            except msgspec.DecodeError:  # any other shape (a ValidationError is one too)
                self._fast_misses += 1
                break
            candidates = hot.candidates
            if inline and block is not None and len(candidates) == 1 and "index" in candidate:
                first = candidates[0]
                parts = first.content.parts
                if not first.index and len(parts) == 1:
                    part = parts[0]
                    text, thought, wire = part.text, part.thought, hot.usageMetadata
                    if (
                        text
                        and part.thoughtSignature is None
                        and not block.split
                        and block.kind == ("thought" if thought else "text")
                        and (wire == usage_wire or memoryview(wire)[0] == 0x7B)
                        and (extras is None or extras(hot) == kept)
                    ):
                        if wire != usage_wire:  # held for the read's end, as _text_chunk holds it
                            self._usage_wire = usage_wire = wire
                            self.holding = True
                        envelope["modelVersion"] = hot.modelVersion
                        envelope["responseId"] = hot.responseId
                        candidate["index"] = 0
                        block.data += text.encode("utf-8")
                        append((ReasoningDelta if thought else TextDelta)(block.key, text))
                        self._fast_misses = 0
                        index += 1
                        continue
            self.frames = base + index + 1  # counted before the general rule, as in message()
            chunks = text_chunk(hot)
            if chunks is None:
                self._fast_misses += 1
                break
            self._fast_misses = 0
            out += chunks
            index += 1
            block, usage_wire = self._open, self._usage_wire
            inline = "modelVersion" in envelope and "responseId" in envelope
            extras, kept = self._kept_extras()
        self.frames = base + index
        return index

    def _kept_extras(self) -> tuple[Callable[[Any], Any] | None, Any]:
        """A getter of a hot chunk's learnt envelope fields and their values
        as last kept: a chunk that sends them so changes nothing there."""
        if not self._extra:
            return None, None
        wire = self._extra_wire
        kept = tuple(wire.get(name) for _, name in self._extra)
        getter = operator.attrgetter(*(attr for attr, _ in self._extra))
        return getter, kept if len(kept) > 1 else kept[0]

    def event(self, obj: dict[str, Any], event: str) -> list[Chunk]:
        """One decoded response chunk."""
        return self.chunk(obj)

    def at_eof(self) -> list[Chunk]:
        """The body ended: after a ``finishReason`` (or ``blockReason``), close
        the open block, report hosted activity and finish; before one, nothing
        (the driver's incomplete-stream error, with the partial kept)."""
        if not self.started or (self._finish is None and self._block_reason is None):
            return []
        return self.end()

    def end(self) -> list[Chunk]:
        """Close the open block, report hosted activity and finish (``unknown``
        when no ``finishReason`` came: a whole body ends here)."""
        out = self._close()
        rid = self._response_id or ""
        if self._grounding is not None:
            out += [
                Hosted(t) for t in search_activity(self.provider, f"{rid}:search", self._grounding)
            ]
        if self._url_context is not None:
            activity = fetch_activity(self.provider, f"{rid}:fetch", self._url_context)
            out += [Hosted(t) for t in activity]
        self.finished = True
        payloads = []
        if self._envelope:
            payloads.append(ProviderPayload(self.provider, "response", None, self._envelope))
        if self._candidate:
            payloads.append(ProviderPayload(self.provider, "candidate", None, self._candidate))
        if self._others:
            payloads.append(ProviderPayload(self.provider, "other_candidates", None, self._others))
        if self._finish is not None:
            reason = finish_reason(self._finish, self._calls > 0)
            out.append(Finish(reason, raw=self._finish, payloads=tuple(payloads)))
        elif self._block_reason is not None:
            out.append(Finish("refused", raw=self._block_reason, payloads=tuple(payloads)))
        else:
            out.append(unknown_finish(tuple(payloads)))
        return out

    # -- chunks ---------------------------------------------------------------

    def chunk(self, data: dict[str, Any]) -> list[Chunk]:
        """Apply one decoded response chunk; return its chunks."""
        if "error" in data:
            raise error_from_event(data)
        if self.finished:
            raise malformed("gemini response chunk after the response finished", data)
        out: list[Chunk] = []
        if not self.started:
            self.started = True
            rid, model = data.get("responseId"), data.get("modelVersion")
            self._response_id = rid if isinstance(rid, str) else None
            out.append(
                ResponseStart(
                    response_id=self._response_id,
                    model=model if isinstance(model, str) else None,
                    provider=self.provider,
                )
            )
        for key, value in data.items():
            if key not in _ENVELOPE_SKIP:
                self._envelope[key] = value
        self._extra_wire.clear()
        extra = data.keys() - _HOT_FIELDS
        if extra and not extra <= {name for _, name in self._extra}:
            known = extra | {name for _, name in self._extra}
            if len(known) <= _MAX_EXTRA:
                self._hot = hot_decoder(frozenset(known))
                self._extra = extra_fields(frozenset(known))
        feedback = data.get("promptFeedback")
        if isinstance(feedback, dict) and isinstance(feedback.get("blockReason"), str):
            self._block_reason = feedback["blockReason"]
        candidates = data.get("candidates")
        if candidates is not None:
            if not isinstance(candidates, list):
                raise malformed("gemini candidates is not a list", data)
            for candidate in candidates:
                if not isinstance(candidate, dict):
                    raise malformed("gemini candidate is not an object", data)
                if candidate.get("index", 0) not in (0, None):
                    self._others.append(candidate)  # only the first candidate is the reply
                    self._note_other(candidate)
                    continue
                out.extend(self._candidate_chunk(candidate))
        usage = data.get("usageMetadata")
        if isinstance(usage, dict):
            self._report_usage(usage, out)
        if self._terminal(candidates):
            # The answer is whole: finish now rather than at the connection's
            # end, which a server keeping it open would never send.
            out.extend(self.eof())
        return out

    def _note_other(self, candidate: dict[str, Any]) -> None:
        index = candidate.get("index")
        if isinstance(candidate.get("finishReason"), str):
            self._others_open.discard(index)
        else:
            self._others_open.add(index)

    def _terminal(self, candidates: object) -> bool:
        """Whether this chunk ended the response: every candidate seen has its
        finish reason, or the prompt was blocked (no candidates at all)."""
        if self._finish is not None:
            return not self._others_open
        return self._block_reason is not None and not candidates

    def _report_usage(
        self, usage: dict[str, Any], out: list[Chunk], *, decoded: bool = False
    ) -> None:
        # Streams repeat the same usageMetadata on most chunks; a Usage is a
        # function of its raw object, so an equal raw object is an equal Usage
        # and building it again (with its JSON check) would only cost time.
        self._usage_wire = None
        if usage != self._usage_raw:
            self._usage_raw = usage
            out.append(UsageUpdate(map_usage(usage, decoded=decoded)))

    def _text_chunk(self, data: HotChunk) -> list[Chunk] | None:
        """Apply a typed text-only chunk exactly as :meth:`chunk` would its dict,
        or return None (having changed nothing) when :meth:`chunk` must do it:
        the first chunk, a chunk after the finish, a candidate other than the
        first, or an envelope key not seen yet (dict order would differ)."""
        envelope, candidate = self._envelope, self._candidate
        if (
            not self.started
            or self.finished
            or "modelVersion" not in envelope
            or "responseId" not in envelope
            or "index" not in candidate
        ):
            return None
        candidates = data.candidates
        for c in candidates:
            if c.index:
                return None
        wire = self._extra_wire
        changed = (
            [
                (name, raw)
                for attr, name in self._extra
                if (raw := getattr(data, attr)) is not None and wire.get(name) != raw
            ]
            if self._extra
            else ()
        )
        if changed and any(name not in envelope for name, _ in changed):
            return None  # a field not in the envelope yet: its order is the dict path's
        usage_wire = data.usageMetadata
        changed_usage = usage_wire != self._usage_wire
        if changed_usage and memoryview(usage_wire)[0] != 0x7B:
            return None  # not an object: the dict path says what it is
        envelope["modelVersion"] = data.modelVersion
        envelope["responseId"] = data.responseId
        for name, raw in changed:  # what the dict path sets, for the fields that changed
            envelope[name] = decode_json(raw)
            wire[name] = raw
        out: list[Chunk] = []
        for c in candidates:
            for part in c.content.parts:
                text, thought, block = part.text, part.thought, self._open
                if (
                    text
                    and part.thoughtSignature is None
                    and block is not None
                    and not block.split
                    and block.kind == ("thought" if thought else "text")
                ):
                    # _text_part's commonest case (more text for the open block), inline.
                    block.data += text.encode("utf-8")
                    out.append((ReasoningDelta if thought else TextDelta)(block.key, text))
                else:
                    out.extend(self._text_part(text, thought, part.thoughtSignature, {}))
            candidate["index"] = c.index
        if changed_usage:
            # Held for the read's end (the skeleton's rule): a chunk that
            # sends it again unchanged is passed over, a later one replaces it.
            self._usage_wire = usage_wire
            self.holding = True
        return out

    def release(self) -> list[Chunk]:
        """The usage the fast path held: the read's last ``usageMetadata``."""
        held = self._usage_wire
        out: list[Chunk] = []
        if held is not None:
            usage = decode_usage(held)
            if usage is not None:  # an object, as the fast path made sure
                self._report_usage(usage, out, decoded=True)  # decode_usage's own object
            self._usage_wire = held
        return out

    def _candidate_chunk(self, candidate: dict[str, Any]) -> list[Chunk]:
        out: list[Chunk] = []
        content = candidate.get("content")
        if content is not None:
            if not isinstance(content, dict):
                raise malformed("gemini candidate content is not an object", candidate)
            parts = content.get("parts")
            parts = [] if parts is None else parts
            if not isinstance(parts, list):
                raise malformed("gemini content parts is not a list", candidate)
            for part in parts:
                if not isinstance(part, dict):
                    raise malformed("gemini content part is not an object", part)
                out.extend(self._part(part))
            extra = {k: v for k, v in content.items() if k not in _CONTENT_FIELDS}
            if extra:
                # Content fields beside the parts (and the role, always the
                # model's) ride with the candidate's, the latest value kept.
                kept = self._candidate.get("content")
                self._candidate["content"] = {**(kept if isinstance(kept, dict) else {}), **extra}
        for key, value in candidate.items():
            if key == "content":
                continue
            if key in ("groundingMetadata", "urlContextMetadata") and not value:
                continue  # streams send an empty object on every chunk before the real one
            self._candidate[key] = value
        grounding = candidate.get("groundingMetadata")
        if isinstance(grounding, dict) and grounding:
            self._grounding = grounding
        url_context = candidate.get("urlContextMetadata")
        if isinstance(url_context, dict) and url_context:
            self._url_context = url_context
        reason = candidate.get("finishReason")
        if isinstance(reason, str):
            self._finish = reason
        return out


def parse_body(body: bytes, provider: ProviderId, request: object = None) -> list[Chunk]:
    """The chunks of a non-streaming JSON response body (one chunk object, or
    a JSON array of them).  An ``error`` object raises its typed error; a body
    that is not JSON raises :class:`~elelem.errors.MalformedStreamError`."""
    data = decode_whole_body(body, "gemini response body")
    if isinstance(data, dict) and "error" in data:
        raise error_from_event(data)
    return response_chunks(data, provider, request)


def response_chunks(data: object, provider: ProviderId, request: object = None) -> list[Chunk]:
    """The chunks of a non-streaming response: one chunk object, or a JSON
    array of chunks (``streamGenerateContent`` without ``alt=sse``)."""
    parser = GeminiParser(provider, request)
    items = data if isinstance(data, list) else [data]
    out: list[Chunk] = []
    for item in items:
        if not isinstance(item, dict):
            raise malformed("gemini response is not a JSON object", item)
        out.extend(parser.chunk(item))
    # The body's end is its end marker: without a finishReason it finishes
    # unknown (a chunk with its terminal finishReason has finished already).
    if not parser.finished:
        out.extend(parser.eof() or parser.end())
    return out


__all__ = [
    "GeminiParser",
    "malformed",
    "parse_body",
    "response_chunks",
]
