"""What bytes are: media type from magic bytes and name, image pixel size,
PDF page count.  Pure functions of the bytes; nothing is decoded further
than the header that answers."""

from __future__ import annotations

import re
import struct

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
)

EXTENSIONS: dict[str, str] = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".heic": "image/heic",
    ".heif": "image/heif",
    ".pdf": "application/pdf",
    ".txt": "text/plain",
    ".text": "text/plain",
    ".log": "text/plain",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".html": "text/html",
    ".htm": "text/html",
    ".xml": "text/xml",
    ".json": "application/json",
    ".py": "text/x-python",
    ".rs": "text/x-rust",
    ".js": "text/javascript",
    ".ts": "text/x-typescript",
    ".c": "text/x-c",
    ".h": "text/x-c",
    ".go": "text/x-go",
    ".java": "text/x-java",
    ".toml": "text/plain",
    ".yaml": "text/yaml",
    ".yml": "text/yaml",
}
"""Media types by file extension (a fixed table: the system's mime.types
differs between machines)."""


def media_type_of_name(name: str) -> str | None:
    """The media type a file name's extension names, or None."""
    base = name.rsplit("/", 1)[-1].split("?", 1)[0].split("#", 1)[0]
    dot = base.rfind(".")
    if dot <= 0 and not base.startswith("."):
        return None
    return EXTENSIONS.get(base[dot:].lower())


def media_type_of_bytes(data: bytes) -> str | None:
    """The media type the magic bytes of ``data`` name: PNG, JPEG, GIF, WebP,
    PDF; ``text/plain`` for UTF-8 text without NUL; else None."""
    for magic, media in _MAGIC:
        if data.startswith(magic):
            return media
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    head = data[:4096]
    if b"\x00" in head:
        return None
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut at the end of the sample is still text.
        if exc.start < len(head) - 3:
            return None
    return "text/plain"


def sniff_media_type(data: bytes, name: str | None = None) -> str | None:
    """The media type of ``data``: binary magic wins (a ``.txt`` that is a PNG
    is a PNG); text takes the name's more precise type (``.md`` →
    ``text/markdown``, ``.json`` → ``application/json``); None when neither
    says."""
    by_bytes = media_type_of_bytes(data)
    by_name = media_type_of_name(name) if name else None
    if by_bytes is None:
        return by_name
    if by_bytes == "text/plain" and by_name is not None and _textual(by_name):
        return by_name
    return by_bytes


def _textual(media_type: str) -> bool:
    return media_type.startswith("text/") or media_type == "application/json"


def image_size(data: bytes) -> tuple[int, int] | None:
    """``(width, height)`` in pixels of a PNG, GIF, JPEG or WebP, from its
    header; None when the header does not say (or is not one of these)."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) >= 24 and data[12:16] == b"IHDR":
        w, h = struct.unpack(">II", data[16:24])
        return w, h
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        w, h = struct.unpack("<HH", data[6:10])
        return w, h
    if data.startswith(b"\xff\xd8"):
        return _jpeg_size(data)
    if len(data) >= 30 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _webp_size(data)
    return None


# Start-of-frame markers (not DHT C4, JPG C8, DAC CC).
_SOF = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    i = 2
    n = len(data)
    while i + 4 <= n:
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        (length,) = struct.unpack(">H", data[i + 2 : i + 4])
        if marker in _SOF and i + 9 <= n:
            h, w = struct.unpack(">HH", data[i + 5 : i + 9])
            return w, h
        if marker == 0xDA:  # start of scan: no frame header came first
            return None
        i += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X":
        w = int.from_bytes(data[24:27], "little") + 1
        h = int.from_bytes(data[27:30], "little") + 1
        return w, h
    if chunk == b"VP8L" and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":
        w, h = struct.unpack("<HH", data[26:30])
        return w & 0x3FFF, h & 0x3FFF
    return None


_PAGE = re.compile(rb"/Type\s*/Page(?![A-Za-z])")
_COUNT = re.compile(rb"/Type\s*/Pages\b[^>]*?/Count\s+(\d+)|/Count\s+(\d+)[^>]*?/Type\s*/Pages\b")


def pdf_page_count(data: bytes) -> int | None:
    """The number of pages of a PDF: the largest ``/Count`` of a page tree
    node, else the page objects counted; None for bytes that are not a PDF
    or name no page."""
    if not data.startswith(b"%PDF-"):
        return None
    counts = [int(a or b) for a, b in _COUNT.findall(data)]
    if counts:
        return max(counts)
    pages = len(_PAGE.findall(data))
    return pages or None


__all__ = [
    "EXTENSIONS",
    "image_size",
    "media_type_of_bytes",
    "media_type_of_name",
    "pdf_page_count",
    "sniff_media_type",
]
