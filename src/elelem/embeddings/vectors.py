"""Vectors as the store keeps them: little-endian float32 bytes, the
content hash that skips unchanged rows, and the cosine the Python path ranks
by."""

from __future__ import annotations

import hashlib
import math
import sys
from array import array

from elelem.wire.embeddings import Vector


def content_hash(content: str) -> str:
    """The SHA-256 (hex) a row keeps of its content."""
    return hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()


def to_bytes(vector: Vector) -> bytes:
    """``vector`` as little-endian float32 bytes."""
    if vector.typecode != "f":
        vector = array("f", vector)
    if sys.byteorder == "little":
        return vector.tobytes()
    swapped = array("f", vector)
    swapped.byteswap()
    return swapped.tobytes()


def from_bytes(data: bytes) -> Vector:
    """The vector of little-endian float32 ``data``."""
    out = array("f")
    out.frombytes(bytes(data))
    if sys.byteorder != "little":
        out.byteswap()
    return out


def cosine(a: Vector, b: Vector) -> float:
    """The cosine similarity of two vectors of one length (0.0 for a zero vector)."""
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    return dot / norm if norm else 0.0


__all__ = ["content_hash", "cosine", "from_bytes", "to_bytes"]
