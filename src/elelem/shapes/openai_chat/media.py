"""Images and files on the Chat Completions wire.

What the wires share is :mod:`elelem.shapes.media`.
"""

from __future__ import annotations

from typing import Any

from elelem.shapes.media import (
    OPENAI_LIMITS,
    MediaBlock,
    Report,
    check_audio,
    check_limits,
    data_url,
    document_text,
    foreign_file,
    source_kind,
)
from elelem.vocabulary import (
    AudioBlock,
    BytesSource,
    FileSource,
    ImageBlock,
    URLSource,
)
from elelem.vocabulary.drop import UNSUPPORTED

LIMITS = OPENAI_LIMITS
"""OpenAI's documented limits (the same on both of its wires)."""


def encode_media(
    block: MediaBlock,
    provider: str,
    where: str,
    report: Report,
    *,
    images: bool,
    files: bool,
    dialect: str,
) -> dict[str, Any] | None:
    """The Chat Completions content part of an image (``image_url``) or a
    document (OpenAI's ``file`` part where the dialect takes files; text
    documents as ``text``); a dialect that takes no images reports them."""
    if foreign_file(block, provider, report):
        return None
    source = block.source
    if isinstance(block, ImageBlock):
        if not images:
            report("image", UNSUPPORTED, f"the {dialect} chat dialect takes no images")
            return None
        check_limits(block, LIMITS, where)
        if isinstance(source, FileSource):
            report("image", UNSUPPORTED, "Chat Completions takes no image file ids")
            return None
        url = source.url if isinstance(source, URLSource) else data_url(block)
        image: dict[str, Any] = {"url": url}
        if block.detail is not None:
            image["detail"] = block.detail
        return {"type": "image_url", "image_url": image}
    text = document_text(block)
    if text is not None:
        return {"type": "text", "text": text}
    if files and isinstance(source, BytesSource) and block.media_type == "application/pdf":
        check_limits(block, LIMITS, where)
        name = block.filename or block.title or "document.pdf"
        return {"type": "file", "file": {"filename": name, "file_data": data_url(block)}}
    if files and isinstance(source, FileSource):
        return {"type": "file", "file": {"file_id": source.id}}
    why = "files" if not files else f"documents of {source_kind(block)}"
    report("document", UNSUPPORTED, f"the {dialect} chat dialect takes no {why}")
    return None


CHAT_AUDIO_FORMATS = frozenset({"wav", "mp3"})
"""The formats ``input_audio`` takes."""


def encode_audio(
    block: AudioBlock, provider: str, where: str, report: Report, *, audio: bool, dialect: str
) -> dict[str, Any] | None:
    """The Chat Completions ``input_audio`` part of WAV or MP3 bytes; a
    dialect without audio, another format, a URL or a file id is reported."""
    if foreign_file(block, provider, report):
        return None
    source = block.source
    if not audio:
        report("audio", UNSUPPORTED, f"the {dialect} chat dialect takes no audio")
        return None
    if not isinstance(source, BytesSource) or block.format not in CHAT_AUDIO_FORMATS:
        why = source_kind(block)
        report("audio", UNSUPPORTED, f"Chat Completions takes WAV or MP3 bytes, not {why}")
        return None
    check_audio(block, LIMITS.request_bytes, "OpenAI", where)
    return {
        "type": "input_audio",
        "input_audio": {"data": source.blob.base64(), "format": block.format},
    }
