"""What Ollama's native chat takes of images and documents.

What the wires share is :mod:`elelem.shapes.media`.
"""

from __future__ import annotations

from elelem.shapes.media import (
    Limits,
    MediaBlock,
    Report,
    document_text,
    source_kind,
)
from elelem.vocabulary import (
    BytesSource,
    DocumentBlock,
)
from elelem.vocabulary.drop import UNSUPPORTED

# Ollama: no documented limit.
LIMITS = Limits("Ollama")
"""Ollama's documented limits on inline images and documents."""


def encode_media(block: MediaBlock, where: str, report: Report) -> tuple[str | None, str | None]:
    """What Ollama's native chat takes of an image or a document: ``(image,
    text)``, an image's base64 for the message's ``images`` or a text
    document's text; PDFs, URLs and files are reported."""
    source = block.source
    if isinstance(block, DocumentBlock):
        text = document_text(block)
        if text is None:
            report("document", UNSUPPORTED, f"Ollama takes no document of {source_kind(block)}")
        return None, text
    if not isinstance(source, BytesSource):
        report(
            "image", UNSUPPORTED, f"Ollama takes images as bytes only, not by {source_kind(block)}"
        )
        return None, None
    return source.blob.base64(), None
