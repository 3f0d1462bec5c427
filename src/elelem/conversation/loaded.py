"""Events as a store loads them: each body decoded when it is first read.

Loading a long log was decoding it: a raw ``SELECT`` of 100,000 events costs
~0.9 µs each, decoding every body into its typed value ~2 µs more
(``benchmarks/README.md``, "Storage").  Most of a load is never read: opening
a conversation reads only turn and response numbers, a projection skips
compacted and rewound turns, a listing reads the last few.  So a store
decodes each row's envelope (id, seq, time, turn, response, kind: what every
reader filters on) and keeps the body's stored bytes until ``body`` is first
read, then decodes it once, exactly as :func:`~elelem.conversation.decode_event`
would, and keeps the value.

A row is in one of two forms, told apart by its first byte:

- an event's canonical JSON (``{``: PostgreSQL, big SQLite events, and rows
  an older elelem wrote): the envelope is decoded and the body kept as its
  JSON (a :class:`msgspec.Raw`), which msgspec still scans to find its end;
- a *packed* row (:func:`pack_event`, what SQLite writes): a MessagePack map
  of the envelope whose ``body`` is an extension
  (:data:`~elelem.codec.STORED_EVENT`) holding the event's canonical JSON,
  so a load decodes the envelope's few binary fields and never scans the
  JSON (``benchmarks/README.md``, "Packed rows").

What is checked when:

- at load, every row is an event's envelope (an ``id`` string, a ``seq``
  number, …) and a JSON row one JSON document: a row that is not is a
  :class:`~elelem.conversation.errors.CorruptEventError` naming its seq, from
  ``load``, as before;
- at the first read of ``body``, the body fits its kind's registered type
  (and a packed row's JSON is one JSON document): a body that does not is the
  same ``CorruptEventError`` (the conversation and seq named), raised by that
  read and by every later one.

A loaded event is an :class:`~elelem.conversation.Event` (``isinstance``,
pattern matching, ``msgspec.structs.replace``); it equals, hashes, prints and
pickles as the eagerly decoded event; encoded by :mod:`elelem.codec`
(``encode_event``, ``dumps``, ``to_builtins``) before its body is read, it
writes the stored body bytes as they are, which are the canonical ones.  An
encoder without the codec's hook refuses a packed row's unread body (a
``TypeError`` naming ``Ext``) rather than write another form of it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import msgspec

from elelem.codec import STORED_EVENT
from elelem.conversation.errors import CorruptEventError
from elelem.conversation.events import (
    Body,
    Event,
    decode_body,
    decode_event,
    decode_event_body,
)
from elelem.errors import DecodeError

# The slot every Event keeps its body in; a loaded event's ``body`` property
# reads and fills it underneath (the struct is frozen to its users, not to
# the one place that decodes what it already holds).
_BODY_SLOT: Any = Event.__dict__["body"]


class _StoredFields(Event, frozen=True, gc=False):
    # The decoder's view: the body stays the stored JSON.
    body: msgspec.Raw


def _fields(event: Event) -> tuple[Any, ...]:
    return (
        event.id,
        event.seq,
        event.at,
        event.turn,
        event.response,
        event.kind,
        event.body,
    )


class LoadedEvent(_StoredFields, frozen=True, gc=False):
    """An :class:`~elelem.conversation.Event` a store loaded: its body is
    decoded on first read (see the module docstring).  Each conversation's
    events are of a subclass naming it (:func:`decode_rows`), so a body
    found corrupt later still names its conversation."""

    conversation: ClassVar[str] = ""

    @property  # type: ignore[misc]
    def body(self) -> Body:
        """The body, decoded on first read and kept."""
        value = _BODY_SLOT.__get__(self)
        kept = type(value)
        if kept is not msgspec.Raw and kept is not msgspec.msgpack.Ext:
            return value
        try:
            if kept is msgspec.Raw:
                body = decode_body(self.kind, value, self.id)
            else:
                body = decode_event_body(value.data)
        except DecodeError as exc:
            raise CorruptEventError(type(self).conversation, self.seq, str(exc)) from exc
        if body is not value:
            _BODY_SLOT.__set__(self, body)
        return body

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Event):
            return NotImplemented
        return _fields(self) == _fields(other)

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, Event):
            return NotImplemented
        return _fields(self) != _fields(other)

    def __hash__(self) -> int:
        return hash(Event(*_fields(self)))

    def __repr__(self) -> str:
        return repr(Event(*_fields(self)))

    def __rich_repr__(self) -> Any:
        return Event(*_fields(self)).__rich_repr__()

    def __reduce__(self) -> tuple[Any, ...]:
        return (Event, _fields(self))


_packer = msgspec.msgpack.Encoder()


def pack_event(event: Event, data: bytes) -> tuple[bytes, int]:
    """The packed row of ``event`` whose canonical JSON is ``data`` (see the
    module docstring), and how many bytes precede ``data`` in it (the JSON
    is the row's end)."""
    # The event's own fields, in order, as a map; its body the extension.
    body = msgspec.msgpack.Ext(STORED_EVENT, data)
    packed = _packer.encode(msgspec.structs.replace(event, body=body))
    return packed, len(packed) - len(data)


_lock = threading.Lock()
_TYPES_KEPT = 64


class _Decoders:
    """The loaded-event classes of one conversation and their row decoders."""

    __slots__ = ("json", "packed")

    def __init__(self, conversation: str) -> None:
        typ = type("Event", (LoadedEvent,), {"conversation": conversation})

        # MessagePack gives the body's extension (any other value, a decoded
        # body, is refused: the row is no packed event).
        packed = msgspec.defstruct(
            "Event", [("body", msgspec.msgpack.Ext)], bases=(typ,), frozen=True, gc=False
        )
        self.json: Any = msgspec.json.Decoder(typ).decode
        self.packed: Any = msgspec.msgpack.Decoder(packed).decode


_types: dict[str, _Decoders] = {}


def _decoders(conversation: str) -> _Decoders:
    """The row decoders of ``conversation`` (the most recently loaded
    conversations' are kept)."""
    found = _types.get(conversation)
    if found is not None:
        return found
    with _lock:
        found = _types.get(conversation)
        if found is None:
            found = _Decoders(conversation)
            if len(_types) >= _TYPES_KEPT:
                _types.pop(next(iter(_types)))
            _types[conversation] = found
    return found


_JSON = ord("{")


def decode_rows(
    conversation: str,
    rows: Sequence[Sequence[Any]],
    before: int,
    whole: Callable[[Sequence[Sequence[Any]]], Sequence[Sequence[Any]]] | None = None,
) -> list[Event]:
    """The events of ``rows`` (first column: an event's stored row, JSON or
    packed) of ``conversation``, whose seqs follow ``before``, bodies left
    to their first read.  ``whole`` fills in the rows a backend keeps apart
    (an empty row: a big event's), called only when a row does not decode
    as it is, so a batch without one costs no look at each row.  A row that
    is no event is a :class:`CorruptEventError` naming its seq (seqs run 1,
    2, … without gaps)."""
    if not rows:
        return []
    decoders = _decoders(conversation)
    # One form per batch in the common case (a store writes one form): its
    # first row picks the decoder; a batch of both forms goes row by row.
    first = rows[0][0]
    decode = decoders.json if first and first[0] == _JSON else decoders.packed
    try:
        return [decode(row[0]) for row in rows]
    except msgspec.DecodeError:
        pass
    return _naming(conversation, rows if whole is None else whole(rows), before, decoders)


def _naming(
    conversation: str, rows: Sequence[Sequence[Any]], before: int, decoders: _Decoders
) -> list[Event]:
    """``rows`` decoded one by one, each by its form, to name the one that
    is no event."""
    events: list[Event] = []
    for seq, row in enumerate(rows, start=before + 1):
        data = row[0]
        if not (data and data[0] == _JSON):
            try:
                events.append(decoders.packed(data))
            except msgspec.DecodeError as exc:
                raise CorruptEventError(conversation, seq, f"malformed row: {exc}") from exc
            continue
        try:
            events.append(decoders.json(data))
        except msgspec.DecodeError as refused:
            try:
                decode_event(bytes(data))
            except DecodeError as exc:
                raise CorruptEventError(conversation, seq, str(exc)) from exc
            # decode_event reads the envelope as the row decoder does, so
            # this is unreachable; were it not, the row's own error stands.
            raise CorruptEventError(conversation, seq, str(refused)) from refused
    return events


__all__ = ["LoadedEvent", "decode_rows", "pack_event"]
