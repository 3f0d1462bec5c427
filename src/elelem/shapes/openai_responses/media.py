"""Images and files on the OpenAI Responses wire, and the images its
``image_generation_call`` items carry back.

What the wires share is :mod:`elelem.shapes.media`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from elelem.shapes.media import (
    GENERATED_BY,
    OPENAI_LIMITS,
    MediaBlock,
    Report,
    check_limits,
    data_url,
    document_text,
    foreign_file,
    generated_image,
    source_kind,
)
from elelem.vocabulary import (
    BytesSource,
    FileSource,
    ImageBlock,
    ProviderId,
    ProviderPayload,
    URLSource,
)
from elelem.vocabulary.drop import UNSUPPORTED

LIMITS = OPENAI_LIMITS
"""OpenAI's documented limits (the same on both of its wires)."""


def encode_media(
    block: MediaBlock, provider: str, where: str, report: Report
) -> dict[str, Any] | None:
    """The OpenAI Responses input part of an image (``input_image``: data URL
    or URL, ``detail``; or ``file_id``) or a document (``input_file``:
    ``file_data``/``file_url``/``file_id``, ``filename``; text documents as
    ``input_text``)."""
    if foreign_file(block, provider, report):
        return None
    check_limits(block, LIMITS, where)
    source = block.source
    if isinstance(block, ImageBlock):
        out: dict[str, Any] = {"type": "input_image"}
        if isinstance(source, BytesSource):
            out["image_url"] = data_url(block)
        elif isinstance(source, URLSource):
            out["image_url"] = source.url
        else:
            assert isinstance(source, FileSource)
            out["file_id"] = source.id
        out["detail"] = block.detail or "auto"
        return out
    if isinstance(source, BytesSource) and block.media_type == "application/pdf":
        name = block.filename or block.title or "document.pdf"
        return {"type": "input_file", "filename": name, "file_data": data_url(block)}
    if isinstance(source, URLSource):
        return {"type": "input_file", "file_url": source.url}
    if isinstance(source, FileSource):
        return {"type": "input_file", "file_id": source.id}
    text = document_text(block)
    if text is not None:
        return {"type": "input_text", "text": text}
    report("document", UNSUPPORTED, f"OpenAI Responses takes no document of {source_kind(block)}")
    return None


def responses_generated_image(
    item: dict[str, Any], provider: ProviderId
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """An ``image_generation_call`` item split in two: the item with its
    ``result`` emptied (its place kept, for replay), and the raw image block
    holding the bytes (None, and the item unchanged, when there is no
    decodable image)."""
    fmt = item.get("output_format")
    media_type = f"image/{'jpeg' if fmt == 'jpg' else fmt}" if isinstance(fmt, str) else None
    marker = ProviderPayload(provider, GENERATED_BY, None, {"id": item.get("id")})
    image = generated_image(item.get("result"), media_type, (marker,))
    if image is None:
        return item, None
    return {k: (None if k == "result" else v) for k, v in item.items()}, image


def restore_generated(item: dict[str, Any], images: Mapping[str, ImageBlock]) -> dict[str, Any]:
    """A replayed ``image_generation_call`` item with the bytes of the image it
    generated back in its ``result``, at their place."""
    image = images.get(str(item.get("id")))
    if item.get("result") is not None or image is None:
        return item
    assert isinstance(image.source, BytesSource)
    encoded = image.source.blob.base64()
    return {k: (encoded if k == "result" else v) for k, v in item.items()}
