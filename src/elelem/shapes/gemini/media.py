"""Images and documents on the Gemini wire (``inlineData``, ``fileData``).

What the wires share is :mod:`elelem.shapes.media`.
"""

from __future__ import annotations

from typing import Any

from elelem.shapes.media import (
    MB,
    Limits,
    MediaBlock,
    Report,
    check_audio,
    check_limits,
    document_text,
    foreign_file,
    source_kind,
)
from elelem.vocabulary import (
    AudioBlock,
    BytesSource,
    DocumentBlock,
    FileSource,
    URLSource,
)
from elelem.vocabulary.drop import UNSUPPORTED
from elelem.vocabulary.sniff import media_type_of_name

# Gemini: inline data up to 20 MB per request (larger goes through the File API).
LIMITS = Limits("Gemini", 20 * MB, None, 20 * MB, 1000, 20 * MB)
"""Gemini's documented limits on inline images and documents."""


def admit(block: MediaBlock | AudioBlock, provider: str, where: str, report: Report) -> bool:
    """Whether a Gemini model takes ``block`` (on generateContent and on
    Interactions alike): another provider's file is reported and dropped;
    inline bytes over :data:`LIMITS` raise."""
    if foreign_file(block, provider, report):
        return False
    if isinstance(block, AudioBlock):
        check_audio(block, LIMITS.request_bytes, "Gemini", where)
    else:
        check_limits(block, LIMITS, where)
    return True


def file_uri(source: object) -> str | None:
    """The URI Gemini fetches a source by: a URL's, a Gemini file's name; None
    for any other source (bytes go inline)."""
    if isinstance(source, URLSource):
        return source.url
    if isinstance(source, FileSource):
        return source.id
    return None


def encode_media(
    block: MediaBlock, provider: str, where: str, report: Report
) -> dict[str, Any] | None:
    """The Gemini part of an image or document: ``inlineData`` for bytes,
    ``fileData`` for a URL or a Gemini file; text documents as ``text``."""
    if not admit(block, provider, where, report):
        return None
    source = block.source
    text = document_text(block) if isinstance(block, DocumentBlock) else None
    if text is not None:
        return {"text": text}
    if isinstance(source, BytesSource):
        return {"inlineData": {"mimeType": block.media_type, "data": source.blob.base64()}}
    uri = file_uri(source)
    if uri is None:
        report("document", UNSUPPORTED, f"Gemini takes no document of {source_kind(block)}")
        return None
    # fileData requires a mimeType: the block's own, else the one the URL's
    # name says (a .png sent as image/jpeg is refused or misread), else the
    # kind's usual one.
    media_type = (
        block.media_type
        or media_type_of_name(uri)
        or ("application/pdf" if isinstance(block, DocumentBlock) else "image/jpeg")
    )
    return {"fileData": {"mimeType": media_type, "fileUri": uri}}


def encode_audio(
    block: AudioBlock, provider: str, where: str, report: Report
) -> dict[str, Any] | None:
    """The Gemini part of audio: ``inlineData`` for bytes (20 MB inline),
    ``fileData`` for a URL or a Gemini file."""
    if not admit(block, provider, where, report):
        return None
    source = block.source
    if isinstance(source, BytesSource):
        return {"inlineData": {"mimeType": block.media_type, "data": source.blob.base64()}}
    uri = source.url if isinstance(source, URLSource) else source.id
    return {"fileData": {"mimeType": block.media_type or "audio/mpeg", "fileUri": uri}}
