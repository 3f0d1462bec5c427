"""The blob table of the SQL store: the bytes of images and documents
stored once by their SHA-256, however many events hold them; put, get,
checked against their hash on the way out, and swept when no event holds
them.  A base of :class:`~elelem.conversation.sqlbase.SQLStore`, which
holds the connection.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from elelem.conversation.blobs import event_blobs, resolve_messages
from elelem.conversation.events import (
    decode_event,
)
from elelem.conversation.sqlschema import Dialect
from elelem.errors import BlobMissingError
from elelem.vocabulary import Blob, Message
from elelem.vocabulary.blob import check_bytes

BLOB_MARK = b'"blob":{"sha256":'
"""What the canonical bytes of an event referencing a blob contain."""


class SQLBlobs:
    """The blob methods of :class:`~elelem.conversation.sqlbase.SQLStore`
    (a base of it, holding no state of its own: the attributes below are
    the store's)."""

    where: str
    dialect: Dialect
    _lock: threading.Lock
    _sql_put_blob: str
    _sql_has_blob: str
    _sql_get_blob: str
    _exec: Callable[..., Any]
    _many: Callable[..., None]
    _sql: Callable[[str], str]
    _write: Callable[..., Any]
    _stored_json: str
    _event_json: Callable[[int, int, Any], bytes]

    def _put_blobs(self, blobs: Sequence[Blob]) -> None:
        """Store the bytes of ``blobs`` not stored yet (inside a write).  A blob
        given by reference only must already be here."""
        seen: set[str] = set()
        for blob in blobs:
            if blob.sha256 in seen:
                continue
            seen.add(blob.sha256)
            if blob.resolved:
                self._exec(self._sql_put_blob, (blob.sha256, blob.size, blob.data))
            elif self._exec(self._sql_has_blob, (blob.sha256,)).fetchone() is None:
                raise BlobMissingError(
                    f"blob sha256:{blob.sha256} ({blob.size} bytes) is referenced but"
                    f" is not in store {self.where} and its bytes were not given",
                    blob.sha256,
                )

    def put_blob(self, data: bytes) -> Blob:
        """Store ``data`` (once, however often it is put); return its blob."""
        blob = Blob(data)
        self._write(lambda: self._put_blobs([blob]), "store a blob in")
        return blob

    def get_blob(self, sha256: str) -> bytes:
        """The bytes of blob ``sha256``, checked against their hash.

        :class:`~elelem.errors.BlobMissingError` when the store holds no such
        blob, :class:`~elelem.errors.BlobCorruptError` when its bytes no
        longer hash to it."""
        with self._lock:
            row = self._exec(self._sql_get_blob, (sha256,)).fetchone()
        if row is None:
            raise BlobMissingError(f"blob sha256:{sha256} is not in store {self.where}", sha256)
        data = bytes(row[1])
        check_bytes(sha256, int(row[0]), data)
        return data

    def has_blob(self, sha256: str) -> bool:
        """True when the store holds blob ``sha256``."""
        with self._lock:
            return self._exec(self._sql_has_blob, (sha256,)).fetchone() is not None

    def blob_usage(self) -> tuple[int, int]:
        """``(blobs, bytes)``: how many blobs the store holds and their total size."""
        with self._lock:
            row = self._exec("SELECT count(*), coalesce(sum(size), 0) FROM blobs").fetchone()
        return int(row[0]), int(row[1])

    def resolve(self, messages: tuple[Message, ...]) -> tuple[Message, ...]:
        """``messages`` with every referenced blob's bytes loaded from the store."""
        return resolve_messages(messages, self.get_blob)

    def prune_blobs(self) -> tuple[int, int]:
        """Delete the blobs no event of any conversation references (left by
        deleted conversations); return ``(blobs, bytes)`` freed.  Blobs are
        shared by hash across conversations, so deleting one never deletes
        them; this is the explicit sweep, one write transaction that reads
        every event holding a blob reference."""

        def work() -> tuple[int, int]:
            used: set[str] = set()
            events = f"SELECT conv, seq, {self._stored_json} FROM events"
            for key, seq, data in self._exec(events):
                raw = self._event_json(key, seq, data)  # a big event read apart (#41)
                if BLOB_MARK in raw:
                    used.update(b.sha256 for b in event_blobs(decode_event(raw)))
            stored = self._exec("SELECT sha256, size FROM blobs").fetchall()
            gone = [(sha, int(size)) for sha, size in stored if sha not in used]
            if gone:
                self._many(self._sql("DELETE FROM blobs WHERE sha256 = ?"), [(g,) for g, _ in gone])
            return len(gone), sum(size for _, size in gone)

        freed: tuple[int, int] = self._write(work, "prune the blobs of")
        return freed


__all__ = ["BLOB_MARK", "SQLBlobs"]
