"""Which images a page shows, by their own bytes: the stored page's
thumbnails (:mod:`elelem.web.folds`), the live chat's (the
``data-tool-media`` chunk of a tool's result, :func:`tool_media`) and the
whole image (:mod:`elelem.web.routes.blobs`) check the same way.

An image is shown only from its own bytes (a ``data:`` URL, never a remote
URL), when they are a raster image of :data:`SHOWN_IMAGES` by their magic
bytes (a claimed media type is not trusted) and at most
:data:`THUMBNAIL_LIMIT` bytes.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from elelem.errors import BlobMissingError
from elelem.render.lines import attachment_line
from elelem.vocabulary import BytesSource, ImageBlock, ToolResultBlock
from elelem.vocabulary.json import JSONValue
from elelem.vocabulary.sniff import media_type_of_bytes

Fetch = Callable[[str], bytes]
"""The bytes of a blob by its SHA-256 (:meth:`Store.get_blob <elelem.conversation.Store.get_blob>`)."""

SHOWN_IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""Raster images shown inline (as ``data:`` URLs); any other attachment is a line."""

THUMBNAIL_LIMIT = 8 * 1024 * 1024
"""The largest image shown inline; a larger one is its line (and, on
``elelem serve``, a link opening it whole)."""


def image_bytes(block: ImageBlock, fetch: Fetch | None) -> tuple[bytes, str] | None:
    """The bytes of an image held in the log and their media type by their
    magic bytes, when that is one of :data:`SHOWN_IMAGES` and the image is at
    most :data:`THUMBNAIL_LIMIT` bytes; else None."""
    source = block.source
    if not isinstance(source, BytesSource) or source.blob.size > THUMBNAIL_LIMIT:
        return None
    try:
        data = source.blob.data
    except BlobMissingError:
        if fetch is None:
            return None
        data = fetch(source.blob.sha256)
    media = media_type_of_bytes(data)
    return (data, media) if media in SHOWN_IMAGES else None


def image_data_url(block: ImageBlock, fetch: Fetch | None) -> str | None:
    """``block`` as a ``data:`` URL of its own bytes when it is shown
    (:func:`image_bytes`), else None."""
    shown = image_bytes(block, fetch)
    if shown is None:
        return None
    data, media = shown
    return f"data:{media};base64," + base64.b64encode(data).decode("ascii")


def tool_media(result: ToolResultBlock) -> list[dict[str, Any]]:
    """The live chat's chunk of what a tool's result attached (an MCP image,
    a computer-use screenshot), sent right after the result's own chunk:
    a transient ``data-tool-media`` part (a stock ``useChat`` page keeps no
    copy of the bytes in its messages) listing each attachment's line, and
    for a shown image its ``data:`` URL and SHA-256 (the page links it to
    ``/blob/<sha256>``); nothing when the result attached nothing."""
    attached = result.attachments or ()
    if not attached:
        return []
    media: list[JSONValue] = []
    for block in attached:
        item: dict[str, JSONValue] = {
            "kind": "image" if isinstance(block, ImageBlock) else "document",
            "caption": attachment_line(block),
        }
        url = image_data_url(block, None) if isinstance(block, ImageBlock) else None
        if url is not None and isinstance(block.source, BytesSource):
            item["url"] = url
            item["sha256"] = block.source.blob.sha256
            item["name"] = block.name or "image"
        media.append(item)
    data: dict[str, JSONValue] = {"toolCallId": result.call_id, "media": media}
    return [{"type": "data-tool-media", "data": data, "transient": True}]


__all__ = [
    "SHOWN_IMAGES",
    "THUMBNAIL_LIMIT",
    "Fetch",
    "image_bytes",
    "image_data_url",
    "tool_media",
]
