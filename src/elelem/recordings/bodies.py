"""What a recorded body is, before any container: its bytes decoded
(gzip, deflate, br, told by the bytes' own magic, never by the header
alone) within one :class:`DecodeBudget` per recording, the size a parsed
container expands to, and its format told from its first bytes (server-sent
events, an AWS event stream).  :mod:`elelem.recordings.containers` reads the
containers around these bodies.
"""

from __future__ import annotations

import re
import struct
import zlib
from collections.abc import Sequence

from elelem.errors import ElelemError

MAX_DECODED_BYTES = 64 * 1024 * 1024
"""The most the bodies of one recording may decode to, all together (a small
gzip can expand without bound, and a recording may hold thousands of them)."""

_GZIP = b"\x1f\x8b"
_EVENTSTREAM_TYPE = "application/vnd.amazon.eventstream"


class BodyError(ElelemError, ValueError):
    """A body that says it is encoded and cannot be decoded (the message says why)."""


class DecodeBudget:
    """The decoded bytes one recording may still produce: every body of a
    recording (and the recording itself, when it is gzipped) draws on this
    one budget, so ten bodies of a 64 MiB bomb cost what one does.

    :attr:`spent` is how many decoded bytes were made so far; decoding stops
    one byte past :attr:`limit` with a :class:`BodyError` naming the budget.
    """

    def __init__(self, limit: int = MAX_DECODED_BYTES) -> None:
        self.limit = limit
        self.spent = 0

    @property
    def remaining(self) -> int:
        """The bytes decoding may still make before the budget is passed."""
        return max(self.limit - self.spent, 0)

    def take(self, size: int, name: str) -> None:
        """Count ``size`` decoded bytes of a ``name`` body; a
        :class:`BodyError` once the recording's bodies pass the budget."""
        self.spent += size
        if self.spent > self.limit:
            raise BodyError(
                f"its bodies decode to more than {self.limit} bytes in all, the decoding "
                f"budget of one recording (at a {name} body)"
            )


MAX_INTERACTIONS = 10_000
"""The most interactions one recording may hold (each is replayed through
the driver; YAML aliases make a small file hold any number)."""


def countable(items: Sequence[object]) -> None:
    """Raise :class:`BodyError` when ``items`` are more interactions than
    :data:`MAX_INTERACTIONS`."""
    if len(items) > MAX_INTERACTIONS:
        raise BodyError(f"more than {MAX_INTERACTIONS} interactions in this recording")


