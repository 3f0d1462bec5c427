"""Images, documents and audio on the Gemini Interactions wire.

A content block of a ``user_input`` step: ``{"type": "image" | "document" |
"audio", "mime_type", "data"}`` for bytes (base64), ``"uri"`` for a URL or a
Gemini file (ai.google.dev/api/interactions-api, the ``ImageContent``,
``DocumentContent`` and ``AudioContent`` types); a text document is a
``text`` block.  The inline limits are generateContent's (the same Gemini
models behind it).  Sans-IO like every shape; what the wires share is
:mod:`elelem.shapes.media`.
"""

from __future__ import annotations

from typing import Any

from elelem.shapes.gemini.media import LIMITS as GEMINI_LIMITS
from elelem.shapes.media import (
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
    ImageBlock,
    URLSource,
)
from elelem.vocabulary.drop import UNSUPPORTED
from elelem.vocabulary.sniff import media_type_of_name

LIMITS: Limits = GEMINI_LIMITS
"""Gemini's documented limits on inline images and documents."""


def encode_media(
    block: MediaBlock | AudioBlock, provider: str, where: str, report: Report
) -> dict[str, Any] | None:
    """The content block of an image, document or audio, or None with the
    drop reported (another provider's file)."""
    if foreign_file(block, provider, report):
        return None
    if isinstance(block, AudioBlock):
        check_audio(block, LIMITS.request_bytes, "Gemini", where)
        kind = "audio"
    else:
        check_limits(block, LIMITS, where)
        kind = "image" if isinstance(block, ImageBlock) else "document"
        text = document_text(block) if isinstance(block, DocumentBlock) else None
        if text is not None:
            return {"type": "text", "text": text}
    source = block.source
    if isinstance(source, BytesSource):
        return {"type": kind, "mime_type": block.media_type, "data": source.blob.base64()}
    if isinstance(source, URLSource):
        uri = source.url
    elif isinstance(source, FileSource):
        uri = source.id
    else:
        report(kind, UNSUPPORTED, f"Gemini Interactions takes no {kind} of {source_kind(block)}")
        return None
    content: dict[str, Any] = {"type": kind, "uri": uri}
    media_type = block.media_type or media_type_of_name(uri)
    if media_type:
        content["mime_type"] = media_type
    return content


__all__ = ["LIMITS", "encode_media"]
