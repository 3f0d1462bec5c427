"""The store interface every backend implements (SQLite now, PostgreSQL later).

Nothing above this module knows which backend holds the log.  A backend
keeps each event's canonical bytes exactly, appends without rewriting or
re-reading earlier events, and commits each :meth:`Store.append` call as one
transaction: after it returns, every event of the call is durable; a crash
during it leaves none of them.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

import msgspec

from elelem.conversation.events import Draft, Event, MessageBody, TurnStart
from elelem.vocabulary import Blob, ConversationId, EventId, TextBlock

Clock = Callable[[], datetime]
"""Where commit times come from (inject a fixed clock in tests)."""

TITLE_LENGTH = 80


class ConversationInfo(msgspec.Struct, frozen=True):
    """What a listing shows of one conversation.

    ``model`` is the model address of the latest turn; ``turns`` the number of
    the latest turn; ``events`` how many events the log holds; ``parent`` and
    ``forked_at`` name the conversation and event a fork was taken from.
    """

    id: ConversationId
    title: str | None
    model: str | None
    turns: int
    events: int
    created_at: str
    updated_at: str
    parent: ConversationId | None = None
    forked_at: EventId | None = None


class SearchHit(msgspec.Struct, frozen=True):
    """One event whose text matched a search, with the matched text around it."""

    conversation: ConversationId
    event: EventId
    seq: int
    turn: int
    snippet: str


WRITER_WAIT = 600.0
"""Seconds a turn waits for another process's turn of the same conversation
to end before it fails (turns can take minutes)."""


@runtime_checkable
class Store(Protocol):
    """Durable conversation logs.

    Appends are O(1) in the size of the conversation; ``load`` returns the
    events in ``seq`` order; bytes round-trip exactly.
    """

    def create(
        self, *, title: str | None = None, id: ConversationId | None = None
    ) -> ConversationInfo:
        """A new, empty conversation."""
        ...

    def append(self, conversation: ConversationId, drafts: Sequence[Draft]) -> tuple[Event, ...]:
        """Append ``drafts`` in one transaction; return the stored events."""
        ...

    def load(self, conversation: ConversationId, *, after: int = 0) -> tuple[Event, ...]:
        """The events with ``seq > after``, in order."""
        ...

    def load_bytes(self, conversation: ConversationId) -> list[bytes]:
        """The canonical bytes of every event, in order, exactly as stored."""
        ...

    def info(self, conversation: ConversationId) -> ConversationInfo:
        """The listing entry of one conversation."""
        ...

    def list_conversations(self, *, limit: int | None = None) -> list[ConversationInfo]:
        """Conversations, most recently updated first."""
        ...

    def search(self, text: str, *, limit: int = 50) -> list[SearchHit]:
        """Events whose text contains ``text``, ignoring case."""
        ...

    def fork(
        self, conversation: ConversationId, at: EventId, *, title: str | None = None
    ) -> ConversationInfo:
        """A new conversation holding the events up to and including ``at``."""
        ...

    def delete(self, conversation: ConversationId) -> None:
        """Remove a conversation and its events."""
        ...

    def set_title(self, conversation: ConversationId, title: str | None) -> None:
        """Rename a conversation."""
        ...

    def import_events(
        self, info: ConversationInfo, data: Sequence[bytes], blobs: Sequence[Blob] = ()
    ) -> ConversationInfo:
        """Store a whole conversation from validated canonical event bytes and
        the blobs they reference, in one transaction.  Refuses an id that
        already exists."""
        ...

    def put_blob(self, data: bytes) -> Blob:
        """Store bytes once (content-addressed); return their blob."""
        ...

    def get_blob(self, sha256: str) -> bytes:
        """A blob's bytes, checked against the hash (BlobMissingError,
        BlobCorruptError otherwise)."""
        ...

    def has_blob(self, sha256: str) -> bool:
        """True when the store holds blob ``sha256``."""
        ...

    def blob_usage(self) -> tuple[int, int]:
        """``(blobs, bytes)`` the store holds."""
        ...

    def prune_blobs(self) -> tuple[int, int]:
        """Delete blobs no event references; ``(blobs, bytes)`` freed."""
        ...

    def writer(self, conversation: ConversationId, *, timeout: float = WRITER_WAIT) -> Writer:
        """The lock of the one process that may write a turn of ``conversation``
        (see :class:`Writer`)."""
        ...

    def close(self) -> None:
        """Release the backend's resources."""
        ...


