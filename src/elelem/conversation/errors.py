"""Typed errors of the conversation log and its stores."""

from __future__ import annotations

from elelem.errors import ElelemError


class EventError(ElelemError, ValueError):
    """An event or draft was ill-formed (wrong body type for its kind, …)."""


class StoreError(ElelemError):
    """A store could not be opened, read or written as asked."""


class ConversationNotFound(StoreError, KeyError):
    """No conversation has the given id."""

    def __init__(self, conversation: str) -> None:
        super().__init__(f"no conversation {conversation!r} in this store")
        self.conversation = conversation

    def __str__(self) -> str:
        return str(self.args[0])


class WriterBusy(StoreError):
    """Another process kept writing a turn of this conversation for longer
    than this one would wait."""

    def __init__(self, conversation: str, waited: float) -> None:
        super().__init__(
            f"conversation {conversation} is being continued by another elelem "
            f"(waited {waited:g} s for its turn to end); try again when it is done"
        )
        self.conversation = conversation


class CorruptEventError(StoreError):
    """A stored event cannot be decoded: the store was damaged or written by
    something else.  ``conversation`` and ``seq`` name the row."""

    def __init__(self, conversation: str, seq: int, detail: str) -> None:
        super().__init__(
            f"conversation {conversation}: stored event seq {seq} is corrupt: {detail}"
        )
        self.conversation = conversation
        self.seq = seq


class SchemaVersionError(StoreError):
    """The store's schema is newer than this elelem understands."""


class ConversationExists(StoreError):
    """A conversation of that id is in the store already (an import of a
    conversation exported from this store, say); nothing was written."""

    def __init__(self, conversation: str) -> None:
        super().__init__(f"conversation {conversation!r} already exists")
        self.conversation = conversation


class ImportRefused(StoreError):
    """An export file was refused: unknown format or version, or a bad line.

    ``line`` is the 1-based line number of the offending line (0 when the
    problem is the file as a whole).  Nothing was written.
    """

    def __init__(self, message: str, line: int = 0) -> None:
        where = f"line {line}: " if line else ""
        super().__init__(f"{where}{message}")
        self.line = line


__all__ = [
    "ConversationExists",
    "ConversationNotFound",
    "CorruptEventError",
    "EventError",
    "ImportRefused",
    "SchemaVersionError",
    "StoreError",
    "WriterBusy",
]
