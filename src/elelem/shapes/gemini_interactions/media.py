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

from elelem.shapes.gemini.media import LIMITS, admit, file_uri
from elelem.shapes.media import MediaBlock, Report, document_text, source_kind
from elelem.vocabulary import AudioBlock, BytesSource, DocumentBlock, ImageBlock
from elelem.vocabulary.drop import UNSUPPORTED
from elelem.vocabulary.sniff import media_type_of_name


def encode_media(
    block: MediaBlock | AudioBlock, provider: str, where: str, report: Report
) -> dict[str, Any] | None:
    """The content block of an image, document or audio, or None with the
    drop reported (another provider's file)."""
    if not admit(block, provider, where, report):
        return None
    if isinstance(block, AudioBlock):
        kind = "audio"
    else:
        kind = "image" if isinstance(block, ImageBlock) else "document"
        text = document_text(block) if isinstance(block, DocumentBlock) else None
        if text is not None:
            return {"type": "text", "text": text}
    source = block.source
    if isinstance(source, BytesSource):
        return {"type": kind, "mime_type": block.media_type, "data": source.blob.base64()}
    uri = file_uri(source)
    if uri is None:
        report(kind, UNSUPPORTED, f"Gemini Interactions takes no {kind} of {source_kind(block)}")
        return None
    content: dict[str, Any] = {"type": kind, "uri": uri}
    media_type = block.media_type or media_type_of_name(uri)
    if media_type:
        content["mime_type"] = media_type
    return content


__all__ = ["LIMITS", "encode_media"]
