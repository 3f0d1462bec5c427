"""Blobs a provider holds: one blob (its SHA-256) mapped to each provider's
file id, with the expiry the provider gave, in the store's
``provider_files`` table (schema version 4, both backends).

:class:`ProviderFiles` reads and writes that table; :func:`refer_messages`
gives a history's images and PDF documents the provider's file id in place
of their bytes (a :class:`~elelem.vocabulary.FileSource`, which each
wire's encoder spells as its own reference), and :func:`uploadable` names
the blobs that have no live id yet.  The uploads themselves are IO
(:mod:`elelem.providers.files`); nothing here sends anything.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import msgspec

from elelem.conversation.sqlschema import SQLOps
from elelem.conversation.store import Clock, utc_now
from elelem.vocabulary import (
    Blob,
    BytesSource,
    DocumentBlock,
    FileSource,
    ImageBlock,
    Message,
    Part,
    ProviderId,
    ProviderPayload,
)

FILE_FORMAT = "file"
"""The payload format of a :class:`FileSource`'s id."""


class FileRef(msgspec.Struct, frozen=True):
    """One blob uploaded to one provider: its ``file_id`` there, when it was
    uploaded and when the provider said it expires (ISO 8601 UTC; None:
    kept until deleted)."""

    sha256: str
    provider: str
    file_id: str
    uploaded_at: str
    expires_at: str | None = None
    size: int | None = None

    def live(self, now: datetime) -> bool:
        """True while the recorded expiry (if any) has not passed."""
        return self.expires_at is None or utc_time(self.expires_at) > now


_FRACTION = re.compile(r"(\.\d{6})\d+")


def utc_time(text: str) -> datetime:
    """An ISO 8601 time as an aware datetime (UTC when it names no offset):
    Google's nanosecond fractions cut to microseconds.  ValueError for a
    text that is no time (an upload's answer is checked with this before
    its expiry is recorded)."""
    moment = datetime.fromisoformat(_FRACTION.sub(r"\1", text))
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def create_file_table(store: SQLOps) -> None:
    """Schema version 4: which provider holds which blob under which id."""
    store._exec(
        """CREATE TABLE provider_files (
            sha256 TEXT NOT NULL,
            provider TEXT NOT NULL,
            file_id TEXT NOT NULL,
            uploaded_at TEXT NOT NULL,
            expires_at TEXT,
            size BIGINT,
            PRIMARY KEY (sha256, provider)
        )"""
    )


_COLUMNS = "sha256, provider, file_id, uploaded_at, expires_at, size"


class ProviderFiles:
    """The ``provider_files`` table of a SQL store (SQLite or PostgreSQL)."""

    def __init__(self, store: SQLOps, clock: Clock = utc_now) -> None:
        self.store = store
        self.clock = clock

    def _rows(self, sql: str, params: tuple[object, ...]) -> list[FileRef]:
        with self.store._lock:
            rows = self.store._exec(self.store._sql(sql), params).fetchall()
        return [FileRef(*row) for row in rows]

    def live(self, sha256: str, provider: str) -> FileRef | None:
        """The id ``provider`` holds blob ``sha256`` under, unless none is
        recorded or its recorded expiry has passed."""
        found = self._rows(
            f"SELECT {_COLUMNS} FROM provider_files WHERE sha256 = ? AND provider = ?",
            (sha256, provider),
        )
        if found and found[0].live(self.clock()):
            return found[0]
        return None

    def record(self, ref: FileRef) -> None:
        """Remember ``ref`` (replacing the blob's previous id at that provider)."""
        sql = self.store._sql(
            f"INSERT INTO provider_files ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (sha256, provider) DO UPDATE SET file_id = excluded.file_id,"
            " uploaded_at = excluded.uploaded_at, expires_at = excluded.expires_at,"
            " size = excluded.size"
        )
        row = (ref.sha256, ref.provider, ref.file_id, ref.uploaded_at, ref.expires_at, ref.size)
        self.store._write(lambda: self.store._exec(sql, row), "record a provider file in")

    def forget(self, provider: str, file_id: str) -> int:
        """Drop the record of ``file_id`` at ``provider``; how many rows went."""
        sql = self.store._sql("DELETE FROM provider_files WHERE provider = ? AND file_id = ?")
        cursor = self.store._write(
            lambda: self.store._exec(sql, (provider, file_id)), "forget a provider file in"
        )
        return int(cursor.rowcount)

    def all(self, provider: str | None = None) -> list[FileRef]:
        """Every recorded file (``provider``'s only when given), newest first."""
        where, params = ("WHERE provider = ?", (provider,)) if provider else ("", ())
        return self._rows(
            f"SELECT {_COLUMNS} FROM provider_files {where} ORDER BY uploaded_at DESC, file_id",
            params,
        )


ALL_KINDS = frozenset({"image", "document"})


def referable(part: object, kinds: frozenset[str] = ALL_KINDS) -> bool:
    """Whether ``part`` is sent by reference once uploaded: an image or a PDF
    document given by bytes (a text document is sent as text), of ``kinds``."""
    if isinstance(part, ImageBlock):
        return "image" in kinds and isinstance(part.source, BytesSource)
    return (
        "document" in kinds
        and isinstance(part, DocumentBlock)
        and isinstance(part.source, BytesSource)
        and part.media_type == "application/pdf"
    )


def uploadable(
    messages: tuple[Message, ...], kinds: frozenset[str] = ALL_KINDS
) -> Iterator[ImageBlock | DocumentBlock]:
    """The referable parts of ``messages``, each blob once, in order."""
    seen: set[str] = set()
    for message in messages:
        for part in message.content:
            if referable(part, kinds):
                assert isinstance(part, (ImageBlock, DocumentBlock))
                assert isinstance(part.source, BytesSource)
                if part.source.blob.sha256 not in seen:
                    seen.add(part.source.blob.sha256)
                    yield part


def file_source(provider: str, file_id: str) -> FileSource:
    """The source of a block ``provider`` holds as ``file_id``."""
    return FileSource(ProviderPayload(ProviderId(provider), FILE_FORMAT, None, file_id))


def refer_messages(
    messages: tuple[Message, ...], provider: str, file_id: Callable[[Blob], str | None]
) -> tuple[Message, ...]:
    """``messages`` with each referable part whose blob ``file_id`` names an
    id of ``provider`` given by that id instead of its bytes (``messages``
    itself when none changed)."""

    def part_of(part: Part) -> Part:
        if not referable(part):
            return part
        assert isinstance(part, (ImageBlock, DocumentBlock))
        assert isinstance(part.source, BytesSource)
        found = file_id(part.source.blob)
        if found is None:
            return part
        return msgspec.structs.replace(part, source=file_source(provider, found))

    out: list[Message] | None = None
    for i, message in enumerate(messages):
        parts = tuple(part_of(p) for p in message.content)
        if any(a is not b for a, b in zip(parts, message.content, strict=True)):
            if out is None:
                out = list(messages)
            out[i] = msgspec.structs.replace(message, content=parts)
    return messages if out is None else tuple(out)


__all__ = [
    "FILE_FORMAT",
    "FileRef",
    "ProviderFiles",
    "create_file_table",
    "file_source",
    "refer_messages",
    "referable",
    "uploadable",
    "utc_time",
]
