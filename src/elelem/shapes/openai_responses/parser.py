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
(:data:`~elelem.shapes.openai_responses.event_fields.PROGRESS_FIELDS`), kept as an event field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from elelem.errors import UnsupportedError
from elelem.shapes.openai_responses import _items
from elelem.shapes.openai_responses.content_events import ContentEvents, Item, Part, malformed
from elelem.shapes.openai_responses.errors import error_from_event
from elelem.shapes.openai_responses.event_fields import (
    EVENT_FIELDS,
    PROGRESS_FIELDS,
    PROGRESS_PREFIXES,
    PROGRESS_SUFFIXES,
)
from elelem.shapes.openai_responses.fast import TEXT_DELTA, hot_decoder
from elelem.shapes.openai_responses.mapping import finish_reason, map_usage
from elelem.shapes.openai_responses.media import responses_generated_image
from elelem.shapes.skeleton import ParserSkeleton, decode_whole_body, unknown_finish
from elelem.stream import (
    BlockEnd,
    BlockStart,
    Chunk,
    Finish,
    Hosted,
    ResponseStart,
    TextDelta,
    UsageUpdate,
)
from elelem.stream.frames import DataRun
from elelem.vocabulary import ProviderId, ProviderPayload
from elelem.wire import ModelRequest

_TEXT_DELTA_NAME = TEXT_DELTA.encode()  # the SSE event name, as a run holds it

EVENT_TYPE = "openai_responses.event"
"""``type`` of the unknown block that keeps an event (or an event's field)
nobody modelled: never replayed."""

RESPONSE_FORMAT = "response"
"""Finish payload: the final response object without its ``output`` (its
items are the blocks)."""


class ResponsesParser(ContentEvents, ParserSkeleton):
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
        self._items: dict[int, Item] = {}
        # An id is not unique (xAI gives items of one response one id): every
        # item under it, in output order; an event naming only an id goes to
        # the first of them not done.
        self._by_id: dict[str, list[Item]] = {}
        # Items done before an item ahead of them in the output (parallel
        # tool runs finish in any order) wait, so content keeps output order.
        self._waiting: dict[int, list[Chunk]] = {}
        self._tools: list[Any] = []
        self._calls = 0
        self._refused = False
        self._stored = False
        self._revised: list[dict[str, Any]] = []  # items the final output restated otherwise
        self._faults: list[ProviderPayload] = []  # malformed payloads no open block holds
        self._events = 0
        # The text part the last output_text.delta went to, and the fields that
        # found it: the next delta with the same fields goes straight there.
        # Any other event clears it (it may finish or replace the item).
        self._hot_key: tuple[int | None, str | None, int | None] | None = None
        self._hot_part: Part | None = None
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
                text = part.text  # TextPieces.add inlined, as in _on_hot_delta
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
            raise malformed("an event without a type")
        self._events += 1
        self._hot_key = None
        handler = self._handlers.get(kind)
        if handler is None:
            if kind.startswith(PROGRESS_PREFIXES) and kind.endswith(PROGRESS_SUFFIXES):
                self._item_of(obj, kind)
                if obj.keys() <= PROGRESS_FIELDS:
                    return []
                return self.event_fields(kind, obj, PROGRESS_FIELDS)
            return self._on_unknown(obj, kind)
        if kind == TEXT_DELTA:
            self._hot.stale()
        out = handler(obj)
        modelled = EVENT_FIELDS.get(kind)
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
            raise malformed(f"{obj.get('type')} without a response object")
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

    def _register(self, index: int, raw: dict[str, Any]) -> Item:
        declared = _items.declared_client_tools(self._tools)
        role = _items.classify(raw, self.provider, self._client_tools, declared)
        item = Item(index, raw, role)
        self._items[index] = item
        if isinstance(raw.get("id"), str):
            self._by_id.setdefault(raw["id"], []).append(item)
        return item

    def _on_item_added(self, obj: dict[str, Any]) -> list[Chunk]:
        raw = obj.get("item")
        index = obj.get("output_index")
        if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
            raise malformed("output_item.added without an item object with a type")
        if not isinstance(index, int):
            index = len(self._items)
        if index in self._items and not self._items[index].done:
            raise malformed(f"output item {index} added twice")
        return self._start(None) + self._added(self._register(index, raw))

    def _added(self, item: Item) -> list[Chunk]:
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
            raise malformed("output_item.done without an item object with a type")
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
            raise malformed(f"output item {item.index} done twice")
        return out + self._in_order(item, self._done(item, raw))

    def _in_order(self, item: Item, chunks: list[Chunk]) -> list[Chunk]:
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

    def _done(self, item: Item, raw: dict[str, Any]) -> list[Chunk]:
        item.done = True
        if raw.get("type") != item.raw.get("type"):
            raise malformed(
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

    # -- the end --------------------------------------------------------------------------

    def _on_terminal(self, obj: dict[str, Any]) -> list[Chunk]:
        response = obj.get("response")
        if not isinstance(response, dict):
            raise malformed(f"{obj.get('type')} without a response object")
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
            raise malformed(f"response ended with output items {pending} unfinished")
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
                raise malformed(f"response output[{position}] is not an item object")
            item = self._match(position, raw, claimed)
            if item is not None:
                claimed.add(id(item))
                if item.done:
                    if raw != item.raw:
                        # Two snapshots of one item (gpt-5.x sent another
                        # encrypted_content at the end): the final one replays.
                        self._revise(item, raw, position)
                    continue
            else:
                index = position if position not in self._items else max(self._items) + 1
                item = self._register(index, raw)
                claimed.add(id(item))
                out += self._added(item)
            out += self._in_order(item, self._done(item, raw))
        return out + self._release_waiting()

    def _revise(self, item: Item, raw: dict[str, Any], position: int) -> None:
        streamed = item.raw
        if item.role == "reasoning":
            # Both as their block holds them: a malformed encrypted_content
            # is no part of what replays (its block records the streamed
            # one's; the final one's is recorded on the finish).
            streamed = _items.checked_reasoning(streamed, self.provider, "")[0]
            where = f"output[{position}].encrypted_content (the final snapshot)"
            raw, bad = _items.checked_reasoning(raw, self.provider, where)
            if bad is not None:
                self._faults.append(bad)
            if raw == streamed:
                return
        self._revised.append({"output_index": item.index, "item": raw, "streamed": streamed})

    def _match(self, position: int, raw: dict[str, Any], claimed: set[int]) -> Item | None:
        """The streamed item a final output item is: the one at its place, of
        its type and id, else the first unclaimed one of its type and id (an
        id alone may name several items)."""
        item_id = raw.get("id")

        def fits(item: Item) -> bool:
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
        payloads = (*payloads, *self._faults)
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
        raise malformed("response body is not a JSON object")
    if "output" not in obj and isinstance(obj.get("error"), dict):
        raise error_from_event(obj["error"])
    if obj.get("object") not in (None, "response"):
        raise malformed(f"body is a {obj.get('object')!r}, not a response")
    if obj.get("status") in ("queued", "in_progress"):
        raise UnsupportedError(
            f"response {obj.get('id')!r} is still {obj.get('status')} (background mode);"
            " polling it for the result is not supported"
        )
    parser = ResponsesParser(provider, request)
    return parser.finish(obj)