class Writer(Protocol):
    """One conversation's turn lock, across processes (and threads).

    :meth:`acquire` waits until no other holder writes the conversation (at
    most the timeout the store was asked for, then a :class:`WriterBusy`);
    :meth:`release` lets the next one in.  Usable as a context manager.
    """

    def acquire(self) -> None:
        """Wait for the lock (blocking; run it in a worker thread from async code)."""
        ...

    def release(self) -> None:
        """Let the next writer in."""
        ...

    def __enter__(self) -> Writer: ...

    def __exit__(self, *exc: object) -> None: ...


def utc_now() -> datetime:
    """The default clock."""
    return datetime.now(UTC)


def format_time(moment: datetime) -> str:
    """``moment`` as ISO 8601 UTC with microseconds and a ``Z``."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_event_id() -> EventId:
    """A fresh random event id."""
    return EventId("ev_" + secrets.token_hex(8))


class EventIds:
    """A fast source of unique event ids: a random 40-bit prefix and a 24-bit
    counter (``ev_`` + 16 hex digits).  A new prefix is drawn when the counter
    wraps and after a fork, so two processes never share a sequence."""

    __slots__ = ("_count", "_pid", "_prefix")

    def __init__(self) -> None:
        self._renew()

    def _renew(self) -> None:
        self._pid = os.getpid()
        self._prefix = "ev_" + secrets.token_hex(5)
        self._count = 0

    def __call__(self) -> EventId:
        self._count += 1
        if self._count > 0xFFFFFF or self._pid != os.getpid():
            self._renew()
            self._count = 1
        return EventId(f"{self._prefix}{self._count:06x}")


def new_conversation_id() -> ConversationId:
    """A fresh random conversation id."""
    return ConversationId("c_" + secrets.token_hex(8))


class Summary(msgspec.Struct):
    """What appending some drafts changes in a conversation's listing entry."""

    turns: int = 0
    model: str | None = None
    title: str | None = None


def summarize(drafts: Iterable[Draft | Event]) -> Summary:
    """The latest turn, the latest model asked for and a title candidate (the
    first line of the first user text) of a batch of events."""
    out = Summary()
    for d in drafts:
        if d.turn > out.turns:
            out.turns = d.turn
        body = d.body
        if d.kind == "turn-start" and isinstance(body, TurnStart) and body.model:
            out.model = body.model
        elif (
            out.title is None
            and d.kind == "message"
            and isinstance(body, MessageBody)
            and body.source == "user"
        ):
            for block in body.content:
                if isinstance(block, TextBlock) and block.text.strip():
                    out.title = title_from(block.text)
                    break
    return out


def title_from(text: str) -> str:
    """A one-line title from user text."""
    line = text.strip().splitlines()[0].strip()
    return line if len(line) <= TITLE_LENGTH else line[: TITLE_LENGTH - 1] + "…"


def snippet(text: str, needle: str, width: int = 60) -> str:
    """``text`` around the first match of ``needle``, ignoring case."""
    folded = text.casefold()
    if len(folded) == len(text):
        at = folded.find(needle.casefold())
    else:  # folding changed the length (ß -> ss): its positions do not carry over
        at = text.lower().find(needle.lower())
    if at < 0:
        at, needle = 0, ""
    start = max(0, at - width)
    end = min(len(text), at + len(needle) + width)
    # Cut at word boundaries, never mid-word ("…ere is"): the first whole
    # word after the cut, the last whole word before it.
    if start > 0 and not text[start - 1].isspace():
        space = _next_space(text, start, at)
        start = space + 1 if space is not None else start
    if end < len(text) and not text[end].isspace():
        space = _last_space(text, at + len(needle), end)
        end = space if space is not None else end
    shown = text[start:end].strip()
    return ("…" if start else "") + shown + ("…" if end < len(text) else "")


def _next_space(text: str, start: int, limit: int) -> int | None:
    for i in range(start, limit):
        if text[i].isspace():
            return i
    return None


def _last_space(text: str, limit: int, end: int) -> int | None:
    for i in range(end - 1, limit - 1, -1):
        if text[i].isspace():
            return i
    return None


__all__ = [
    "Clock",
    "ConversationInfo",
    "EventIds",
    "SearchHit",
    "Store",
    "Summary",
    "format_time",
    "new_conversation_id",
    "new_event_id",
    "snippet",
    "summarize",
    "title_from",
    "utc_now",
]
