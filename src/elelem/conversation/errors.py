"""Typed errors of the conversation log and its stores."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from elelem.errors import DecodeError, ElelemError


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


TYPED_METHODS = (
    "create",
    "append",
    "put_blob",
    "get_blob",
    "has_blob",
    "blob_usage",
    "resolve",
    "prune_blobs",
    "load",
    "load_bytes",
    "info",
    "list_conversations",
    "search",
    "fork",
    "delete",
    "set_title",
    "import_events",
)
"""Every public method of a SQL store: what its database raises (a damaged
page, a full disk, a lock held too long) leaves it as a :class:`StoreError`."""


def _typed(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def typed(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except StoreError:
            raise
        except self.db_errors as exc:
            raise StoreError(f"the store {self.where} failed: {exc}") from exc
        except DecodeError as exc:
            raise StoreError(
                f"the store {self.where} holds a value that cannot be read: {exc}"
            ) from exc

    return typed


def typed_store_errors(store: type) -> None:
    """Wrap every method of :data:`TYPED_METHODS` of the SQL store class
    ``store`` (whose instances hold ``db_errors`` and ``where``) so that its
    database's errors, and a value it cannot decode, leave as :class:`StoreError`."""
    for name in TYPED_METHODS:
        setattr(store, name, _typed(getattr(store, name)))


__all__ = [
    "TYPED_METHODS",
    "ConversationExists",
    "ConversationNotFound",
    "CorruptEventError",
    "EventError",
    "ImportRefused",
    "SchemaVersionError",
    "StoreError",
    "WriterBusy",
    "typed_store_errors",
]
