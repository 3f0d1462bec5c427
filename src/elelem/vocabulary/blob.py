"""Blobs: the bytes of an image or document, named by their SHA-256.

A :class:`Blob` is a value: two blobs are equal when their hash and size
are.  It may hold its bytes (built from them, or resolved from a store) or
only name them (decoded from a stored event): the canonical encoding is
always the reference ``{"sha256": …, "size": …}``, never the bytes, so the
bytes live once in a content-addressed store beside the events (docs/architecture.md §4).
Asking an unresolved blob for its bytes is a typed
:class:`~elelem.errors.BlobMissingError` naming it, never a silent hole.
"""

from __future__ import annotations

import base64
import hashlib
import re
from typing import Any

import msgspec

from elelem.errors import BlobCorruptError, BlobMissingError, DecodeError

_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def sha256_hex(data: bytes) -> str:
    """The lowercase hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


class Blob:
    """Content-addressed bytes (immutable).

    ``Blob(data)`` hashes ``data`` and holds it; :meth:`ref` names bytes held
    elsewhere.  :attr:`data` gives the bytes or raises
    :class:`~elelem.errors.BlobMissingError`; :meth:`resolve` attaches bytes
    to a reference after checking they hash to it
    (:class:`~elelem.errors.BlobCorruptError` otherwise).
    """

    __slots__ = ("_data", "sha256", "size")
    sha256: str
    size: int
    _data: bytes | None

    def __init__(self, data: bytes) -> None:
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"a blob holds bytes, not {type(data).__name__}")
        raw = bytes(data)
        object.__setattr__(self, "sha256", sha256_hex(raw))
        object.__setattr__(self, "size", len(raw))
        object.__setattr__(self, "_data", raw)

    @classmethod
    def ref(cls, sha256: str, size: int) -> Blob:
        """A blob known only by its hash and size (its bytes are elsewhere)."""
        if not isinstance(sha256, str) or not _HEX64.match(sha256):
            raise DecodeError(
                f"a blob's sha256 must be 64 lowercase hex digits, got {sha256!r}", "$.sha256"
            )
        if type(size) is not int or size < 0:
            raise DecodeError(f"a blob's size must be a non-negative int, got {size!r}", "$.size")
        blob = object.__new__(cls)
        object.__setattr__(blob, "sha256", sha256)
        object.__setattr__(blob, "size", size)
        object.__setattr__(blob, "_data", None)
        return blob

    @property
    def resolved(self) -> bool:
        """True when the blob holds its bytes."""
        return self._data is not None

    @property
    def data(self) -> bytes:
        """The bytes; :class:`~elelem.errors.BlobMissingError` if not held."""
        if self._data is None:
            raise BlobMissingError(
                f"blob sha256:{self.sha256} ({self.size} bytes) is not loaded: resolve it"
                " from the store that holds it",
                self.sha256,
            )
        return self._data

    def resolve(self, data: bytes) -> Blob:
        """This blob holding ``data``, which must hash to it."""
        if self._data is not None:
            return self
        check_bytes(self.sha256, self.size, data)
        blob = object.__new__(Blob)
        object.__setattr__(blob, "sha256", self.sha256)
        object.__setattr__(blob, "size", self.size)
        object.__setattr__(blob, "_data", bytes(data))
        return blob

    def to_json(self) -> dict[str, Any]:
        """The canonical encoding: the reference, never the bytes."""
        return {"sha256": self.sha256, "size": self.size}

    @classmethod
    def from_json(cls, obj: object) -> Blob:
        """Decode the reference ``{"sha256", "size"}``; an object that also (or
        only) carries ``base64`` bytes gives a resolved blob, checked against
        the hash and size when they are given."""
        if not isinstance(obj, dict):
            raise DecodeError(f"a blob must be an object, got {type(obj).__name__}")
        unknown = set(obj) - {"sha256", "size", "base64"}
        if unknown:
            raise DecodeError(f"a blob has unknown field(s) {sorted(unknown)!r}")
        encoded = obj.get("base64")
        if encoded is None:
            return cls.ref(obj.get("sha256"), obj.get("size"))  # type: ignore[arg-type]
        if not isinstance(encoded, str):
            raise DecodeError("a blob's base64 must be a string", "$.base64")
        try:
            # msgspec's decoder: strict standard base64 (padding exact), some
            # six times faster here than the standard library's validated one,
            # which a live session's seconds of speech made the larger part of
            # storing each answer.
            data = msgspec.convert(encoded, bytes)
        except msgspec.ValidationError as exc:
            raise DecodeError(f"a blob's base64 is not base64: {exc}", "$.base64") from None
        blob = cls(data)
        if "sha256" in obj or "size" in obj:
            expected = cls.ref(obj.get("sha256"), obj.get("size"))  # type: ignore[arg-type]
            if expected != blob:
                raise DecodeError(
                    f"blob bytes hash to sha256:{blob.sha256} ({blob.size} bytes), not"
                    f" sha256:{expected.sha256} ({expected.size} bytes)",
                    "$.base64",
                )
        return blob

    def base64(self) -> str:
        """The bytes as standard base64 (raises like :attr:`data`)."""
        return base64.b64encode(self.data).decode("ascii")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Blob):
            return NotImplemented
        return self.sha256 == other.sha256 and self.size == other.size

    def __hash__(self) -> int:
        return hash((self.sha256, self.size))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Blob is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Blob is immutable")

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        if self._data is not None:
            return (Blob, (self._data,))
        return (Blob.ref, (self.sha256, self.size))

    def __repr__(self) -> str:
        # Never the bytes: they are the user's, and may be large.
        state = "" if self._data is not None else ", unresolved"
        return f"Blob(sha256={self.sha256[:12]}…, size={self.size}{state})"


def check_bytes(sha256: str, size: int, data: bytes) -> None:
    """Raise :class:`~elelem.errors.BlobCorruptError` unless ``data`` is the
    ``size`` bytes that hash to ``sha256``."""
    actual = sha256_hex(data)
    if actual != sha256 or len(data) != size:
        raise BlobCorruptError(
            f"blob sha256:{sha256} is corrupt: its {len(data)} bytes hash to sha256:{actual}"
            f" (expected {size} bytes)",
            sha256,
        )


def blob_dec_hook(typ: type, obj: Any) -> Any:
    """A msgspec ``dec_hook`` that decodes :class:`Blob` fields (for
    ``msgspec.convert`` of a block outside the codec)."""
    if typ is Blob:
        return Blob.from_json(obj)
    raise NotImplementedError(f"cannot decode {typ!r}")


__all__ = ["Blob", "blob_dec_hook", "check_bytes", "sha256_hex"]
