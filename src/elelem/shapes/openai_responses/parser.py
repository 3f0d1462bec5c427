"""Sans-IO parser of the OpenAI Responses stream (and its non-streaming body).

Frames in, chunks out.  Each output item becomes, at its
``response.output_item.done``:

- ``message``: one text block per content part (``output_text`` with its
  annotations as attributions, ``refusal``); the raw part and the item's
  identity ride in a payload so native replay rebuilds the message item;
- ``reasoning``: a reasoning block (summary text, parts joined by a blank
  line) whose payload is the raw item with its ``encrypted_content``;
- ``function_call`` and the other calls the caller executes: a tool-call block
  whose payload is the raw item (item id included);
- items the provider runs (web search, file search, code interpreter, image
  generation, MCP, hosted shell, tool search): a hosted activity, ``started``
  at ``output_item.added`` and ``completed``/``failed`` at ``done`` with the
  raw item in its payload;
- anything else: an unknown block holding the raw item, in position.

The item at ``done`` is authoritative: streamed deltas that are a prefix of
it are completed with the rest; deltas that contradict it are an error.

Nothing the stream carries is dropped: an event nobody modelled is kept as
the skeleton keeps it (an ``openai_responses.event`` unknown block, right
after its item when it names one), a field nobody modelled on a known event
as an ``openai_responses.event`` field block (where it arrived, again when
its value changes), and the final response object, its output aside, rides
on the finish as a :data:`RESPONSE_FORMAT` payload.  Progress events of an
item (``….in_progress``, ``….done``) carry nothing the done item lacks: they
are checked and passed over, all but a field nobody listed
(:data:`_PROGRESS_FIELDS`), kept as an event field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from elelem.errors import MalformedStreamError, UnsupportedError
from elelem.shapes.openai_responses import _items
from elelem.shapes.openai_responses.errors import error_from_event
from elelem.shapes.openai_responses.fast import TEXT_DELTA, HotTextDelta, hot_decoder
from elelem.shapes.openai_responses.mapping import finish_reason, map_usage
from elelem.shapes.openai_responses.media import responses_generated_image
from elelem.shapes.skeleton import ParserSkeleton, decode_whole_body, unknown_finish
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
from elelem.stream.frames import DataRun
from elelem.vocabulary import ProviderId, ProviderPayload
from elelem.wire import ModelRequest

_TEXT_PARTS = {"output_text": "text", "refusal": "refusal"}
_TEXT_DELTA_NAME = TEXT_DELTA.encode()  # the SSE event name, as a run holds it

EVENT_TYPE = "openai_responses.event"
"""``type`` of the unknown block that keeps an event (or an event's field)
nobody modelled: never replayed."""

RESPONSE_FORMAT = "response"
"""Finish payload: the final response object without its ``output`` (its
items are the blocks)."""

_RESPONSE = frozenset({"type", "sequence_number", "response"})
_ITEM = frozenset({"type", "sequence_number", "output_index", "item"})
_DELTA = frozenset({"type", "sequence_number", "item_id", "output_index", "delta", "obfuscation"})
_EVENT_FIELDS: dict[str, frozenset[str]] = {
    "response.created": _RESPONSE,
    "response.in_progress": _RESPONSE,
    "response.queued": _RESPONSE,
    "response.completed": _RESPONSE,
    "response.incomplete": _RESPONSE,
    "response.failed": _RESPONSE,
    "response.cancelled": _RESPONSE,
    "response.output_item.added": _ITEM,
    "response.output_item.done": _ITEM,
    "response.content_part.added": _DELTA - {"delta", "obfuscation"} | {"content_index", "part"},
    "response.output_text.delta": _DELTA | {"content_index", "logprobs"},
    "response.refusal.delta": _DELTA | {"content_index", "logprobs"},
    "response.output_text.annotation.added": _DELTA - {"delta", "obfuscation"}
    | {"content_index", "annotation_index", "annotation"},
    "response.reasoning_summary_part.added": _DELTA - {"delta", "obfuscation"}
    | {"summary_index", "part"},
    "response.reasoning_summary_text.delta": _DELTA | {"summary_index"},
    "response.reasoning_text.delta": _DELTA | {"content_index"},
    "response.function_call_arguments.delta": _DELTA,
    "response.custom_tool_call_input.delta": _DELTA,
}
"""The fields of each event the parser handles: its own, and the ones the
item at ``done`` holds too (``logprobs``) or that hold nothing
(``sequence_number``, ``obfuscation``: random padding)."""

_PROGRESS_FIELDS = _DELTA | {
    "content_index",
    "summary_index",
    "command_index",
    "logprobs",
    # What the item at ``done`` holds whole: text, a part, a call's input, a
    # patch, code, a shell command and its output, a partial image.
    "text",
    "part",
    "arguments",
    "input",
    "diff",
    "code",
    "command",
    "output",
    "partial_image_b64",
    "partial_image_index",
    "background",
    "output_format",
    "quality",
    "size",
}
"""The fields of an item's progress events (``….in_progress``, ``….done``)
that carry nothing its done item lacks; any other is kept as an event field."""

# Progress events of items whose final state arrives in output_item.done: they
# carry nothing the done item lacks, so they are checked and passed over.
_PROGRESS_SUFFIXES = (
    ".in_progress",
    ".searching",
    ".completed",
    ".interpreting",
    ".generating",
    ".partial_image",
    ".failed",
    ".done",
    ".added",
    ".delta",
)
_PROGRESS_PREFIXES = (
    "response.web_search_call.",
    "response.file_search_call.",
    "response.code_interpreter_call.",
    "response.code_interpreter_call_code.",
    "response.image_generation_call.",
    "response.mcp_call.",
    "response.mcp_call_arguments.",
    "response.mcp_list_tools.",
    "response.apply_patch_call_operation_diff.",
    "response.shell_call_command.",
    "response.shell_call_output_content.",
    "response.custom_tool_call_input.done",
    "response.function_call_arguments.done",
    "response.output_text.done",
    "response.refusal.done",
    "response.content_part.done",
    "response.reasoning_summary_text.done",
    "response.reasoning_summary_part.done",
    "response.reasoning_text.done",
)


def _malformed(message: str) -> MalformedStreamError:
    # A well-formed frame the server got wrong will come the same way again.
    return MalformedStreamError(f"OpenAI Responses stream: {message}", retryable=False)


class _Text:
    """Text built from deltas in linear time.

    ``attr += delta`` on an attribute copies the whole text so far per delta
    (CPython's in-place append only works on locals), which is quadratic in
    the length of a stream; pieces are kept instead and joined when read.
    """

    __slots__ = ("pieces", "size")

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.size = 0

    def add(self, piece: str) -> None:
        self.pieces.append(piece)
        self.size += len(piece)

    def value(self) -> str:
        pieces = self.pieces
        if len(pieces) == 1:
            return pieces[0]
        if not pieces:
            return ""
        text = "".join(pieces)
        # Reads are rare (an annotation, the done event): later ones start from here.
        self.pieces = [text]
        return text

    def replace(self, text: str) -> None:
        self.pieces = [text] if text else []
        self.size = len(text)


class _Part:
    __slots__ = ("cited", "held", "key", "kind", "text")

    def __init__(self, key: str, kind: str) -> None:
        self.key = key
        self.kind = kind
        self.text = _Text()
        self.cited = 0
        self.held: list[dict[str, Any]] = []


class _Item:
    __slots__ = (
        "args",
        "custom",
        "done",
        "index",
        "key",
        "parts",
        "raw",
        "role",
        "segments",
        "unknown",
    )

    def __init__(self, index: int, raw: dict[str, Any], role: str) -> None:
        self.index = index
        self.raw = raw
        self.role = role
        self.key = str(index)
        self.done = False
        self.parts: dict[int, _Part] = {}
        self.args = _Text()
        self.segments: list[tuple[str, int]] = []
        self.custom = role == "call" and raw.get("type") == "custom_tool_call"
        self.unknown: list[tuple[str, dict[str, Any]]] = []  # events nobody modelled


class ResponsesParser(ParserSkeleton):
    """Parses one OpenAI Responses response (on the
    :class:`~elelem.shapes.skeleton.ParserSkeleton`); see the module docstring.

    ``request``'s client tools tell a client ``custom_tool_call`` from a
    provider's server-side one (xAI).
    """

    what = "OpenAI Responses"
    event_type = EVENT_TYPE

    def __init__(self, provider: ProviderId, request: ModelRequest | None = None) -> None:
        super().__init__(provider)
        self._client_tools = client_tools(request)
        self._items: dict[int, _Item] = {}
        # An id is not unique (xAI gives items of one response one id): every
        # item under it, in output order; an event naming only an id goes to
        # the first of them not done.
        self._by_id: dict[str, list[_Item]] = {}
        # Items done before an item ahead of them in the output (parallel
        # tool runs finish in any order) wait, so content keeps output order.
        self._waiting: dict[int, list[Chunk]] = {}
        self._tools: list[Any] = []
        self._calls = 0
        self._refused = False
        self._stored = False
        self._revised: list[dict[str, Any]] = []  # items the final output restated otherwise
        self._events = 0
        # The text part the last output_text.delta went to, and the fields that
        # found it: the next delta with the same fields goes straight there.
        # Any other event clears it (it may finish or replace the item).
        self._hot_key: tuple[int | None, str | None, int | None] | None = None
        self._hot_part: _Part | None = None
        self._hot = hot_decoder()
        self._handlers: dict[str, Callable[[dict[str, Any]], list[Chunk]]] = {
            "response.created": self._on_response,
            "response.in_progress": self._on_response,
            "response.queued": self._on_response,
            "response.output_item.added": self._on_item_added,
            "response.output_item.done": self._on_item_done,
            "response.content_part.added": self._on_part_added,
            "response.output_text.delta": self._on_text_delta,
            "response.refusal.delta": self._on_text_delta,
            "response.output_text.annotation.added": self._on_annotation,
            "response.reasoning_summary_part.added": self._on_summary_part,
            "response.reasoning_summary_text.delta": self._on_reasoning_delta,
            "response.reasoning_text.delta": self._on_reasoning_delta,
            "response.function_call_arguments.delta": self._on_args_delta,
            "response.custom_tool_call_input.delta": self._on_args_delta,
            "response.completed": self._on_terminal,
            "response.incomplete": self._on_terminal,
            "response.failed": self._on_terminal,
            "response.cancelled": self._on_terminal,
            "error": self._on_error,
        }

    takes_runs = True

    # -- the skeleton's hooks ----------------------------------------------------

    def fast(self, event: str, data: str) -> list[Chunk] | None:
        """The chunks of a typed ``response.output_text.delta``, or None."""
        if event and event != TEXT_DELTA:
            return None
        fields = self._hot
        try:
            hot = fields.decoder.decode(data)
        except msgspec.DecodeError:
            return None  # the dict path names what is wrong with it
        # The JSON's type decides, as on the dict path; the SSE event name
        # only where the JSON has none (some servers send no event lines).
        if (hot.type or event) != TEXT_DELTA:
            return None
        out = self._on_hot_delta(hot)
        if fields.extra and fields.raws(hot) != fields.last:
            out += fields.kept(self, hot)
        return out

    def fast_values(self, run: DataRun, start: int, out: list[Chunk]) -> int:
        """The hot frames of ``run`` from frame ``start`` on: what :meth:`fast`
        does frame by frame, with more text for the text part the last delta
        went to (a learnt field as last kept) taken inline."""
        fields = self._hot
        decode, append = fields.decoder.decode, out.append
        values, events = run.data, run.events
        index, end = start, len(values)
        key, part = self._hot_key, self._hot_part
        base = self.frames - start  # frames[i] is frame number base + i + 1
        while index < end:
            event = b"" if events is None else events[index]
            if event and event != _TEXT_DELTA_NAME:
                break
            try:
                hot = decode(values[index])
            except msgspec.DecodeError:
                break  # the dict path names what is wrong with it
            # As in fast(): the JSON's type, else the event's name.
            if hot.type != TEXT_DELTA if hot.type else event != _TEXT_DELTA_NAME:
                break
            delta = hot.delta
            if (
                delta
                and part is not None
                and (hot.output_index, hot.item_id, hot.content_index) == key
                and (not fields.extra or fields.raws(hot) == fields.last)
            ):
                self._events += 1
                text = part.text  # _Text.add inlined, as in _on_hot_delta
                text.pieces.append(delta)
                text.size += len(delta)
                append(TextDelta(part.key, delta))
                index += 1
                continue
            self.frames = base + index + 1  # counted before the general rule, as in message()
            out += self._on_hot_delta(hot)
            if fields.extra and fields.raws(hot) != fields.last:
                out += fields.kept(self, hot)
            index += 1
            key, part = self._hot_key, self._hot_part
        self.frames = base + index
        return index

    # -- events ---------------------------------------------------------------------

    def event(self, obj: dict[str, Any], name: str = "") -> list[Chunk]:
        """Apply one decoded event object."""
        kind = obj.get("type") or name
        if not isinstance(kind, str) or not kind:
            raise _malformed("an event without a type")
        self._events += 1
        self._hot_key = None
        handler = self._handlers.get(kind)
        if handler is None:
            if kind.startswith(_PROGRESS_PREFIXES) and kind.endswith(_PROGRESS_SUFFIXES):
                self._item_of(obj, kind)
                if obj.keys() <= _PROGRESS_FIELDS:
                    return []
                return self.event_fields(kind, obj, _PROGRESS_FIELDS)
            return self._on_unknown(obj, kind)
        if kind == TEXT_DELTA:
            self._hot.stale()
        out = handler(obj)
        modelled = _EVENT_FIELDS.get(kind)
        if modelled is None or obj.keys() <= modelled:
            return out
        if kind == TEXT_DELTA:
            self._hot.learn(obj.keys() - modelled)
        kept = self.event_fields(kind, obj, modelled)
        if out and isinstance(out[-1], Finish):
            out[-1:-1] = kept
        else:
            out += kept
        return out

    def _start(self, response: Any) -> list[Chunk]:
        if self.started:
            return []
        self.started = True
        rid = model = None
        if isinstance(response, dict):
            # A conversation the provider stores (store: true) replays its
            # items by id: reasoning without encrypted content included.
            self._stored = response.get("store") is True
            rid = response.get("id") if isinstance(response.get("id"), str) else None
            model = response.get("model") if isinstance(response.get("model"), str) else None
            tools = response.get("tools")
            self._tools = tools if isinstance(tools, list) else []
        return [ResponseStart(response_id=rid, model=model, provider=self.provider)]

    def _on_response(self, obj: dict[str, Any]) -> list[Chunk]:
        response = obj.get("response")
        if not isinstance(response, dict):
            raise _malformed(f"{obj.get('type')} without a response object")
        return self._start(response)

    def _on_unknown(self, obj: dict[str, Any], kind: str) -> list[Chunk]:
        # An event nobody documented is kept, never replayed: one belonging to
        # an item is kept right after that item; any other where it arrived.
        item = self._find(obj)
        if item is not None and not item.done:
            item.unknown.append((kind, obj))
            return []
        return self._start(None) + self.unknown_event(kind, obj)

    def _on_error(self, obj: dict[str, Any]) -> list[Chunk]:
        inner = obj.get("error")
        raise error_from_event(inner if isinstance(inner, dict) else obj)

    # -- items ----------------------------------------------------------------------

    def _find(self, obj: Mapping[str, Any]) -> _Item | None:
        index = obj.get("output_index")
        if isinstance(index, int) and index in self._items:
            return self._items[index]
        item_id = obj.get("item_id")
        if isinstance(item_id, str):
            return self._named(item_id)
        return None

    def _named(self, item_id: str) -> _Item | None:
        """The first item under ``item_id`` not done yet, else its last."""
        items = self._by_id.get(item_id)
        if not items:
            return None
        return next((i for i in items if not i.done), items[-1])

    def _item_of(self, obj: Mapping[str, Any], kind: str) -> _Item:
        item = self._find(obj)
        if item is None:
            raise _malformed(
                f"{kind} for output item {obj.get('output_index')!r}"
                f" ({obj.get('item_id')!r}) that was never added"
            )
        return item

    def _register(self, index: int, raw: dict[str, Any]) -> _Item:
        declared = _items.declared_client_tools(self._tools)
        role = _items.classify(raw, self.provider, self._client_tools, declared)
        item = _Item(index, raw, role)
        self._items[index] = item
        if isinstance(raw.get("id"), str):
            self._by_id.setdefault(raw["id"], []).append(item)
        return item

    def _on_item_added(self, obj: dict[str, Any]) -> list[Chunk]:
        raw = obj.get("item")
        index = obj.get("output_index")
        if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
            raise _malformed("output_item.added without an item object with a type")
        if not isinstance(index, int):
            index = len(self._items)
        if index in self._items and not self._items[index].done:
            raise _malformed(f"output item {index} added twice")
        return self._start(None) + self._added(self._register(index, raw))

    def _added(self, item: _Item) -> list[Chunk]:
        raw = item.raw
        if item.role == "reasoning":
            return [BlockStart(item.key, "reasoning")]
        if item.role in ("call", "function_call"):
            call_id, name = _items.call_identity(raw)
            out: list[Chunk] = [BlockStart(item.key, "tool-call", id=call_id, name=name)]
            if raw.get("type") == "function_call" and raw.get("arguments"):
                out += self._args(item, str(raw["arguments"]))
            return out
        if item.role == "hosted":
            return [Hosted(_items.started(raw))]
        return []

    def _on_item_done(self, obj: dict[str, Any]) -> list[Chunk]:
        raw = obj.get("item")
        if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
            raise _malformed("output_item.done without an item object with a type")
        index = obj.get("output_index")
        item = self._items.get(index) if isinstance(index, int) else None
        if item is None and isinstance(raw.get("id"), str):
            item = self._named(raw["id"])
        out = self._start(None)
        if item is None:
            # Some producers skip output_item.added: treat done as both.
            item = self._register(index if isinstance(index, int) else len(self._items), raw)
            out += self._added(item)
        elif item.done:
            raise _malformed(f"output item {item.index} done twice")
        return out + self._in_order(item, self._done(item, raw))

    def _in_order(self, item: _Item, chunks: list[Chunk]) -> list[Chunk]:
        """``chunks`` of the done ``item`` now, with those of the items that
        waited for it, or, while an item ahead of it is not done, later."""
        if any(i < item.index and not ahead.done for i, ahead in self._items.items()):
            self._waiting[item.index] = chunks
            return []
        out = chunks
        for index in sorted(self._waiting):
            if any(i < index and not ahead.done for i, ahead in self._items.items()):
                break
            out += self._waiting.pop(index)
        return out

    def at_eof(self) -> list[Chunk]:
        """The body ended unfinished: the items that were done, in output
        order, even those an unfinished item ahead of them kept waiting."""
        return self._release_waiting()

    def _release_waiting(self) -> list[Chunk]:
        out: list[Chunk] = []
        for index in sorted(self._waiting):
            out += self._waiting.pop(index)
        return out

    def _done(self, item: _Item, raw: dict[str, Any]) -> list[Chunk]:
        item.done = True
        if raw.get("type") != item.raw.get("type"):
            raise _malformed(
                f"output item {item.index} was added as {item.raw.get('type')!r}"
                f" but done as {raw.get('type')!r}"
            )
        if isinstance(raw.get("id"), str) and raw.get("id") != item.raw.get("id"):
            self._by_id.setdefault(raw["id"], []).append(item)
        item.raw = raw
        out: list[Chunk]
        if item.role == "message":
            out = self._message_done(item, raw)
        elif item.role == "reasoning":
            out = self._reasoning_done(item, raw)
        elif item.role in ("call", "function_call"):
            out = self._call_done(item, raw)
        elif item.role == "hosted":
            version = _items.tool_version(str(raw.get("type")), self._tools)
            image = None
            if raw.get("type") == "image_generation_call":
                # The bytes live once, in the image block (the blob store),
                # not also in the replay payload: replay puts them back.
                raw, image = responses_generated_image(raw, self.provider)
            out = [Hosted(_items.finished(raw, self.provider, version))]
            if image is not None:
                key = f"{item.key}:image"
                out += [BlockStart(key, "image", raw=image), BlockEnd(key)]
        else:
            out = [BlockStart(item.key, "unknown", raw=raw), BlockEnd(item.key)]
        for kind, event in item.unknown:
            out += self.unknown_event(kind, event)
        item.unknown = []
        return out

    # -- messages ---------------------------------------------------------------------

    def _part(self, item: _Item, index: Any, kind: Any, what: str) -> tuple[_Part, list[Chunk]]:
        if item.role != "message":
            raise _malformed(f"{what} for a {item.raw.get('type')!r} item")
        if not isinstance(index, int):
            raise _malformed(f"{what} without a content_index")
        part = item.parts.get(index)
        if part is not None:
            return part, []
        part = _Part(f"{item.key}.{index}", str(kind))
        item.parts[index] = part
        if part.kind in _TEXT_PARTS:
            return part, [BlockStart(part.key, "text")]
        return part, []

    def _on_part_added(self, obj: dict[str, Any]) -> list[Chunk]:
        item = self._item_of(obj, "content_part.added")
        if item.role == "reasoning":
            # Raw reasoning text parts of a reasoning item.
            return self._segment(item, "content", obj.get("content_index"))
        raw_part = obj.get("part")
        kind = raw_part.get("type") if isinstance(raw_part, dict) else None
        return self._part(item, obj.get("content_index"), kind, "content_part.added")[1]

    def _on_text_delta(self, obj: dict[str, Any]) -> list[Chunk]:
        kind = "refusal" if obj.get("type") == "response.refusal.delta" else "output_text"
        item = self._item_of(obj, str(obj.get("type")))
        part, out = self._part(item, obj.get("content_index"), kind, str(obj.get("type")))
        delta = obj.get("delta")
        if not isinstance(delta, str):
            raise _malformed(f"{obj.get('type')} without a string delta")
        if part.kind not in _TEXT_PARTS:
            raise _malformed(f"text delta for a {part.kind!r} content part")
        if delta:
            part.text.add(delta)
            out.append(TextDelta(part.key, delta))
        return out

    def _on_hot_delta(self, hot: HotTextDelta) -> list[Chunk]:
        self._events += 1
        key = (hot.output_index, hot.item_id, hot.content_index)
        part = self._hot_part
        if key != self._hot_key or part is None:
            obj = {
                "type": TEXT_DELTA,
                "item_id": hot.item_id,
                "output_index": hot.output_index,
                "content_index": hot.content_index,
                "delta": hot.delta,
            }
            out = self._on_text_delta(obj)
            # It succeeded, so the item and its text part exist.
            item = self._find(obj)
            assert item is not None and hot.content_index is not None
            self._hot_key, self._hot_part = key, item.parts[hot.content_index]
            return out
        delta = hot.delta
        if delta:
            text = part.text  # _Text.add inlined: this runs once per streamed delta
            text.pieces.append(delta)
            text.size += len(delta)
            return [TextDelta(part.key, delta)]
        return []

    def _on_annotation(self, obj: dict[str, Any]) -> list[Chunk]:
        item = self._item_of(obj, "output_text.annotation.added")
        part, out = self._part(
            item, obj.get("content_index"), "output_text", "output_text.annotation.added"
        )
        annotation = obj.get("annotation")
        if not isinstance(annotation, dict):
            raise _malformed("output_text.annotation.added without an annotation object")
        part.cited += 1
        end = annotation.get("end_index")
        if part.held or (isinstance(end, int) and end > part.text.size):
            # It spans text not streamed yet: verify it against the final text
            # (and hold the ones after it too, to keep their order).
            part.held.append(annotation)
            return out
        text = part.text.value()
        out.append(Citation(part.key, _items.attribution(annotation, text, self.provider)))
        return out

    def _message_done(self, item: _Item, raw: dict[str, Any]) -> list[Chunk]:
        content = raw.get("content")
        if not isinstance(content, list):
            raise _malformed(f"message item {raw.get('id')!r} without a content list")
        shell = {k: ([] if k == "content" else v) for k, v in raw.items()}
        out: list[Chunk] = []
        if not content:
            return [BlockStart(item.key, "unknown", raw=raw), BlockEnd(item.key)]
        for index, part_raw in enumerate(content):
            if not isinstance(part_raw, dict):
                raise _malformed(
                    f"message item {raw.get('id')!r} content[{index}] is not an object"
                )
            part, opened = self._part(item, index, part_raw.get("type"), "message content")
            out += opened
            if part.kind not in _TEXT_PARTS:
                # An unknown part type: a one-part message item, kept raw.
                one = {k: ([part_raw] if k == "content" else v) for k, v in raw.items()}
                out += [BlockStart(part.key, "unknown", raw=one), BlockEnd(part.key)]
                continue
            field = _TEXT_PARTS[part.kind]
            final = part_raw.get(field)
            if not isinstance(final, str):
                raise _malformed(f"{part.kind} part {index} of {raw.get('id')!r} has no {field}")
            out += self._reconcile_text(part, final)
            if part.kind == "refusal":
                self._refused = True
            annotations = part_raw.get("annotations")
            late = part.held + (annotations[part.cited :] if isinstance(annotations, list) else [])
            part.held = []
            text = part.text.value()
            for annotation in late:
                if not isinstance(annotation, dict):
                    raise _malformed(f"annotation of {raw.get('id')!r} is not an object")
                attribution = _items.attribution(annotation, text, self.provider)
                out.append(Citation(part.key, attribution))
            # The item's place in the response: an id is not unique (xAI sent
            # two items under one), so replay regroups parts by place too.
            value = {"item": shell, "part": part_raw, "output_index": item.index}
            out.append(
                Payload(part.key, ProviderPayload(self.provider, _items.MESSAGE_PART, None, value))
            )
            out.append(BlockEnd(part.key))
        extra = [i for i in item.parts if i >= len(content)]
        if extra:
            raise _malformed(f"message {raw.get('id')!r} streamed parts {extra} it does not hold")
        return out

    def _reconcile_text(self, part: _Part, final: str) -> list[Chunk]:
        # Deltas that fall short of the final text are completed from it.  Deltas
        # that contradict it cannot be taken back (they were shown): the block
        # keeps them, while its payload keeps the provider's final part, which
        # is what native replay sends.
        text = part.text.value()
        if final == text or not final.startswith(text):
            return []
        rest = final[len(text) :]
        part.text.replace(final)
        return [TextDelta(part.key, rest)]

    # -- reasoning ----------------------------------------------------------------------

    def _segment(self, item: _Item, kind: str, index: Any) -> list[Chunk]:
        if item.role != "reasoning":
            raise _malformed(f"reasoning {kind} event for a {item.raw.get('type')!r} item")
        seg = (kind, index if isinstance(index, int) else 0)
        if seg in item.segments:
            return []
        item.segments.append(seg)
        if len(item.segments) > 1:
            item.args.add("\n\n")
            return [ReasoningDelta(item.key, "\n\n")]
        return []

    def _on_summary_part(self, obj: dict[str, Any]) -> list[Chunk]:
        item = self._item_of(obj, "reasoning_summary_part.added")
        return self._segment(item, "summary", obj.get("summary_index"))

    def _on_reasoning_delta(self, obj: dict[str, Any]) -> list[Chunk]:
        kind = str(obj.get("type"))
        item = self._item_of(obj, kind)
        if kind == "response.reasoning_text.delta":
            out = self._segment(item, "content", obj.get("content_index"))
        else:
            out = self._segment(item, "summary", obj.get("summary_index"))
        delta = obj.get("delta")
        if not isinstance(delta, str):
            raise _malformed(f"{kind} without a string delta")
        if delta:
            item.args.add(delta)
            out.append(ReasoningDelta(item.key, delta))
        return out

    def _reasoning_done(self, item: _Item, raw: dict[str, Any]) -> list[Chunk]:
        texts: list[str] = []
        for field, part_type in (("summary", "summary_text"), ("content", "reasoning_text")):
            parts = raw.get(field)
            if isinstance(parts, list):
                texts += [
                    str(p.get("text") or "")
                    for p in parts
                    if isinstance(p, dict) and p.get("type") == part_type
                ]
        final = "\n\n".join(texts)
        out: list[Chunk] = []
        # As for text: a shortfall is completed, a contradiction keeps what was
        # streamed (the raw item in the payload is what replays).
        streamed = item.args.value()
        if final != streamed and final.startswith(streamed):
            out.append(ReasoningDelta(item.key, final[len(streamed) :]))
        out.append(Payload(item.key, ProviderPayload(self.provider, _items.ITEM, None, raw)))
        if self._stored:
            out.append(self.payload(item.key, _items.STORED, True))
        out.append(BlockEnd(item.key))
        return out

    # -- calls ---------------------------------------------------------------------------

    def _args(self, item: _Item, delta: str) -> list[Chunk]:
        if item.custom:
            text = _items.json_text(delta)[1:-1]
            if not item.args.size:
                text = '"' + text
        else:
            text = delta
        item.args.add(text)
        return [ToolCallDelta(item.key, text)] if text else []

    def _on_args_delta(self, obj: dict[str, Any]) -> list[Chunk]:
        kind = str(obj.get("type"))
        item = self._item_of(obj, kind)
        if item.role == "hosted":
            return []  # a server-side custom tool (xAI): its done item has the input
        if item.role not in ("call", "function_call"):
            raise _malformed(f"{kind} for a {item.raw.get('type')!r} item")
        delta = obj.get("delta")
        if not isinstance(delta, str):
            raise _malformed(f"{kind} without a string delta")
        return self._args(item, delta)

    def _call_done(self, item: _Item, raw: dict[str, Any]) -> list[Chunk]:
        if raw.get("type") == "function_call":
            final = raw.get("arguments")
            if not isinstance(final, str):
                raise _malformed(f"function_call {raw.get('id')!r} without string arguments")
        else:
            final = _items.synthesized_arguments(raw)
        out: list[Chunk] = []
        streamed = item.args.value()
        if final != streamed:
            if not final.startswith(streamed):
                raise _malformed(f"arguments of {raw.get('id')!r} differ from its streamed deltas")
            out.append(ToolCallDelta(item.key, final[len(streamed) :]))
            item.args.replace(final)
        self._calls += 1
        out.append(Payload(item.key, ProviderPayload(self.provider, _items.ITEM, None, raw)))
        out.append(BlockEnd(item.key))
        return out

    # -- the end --------------------------------------------------------------------------

    def _on_terminal(self, obj: dict[str, Any]) -> list[Chunk]:
        response = obj.get("response")
        if not isinstance(response, dict):
            raise _malformed(f"{obj.get('type')} without a response object")
        return self.finish(response)

    def finish(self, response: dict[str, Any]) -> list[Chunk]:
        """Close the response from its final object: items the stream did not
        finish, usage, and the finish reason (a failed response raises)."""
        out = self._start(response)
        status = response.get("status")
        if status == "failed":
            error = response.get("error")
            raise error_from_event(error if isinstance(error, dict) else {})
        output = response.get("output")
        if isinstance(output, list):
            out += self._sweep(output)
        pending = [i.index for i in self._items.values() if not i.done]
        if pending:
            raise _malformed(f"response ended with output items {pending} unfinished")
        usage = response.get("usage")
        if isinstance(usage, dict):
            out.append(UsageUpdate(map_usage(usage, output if isinstance(output, list) else ())))
        out.append(self._finish_chunk(response, status))
        self.finished = True
        return out

    def _sweep(self, output: list[Any]) -> list[Chunk]:
        out: list[Chunk] = []
        claimed: set[int] = set()  # the id() of each item an output entry was matched to
        for position, raw in enumerate(output):
            if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
                raise _malformed(f"response output[{position}] is not an item object")
            item = self._match(position, raw, claimed)
            if item is not None:
                claimed.add(id(item))
                if item.done:
                    if raw != item.raw:
                        # Two snapshots of one item (gpt-5.x sent another
                        # encrypted_content at the end): the final one replays.
                        revised = {"output_index": item.index, "item": raw, "streamed": item.raw}
                        self._revised.append(revised)
                    continue
            else:
                index = position if position not in self._items else max(self._items) + 1
                item = self._register(index, raw)
                claimed.add(id(item))
                out += self._added(item)
            out += self._in_order(item, self._done(item, raw))
        return out + self._release_waiting()

    def _match(self, position: int, raw: dict[str, Any], claimed: set[int]) -> _Item | None:
        """The streamed item a final output item is: the one at its place, of
        its type and id, else the first unclaimed one of its type and id (an
        id alone may name several items)."""
        item_id = raw.get("id")

        def fits(item: _Item) -> bool:
            return (
                id(item) not in claimed
                and item.raw.get("type") == raw.get("type")
                and (not item_id or item.raw.get("id") in (None, item_id))
            )

        at = self._items.get(position)
        if at is not None and fits(at):
            return at
        if isinstance(item_id, str) and item_id:
            return next((i for i in self._by_id.get(item_id, ()) if fits(i)), None)
        return None

    def _finish_chunk(self, response: dict[str, Any], status: Any) -> Finish:
        envelope = {k: v for k, v in response.items() if k != "output"}
        payloads: tuple[ProviderPayload, ...] = (
            ProviderPayload(self.provider, RESPONSE_FORMAT, None, envelope),
        )
        if self._revised:
            revised = ProviderPayload(self.provider, _items.REVISED, None, self._revised)
            payloads = (*payloads, revised)
        if status == "incomplete":
            details = response.get("incomplete_details")
            reason = details.get("reason") if isinstance(details, dict) else None
            reason_s = reason if isinstance(reason, str) and reason else "incomplete"
            reason_n = finish_reason(reason_s)
            return Finish(reason_n, raw=reason_s, payloads=payloads)
        if status == "cancelled":
            return Finish("aborted", raw="cancelled", payloads=payloads)
        if status is None:
            return unknown_finish(payloads)  # a terminal response that names no status
        if self._calls:
            return Finish("tool-calls", raw=str(status), payloads=payloads)
        if self._refused:
            return Finish("refused", raw=str(status), payloads=payloads)
        return Finish("stop", raw=str(status), payloads=payloads)


def client_tools(request: ModelRequest | None) -> frozenset[str] | None:
    """The names of ``request``'s client tools (None without a request)."""
    if not isinstance(request, ModelRequest):
        return None
    return frozenset(t.name for t in request.tools)


def parse_body(
    body: bytes, provider: ProviderId, request: ModelRequest | None = None
) -> list[Chunk]:
    """Map a non-streaming Responses JSON body to the chunks a stream gives."""
    return parse_object(
        decode_whole_body(body, "OpenAI Responses response body"), provider, request
    )


def parse_object(
    obj: Any, provider: ProviderId, request: ModelRequest | None = None
) -> list[Chunk]:
    """Map a decoded non-streaming Responses object to chunks."""
    if not isinstance(obj, dict):
        raise _malformed("response body is not a JSON object")
    if "output" not in obj and isinstance(obj.get("error"), dict):
        raise error_from_event(obj["error"])
    if obj.get("object") not in (None, "response"):
        raise _malformed(f"body is a {obj.get('object')!r}, not a response")
    if obj.get("status") in ("queued", "in_progress"):
        raise UnsupportedError(
            f"response {obj.get('id')!r} is still {obj.get('status')} (background mode);"
            " polling it for the result is not supported"
        )
    parser = ResponsesParser(provider, request)
    return parser.finish(obj)