def expanded_size(root: object, limit: int) -> int:
    """The size of ``root`` as if every shared node were copied out: one per
    node, plus the length of each string.

    YAML aliases load as shared references, so a kilobyte of them can stand
    for gigabytes once re-encoded; this walks each distinct node once (its
    size kept by identity) and stops with :class:`BodyError` as soon as the
    total passes ``limit``, or at a node that holds itself.  Iterative, so
    depth costs no stack.
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()  # entered, not finished: the current path
    stack = [root]
    while stack:
        node = stack[-1]
        key = id(node)
        if key in sizes:
            stack.pop()
            continue
        kids = _children(node)
        if key not in open_nodes:
            open_nodes.add(key)
            pending = [k for k in kids if _is_node(k) and id(k) not in sizes]
            if any(id(k) in open_nodes for k in pending):
                raise BodyError("a YAML alias refers to a node that holds it (a loop)")
            stack.extend(pending)
            continue
        total = 1 + sum(sizes[id(k)] if _is_node(k) else _leaf_size(k) for k in kids)
        if total > limit:
            raise BodyError(
                f"the YAML, its aliases expanded, is larger than the read limit of {limit} "
                "bytes (--max-bytes)"
            )
        sizes[key] = total
        open_nodes.discard(key)
        stack.pop()
    return sizes[id(root)] if _is_node(root) else _leaf_size(root)


def _is_node(value: object) -> bool:
    return isinstance(value, (dict, list))


def _children(node: object) -> list[object]:
    if isinstance(node, dict):
        return [*node.keys(), *node.values()]
    return list(node) if isinstance(node, list) else []


def _leaf_size(value: object) -> int:
    return 1 + len(value) if isinstance(value, (str, bytes)) else 1


def decode_body(
    body: bytes, declared: str, budget: DecodeBudget | None = None
) -> tuple[bytes, str]:
    """``body`` decoded, and the content-coding it really had (``""``: none).

    What decoding makes is drawn from ``budget``, the recording's (a budget
    of its own, :data:`MAX_DECODED_BYTES`, when none is given).

    ``declared`` is the recorded ``content-encoding`` header.  gzip and zlib
    (``deflate``) are told by their magic bytes, whatever the header says;
    a header that names an encoding the bytes do not have is taken for a
    recorder that stored the body decoded.  Brotli has no magic: a body the
    header calls ``br`` that does not decode as Brotli but is already text
    (JSON or an event stream) is taken as decoded, anything else is a
    :class:`BodyError`.  Raw deflate (no zlib header) is tried only when
    the header says ``deflate``.
    """
    budget = budget if budget is not None else DecodeBudget()
    said = {token.strip().lower() for token in declared.split(",") if token.strip()}
    if body[:2] == _GZIP:
        return _inflate(body, 16 + zlib.MAX_WBITS, "gzip", budget), "gzip"
    if _zlib_header(body):
        return _inflate(body, zlib.MAX_WBITS, "deflate", budget), "deflate"
    if "br" in said:
        try:
            return _unbrotli(body, budget), "br"
        except _NotBrotli:
            if _looks_decoded(body):
                return body, ""
            raise
    if "deflate" in said and not _looks_decoded(body):
        return _inflate(body, -zlib.MAX_WBITS, "deflate", budget), "deflate"
    return body, ""


def _zlib_header(body: bytes) -> bool:
    # RFC 1950: CM = 8 (deflate), a window of at most 32K, and FCHECK.
    return (
        len(body) >= 2
        and body[0] & 0x0F == 8
        and body[0] >> 4 <= 7
        and (body[0] << 8 | body[1]) % 31 == 0
    )


def _looks_decoded(body: bytes) -> bool:
    return head(body, 1) in (b"{", b"[", b"e", b"d", b":", b"i", b"r") or is_blank(body)


def _inflate(body: bytes, wbits: int, name: str, budget: DecodeBudget) -> bytes:
    # One piece per gzip member, joined only when there are several: the
    # decoded body is held once, not also in a buffer it was built in.
    out: list[bytes] = []
    data = body
    try:
        while data:
            inflater = zlib.decompressobj(wbits)
            piece = inflater.decompress(data, budget.remaining + 1)
            budget.take(len(piece), name)
            out.append(piece)
            if inflater.unconsumed_tail:
                # Stopped at the budget with input left: more would pass it.
                budget.take(1, name)
            if not inflater.eof:
                raise BodyError(f"the {name} body is cut off")
            # gzip allows several members one after another.
            data = inflater.unused_data if wbits > zlib.MAX_WBITS else b""
    except zlib.error as exc:
        raise BodyError(f"the {name} body does not decode: {exc}") from None
    return out[0] if len(out) == 1 else b"".join(out)


class _NotBrotli(BodyError):
    """Bytes the Brotli decoder refuses (perhaps a body stored decoded)."""


def _unbrotli(body: bytes, budget: DecodeBudget) -> bytes:
    import brotli  # type: ignore[import-untyped]  # httpx2's brotli extra

    try:
        inflater = brotli.Decompressor()
        out: bytes = inflater.process(body, output_buffer_limit=budget.remaining + 1)
    except brotli.error as exc:
        raise _NotBrotli(f"the br body does not decode: {exc}") from None
    budget.take(len(out), "br")
    if not bool(inflater.is_finished()):
        if not inflater.can_accept_more_data():
            budget.take(1, "br")  # output left past the budget
        raise BodyError("the br body is cut off")
    return out


SSE_START = (b"data:", b"event:", b":", b"id:", b"retry:")
"""How a body of server-sent events can begin (after leading whitespace)."""

_SPACE = re.compile(rb"[ \t\n\r\x0b\x0c]*")


def head(body: bytes, size: int = 256) -> bytes:
    """The first ``size`` bytes of ``body`` after its leading whitespace
    (``bytes.lstrip`` would copy the whole body to look at its start)."""
    match = _SPACE.match(body)
    start = match.end() if match is not None else 0
    return body[start : start + size]


def is_blank(body: bytes) -> bool:
    """True when ``body`` is only whitespace (``bytes.strip`` copies it)."""
    match = _SPACE.match(body)
    return match is not None and match.end() == len(body)


def is_eventstream(raw: bytes) -> bool:
    """True when ``raw`` begins with an AWS event-stream message prelude
    (total length, headers length, and their CRC32)."""
    if len(raw) < 16:
        return False
    total, headers, crc = struct.unpack_from(">III", raw)
    return bool(zlib.crc32(raw[:8]) == crc and total >= 16 and headers < total)


def eventstream_content_type() -> str:
    """The media type of a binary event-stream body."""
    return _EVENTSTREAM_TYPE


__all__ = [
    "MAX_DECODED_BYTES",
    "MAX_INTERACTIONS",
    "SSE_START",
    "BodyError",
    "DecodeBudget",
    "countable",
    "decode_body",
    "eventstream_content_type",
    "expanded_size",
    "head",
    "is_blank",
    "is_eventstream",
]
