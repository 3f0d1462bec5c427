"""How a Responses stream's message, reasoning and call events become
blocks, and the state they are built in.  Sans-IO.

:class:`~elelem.shapes.openai_responses.parser.ResponsesParser` reads the
events, keeps the output items in order and ends the response;
:class:`ContentEvents`, which it is built on, handles the events inside an
item: text parts and their deltas and annotations, reasoning segments, a
call's argument deltas, and each of those items' done event.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from elelem.errors import MalformedStreamError
from elelem.shapes.openai_responses import _items
from elelem.shapes.openai_responses.fast import TEXT_DELTA, HotTextDelta
from elelem.stream import (
    BlockEnd,
    BlockStart,
    Chunk,
    Citation,
    Payload,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
)
from elelem.vocabulary import ProviderId, ProviderPayload

TEXT_PARTS = _items.TEXT_PARTS
"""The text part types and the field each keeps its text in."""


def malformed(message: str) -> MalformedStreamError:
    """The error for a frame the server got wrong (it would come the same way again)."""
    return MalformedStreamError(f"OpenAI Responses stream: {message}", retryable=False)


class TextPieces:
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
        """Append ``piece``."""
        self.pieces.append(piece)
        self.size += len(piece)

    def value(self) -> str:
        """The text so far, joined once."""
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
        """Hold ``text`` instead of the pieces so far (a done event's whole text)."""
        self.pieces = [text] if text else []
        self.size = len(text)


class Part:
    """One content part of an output item: its text, the citations seen on
    it, and the annotations held until its text is there."""

    __slots__ = ("cited", "held", "key", "kind", "text")

    def __init__(self, key: str, kind: str) -> None:
        self.key = key
        self.kind = kind
        self.text = TextPieces()
        self.cited = 0
        self.held: list[dict[str, Any]] = []


class Item:
    """One output item as it streams: its parts, its arguments, its raw
    object and what of it nobody modelled."""

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
        self.parts: dict[int, Part] = {}
        self.args = TextPieces()
        self.segments: list[tuple[str, int]] = []
        self.custom = role == "call" and raw.get("type") == "custom_tool_call"
        self.unknown: list[tuple[str, dict[str, Any]]] = []  # events nobody modelled


class ContentEvents:
    """The events inside an output item (a base of
    :class:`~elelem.shapes.openai_responses.parser.ResponsesParser`, which
    sets these attributes up)."""

    provider: ProviderId
    _items: dict[int, Item]
    _by_id: dict[str, list[Item]]
    _calls: int
    _refused: bool
    _stored: bool
    _events: int
    _hot_key: tuple[int | None, str | None, int | None] | None
    _hot_part: Part | None

    # -- items ----------------------------------------------------------------------

    def _find(self, obj: Mapping[str, Any]) -> Item | None:
        index = obj.get("output_index")
        if isinstance(index, int) and index in self._items:
            return self._items[index]
        item_id = obj.get("item_id")
        if isinstance(item_id, str):
            return self._named(item_id)
        return None

    def _named(self, item_id: str) -> Item | None:
        """The first item under ``item_id`` not done yet, else its last."""
        items = self._by_id.get(item_id)
        if not items:
            return None
        return next((i for i in items if not i.done), items[-1])

    def _item_of(self, obj: Mapping[str, Any], kind: str) -> Item:
        item = self._find(obj)
        if item is None:
            raise malformed(
                f"{kind} for output item {obj.get('output_index')!r}"
                f" ({obj.get('item_id')!r}) that was never added"
            )
        return item

    # -- messages ---------------------------------------------------------------------

    def _part(self, item: Item, index: Any, kind: Any, what: str) -> tuple[Part, list[Chunk]]:
        if item.role != "message":
            raise malformed(f"{what} for a {item.raw.get('type')!r} item")
        if not isinstance(index, int):
            raise malformed(f"{what} without a content_index")
        part = item.parts.get(index)
        if part is not None:
            return part, []
        part = Part(f"{item.key}.{index}", str(kind))
        item.parts[index] = part
        if part.kind in TEXT_PARTS:
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
            raise malformed(f"{obj.get('type')} without a string delta")
        if part.kind not in TEXT_PARTS:
            raise malformed(f"text delta for a {part.kind!r} content part")
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
            text = part.text  # TextPieces.add inlined: this runs once per streamed delta
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
            raise malformed("output_text.annotation.added without an annotation object")
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

    def _message_done(self, item: Item, raw: dict[str, Any]) -> list[Chunk]:
        content = raw.get("content")
        if not isinstance(content, list):
            raise malformed(f"message item {raw.get('id')!r} without a content list")
        shell = {k: ([] if k == "content" else v) for k, v in raw.items()}
        out: list[Chunk] = []
        if not content:
            return [BlockStart(item.key, "unknown", raw=raw), BlockEnd(item.key)]
        for index, part_raw in enumerate(content):
            if not isinstance(part_raw, dict):
                raise malformed(f"message item {raw.get('id')!r} content[{index}] is not an object")
            part, opened = self._part(item, index, part_raw.get("type"), "message content")
            out += opened
            if part.kind not in TEXT_PARTS:
                # An unknown part type: a one-part message item, kept raw.
                one = {k: ([part_raw] if k == "content" else v) for k, v in raw.items()}
                out += [BlockStart(part.key, "unknown", raw=one), BlockEnd(part.key)]
                continue
            field = TEXT_PARTS[part.kind]
            final = part_raw.get(field)
            if not isinstance(final, str):
                raise malformed(f"{part.kind} part {index} of {raw.get('id')!r} has no {field}")
            out += self._reconcile_text(part, final)
            if part.kind == "refusal":
                self._refused = True
            annotations = part_raw.get("annotations")
            late = part.held + (annotations[part.cited :] if isinstance(annotations, list) else [])
            part.held = []
            text = part.text.value()
            for annotation in late:
                if not isinstance(annotation, dict):
                    raise malformed(f"annotation of {raw.get('id')!r} is not an object")
                attribution = _items.attribution(annotation, text, self.provider)
                out.append(Citation(part.key, attribution))
            # The item's place in the response: an id is not unique (xAI sent
            # two items under one), so replay regroups parts by place too.
            # The part's text is the block's own when the deltas said it all:
            # kept once (an answer of megabytes was stored twice), put back
            # into the part when it replays (encoder.text).
            kept = part_raw if text != final else {k: v for k, v in part_raw.items() if k != field}
            value = {"item": shell, "part": kept, "output_index": item.index}
            out.append(
                Payload(part.key, ProviderPayload(self.provider, _items.MESSAGE_PART, None, value))
            )
            out.append(BlockEnd(part.key))
        extra = [i for i in item.parts if i >= len(content)]
        if extra:
            raise malformed(f"message {raw.get('id')!r} streamed parts {extra} it does not hold")
        return out

    def _reconcile_text(self, part: Part, final: str) -> list[Chunk]:
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

    def _segment(self, item: Item, kind: str, index: Any) -> list[Chunk]:
        if item.role != "reasoning":
            raise malformed(f"reasoning {kind} event for a {item.raw.get('type')!r} item")
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
            raise malformed(f"{kind} without a string delta")
        if delta:
            item.args.add(delta)
            out.append(ReasoningDelta(item.key, delta))
        return out

    def _reasoning_done(self, item: Item, raw: dict[str, Any]) -> list[Chunk]:
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
        where = f"output[{item.index}].encrypted_content"
        raw, bad = _items.checked_reasoning(raw, self.provider, where)
        out.append(Payload(item.key, ProviderPayload(self.provider, _items.ITEM, None, raw)))
        if bad is not None:
            out.append(Payload(item.key, bad))
        if self._stored:
            out.append(Payload(item.key, ProviderPayload(self.provider, _items.STORED, None, True)))
        out.append(BlockEnd(item.key))
        return out

    # -- calls ---------------------------------------------------------------------------

    def _args(self, item: Item, delta: str) -> list[Chunk]:
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
            raise malformed(f"{kind} for a {item.raw.get('type')!r} item")
        delta = obj.get("delta")
        if not isinstance(delta, str):
            raise malformed(f"{kind} without a string delta")
        return self._args(item, delta)

    def _call_done(self, item: Item, raw: dict[str, Any]) -> list[Chunk]:
        if raw.get("type") == "function_call":
            final = raw.get("arguments")
            if not isinstance(final, str):
                raise malformed(f"function_call {raw.get('id')!r} without string arguments")
        else:
            final = _items.synthesized_arguments(raw)
        out: list[Chunk] = []
        streamed = item.args.value()
        if final != streamed:
            if not final.startswith(streamed):
                raise malformed(f"arguments of {raw.get('id')!r} differ from its streamed deltas")
            out.append(ToolCallDelta(item.key, final[len(streamed) :]))
            item.args.replace(final)
        self._calls += 1
        out.append(Payload(item.key, ProviderPayload(self.provider, _items.ITEM, None, raw)))
        out.append(BlockEnd(item.key))
        return out


__all__ = ["TEXT_PARTS", "ContentEvents", "Item", "Part", "TextPieces", "malformed"]
