"""Events as a store loads them: each body decoded when it is first read.

Loading a long log was decoding it: a raw ``SELECT`` of 100,000 events costs
~0.9 µs each, decoding every body into its typed value ~2 µs more
(``benchmarks/README.md``, "Storage").  Most of a load is never read: opening
a conversation reads only turn and response numbers, a projection skips
compacted and rewound turns, a listing reads the last few.  So a store
decodes each row's envelope (id, seq, time, turn, response, kind: what every
reader filters on) and keeps the body's stored JSON until ``body`` is first
read, then decodes it once, exactly as :func:`~elelem.conversation.decode_event`
would, and keeps the value.

What is checked when:

- at load, every row is one JSON document and an event's envelope (an
  ``id`` string, a ``seq`` number, …): a row that is not is a
  :class:`~elelem.conversation.errors.CorruptEventError` naming its seq, from
  ``load``, as before;
- at the first read of ``body``, the body fits its kind's registered type: a
  body that does not is the same ``CorruptEventError`` (the conversation and
  seq named), raised by that read and by every later one.

A loaded event is an :class:`~elelem.conversation.Event` (``isinstance``,
pattern matching, ``msgspec.structs.replace``); it equals, hashes, prints and
pickles as the eagerly decoded event; encoded before its body is read, it
writes the stored body bytes as they are, which are the canonical ones.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, ClassVar

import msgspec

from elelem.conversation.errors import CorruptEventError
from elelem.conversation.events import Body, Event, decode_body, decode_event
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
        if type(value) is not msgspec.Raw:
            return value
        try:
            body = decode_body(self.kind, value, self.id)
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


_lock = threading.Lock()
_TYPES_KEPT = 64
_types: dict[str, tuple[type[LoadedEvent], msgspec.json.Decoder[Any]]] = {}


def _loaded_type(conversation: str) -> tuple[type[LoadedEvent], msgspec.json.Decoder[Any]]:
    """The loaded-event class of ``conversation`` and its row decoder (the
    most recently loaded conversations' are kept)."""
    found = _types.get(conversation)
    if found is not None:
        return found
    with _lock:
        found = _types.get(conversation)
        if found is None:
            typ = type("Event", (LoadedEvent,), {"conversation": conversation})
            found = (typ, msgspec.json.Decoder(typ))
            if len(_types) >= _TYPES_KEPT:
                _types.pop(next(iter(_types)))
            _types[conversation] = found
    return found


def decode_rows(conversation: str, rows: Sequence[Sequence[Any]], before: int) -> list[Event]:
    """The events of ``rows`` (first column: an event's stored bytes) of
    ``conversation``, whose seqs follow ``before``, bodies left to their
    first read.  A row that is no event is a :class:`CorruptEventError`
    naming its seq (seqs run 1, 2, … without gaps)."""
    decode = _loaded_type(conversation)[1].decode
    try:
        return [decode(row[0]) for row in rows]
    except msgspec.DecodeError:
        return _naming(conversation, rows, before, decode)


def _naming(
    conversation: str, rows: Sequence[Sequence[Any]], before: int, decode: Any
) -> list[Event]:
    """``rows`` decoded one by one, to name the one that is no event."""
    events: list[Event] = []
    for seq, row in enumerate(rows, start=before + 1):
        try:
            events.append(decode(row[0]))
        except msgspec.DecodeError as refused:
            try:
                decode_event(bytes(row[0]))
            except DecodeError as exc:
                raise CorruptEventError(conversation, seq, str(exc)) from exc
            # decode_event reads the envelope as the row decoder does, so
            # this is unreachable; were it not, the row's own error stands.
            raise CorruptEventError(conversation, seq, str(refused)) from refused
    return events


__all__ = ["LoadedEvent", "decode_rows"]
