"""An MCP ``CallToolResult`` as the tool result the model is sent.

Text content goes as it is; a resource link and an embedded text resource
as a line naming it; an image as an image attachment (once: never again as
text); audio or a binary resource as a line naming its type and size, its
bytes kept in the result's payload.  ``structuredContent`` is the text only
when the result has no content at all (a server that sends both sends the
same thing twice, and an image-only result must not turn into base64 text).
Content annotations (audience, priority, last modified) are kept in the
payload, beside the block they belong to.
"""

from __future__ import annotations

import base64
from typing import Any

import msgspec

from elelem.errors import DecodeError
from elelem.tools.base import ToolOutcome
from elelem.vocabulary import ImageBlock, JSONValue, ProviderId, ProviderPayload

MCP_PROVIDER = ProviderId("mcp")
"""The provider name of the payload that keeps a result's non-text content."""

CONTENT_FORMAT = "tool-result-content"
"""Payload format: the MCP result's content blocks that are not text, as the
server sent them, and the annotations of the others (with their ``index``)."""

MAX_RESULT = 1_000_000
"""The most characters of one tool result's text sent to the model (and stored)."""


def result_outcome(result: Any, max_result: int = MAX_RESULT) -> ToolOutcome:
    """An MCP ``CallToolResult`` as the tool result the model is sent; text
    past ``max_result`` characters is cut, and the text says so."""
    lines: list[str] = []
    kept: list[JSONValue] = []
    attachments: list[ImageBlock] = []
    for index, block in enumerate(result.content):
        whole = _block(block, lines, attachments)
        if whole:
            kept.append(_dump(block))
        elif getattr(block, "annotations", None) is not None:
            kept.append(_annotations(block, index))
    if not result.content and result.structured_content is not None:
        lines.append(msgspec.json.encode(result.structured_content).decode())
    payloads = (ProviderPayload(MCP_PROVIDER, CONTENT_FORMAT, None, kept),) if kept else ()
    text = "\n".join(lines)
    if len(text) > max_result:
        text = (
            f"{text[:max_result]}\n[elelem: the result was cut to its first {max_result} of "
            f"{len(text)} characters]"
        )
    return ToolOutcome(text, bool(result.is_error), payloads, tuple(attachments))


def _block(block: Any, lines: list[str], attachments: list[ImageBlock]) -> bool:
    """Map one content block into ``lines`` or ``attachments``; True when
    the block itself must be kept in the payload (bytes the model is not sent)."""
    kind = getattr(block, "type", None)
    if kind == "text":
        lines.append(block.text)
    elif kind == "image" and (image := _image(block.data, block.mime_type)) is not None:
        attachments.append(image)
    elif kind in ("image", "audio"):
        lines.append(f"[{kind} {block.mime_type}, {_size(block.data)} bytes]")
        return True
    elif kind == "resource_link":
        mime = f" ({block.mime_type})" if block.mime_type else ""
        lines.append(f"[resource {block.name} <{block.uri}>{mime}]")
    elif kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if text is not None:
            lines.append(f"[resource <{resource.uri}>]\n{text}")
        else:
            mime = f" {resource.mime_type}" if resource.mime_type else ""
            lines.append(f"[resource <{resource.uri}>{mime}, {_size(resource.blob)} bytes]")
            return True
    else:
        lines.append(msgspec.json.encode(_dump(block)).decode())
    return False


def _dump(block: Any) -> JSONValue:
    raw: JSONValue = block.model_dump(mode="json", by_alias=True, exclude_none=True)
    return raw


def _annotations(block: Any, index: int) -> JSONValue:
    """What a block that was sent on carries beside its content: its type,
    index in the result and annotations (its text or bytes are not copied)."""
    annotations: JSONValue = block.annotations.model_dump(
        mode="json", by_alias=True, exclude_none=True
    )
    return {"type": block.type, "index": index, "annotations": annotations}


def _image(data: str, media_type: str) -> ImageBlock | None:
    """An MCP image as an image block (None when its bytes or type are not
    an image elelem can send: then it is kept as a payload)."""
    try:
        return ImageBlock.from_bytes(base64.b64decode(data, validate=True), media_type)
    except (ValueError, DecodeError):
        return None


def _size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except ValueError:
        return len(data)


__all__ = ["CONTENT_FORMAT", "MAX_RESULT", "MCP_PROVIDER", "result_outcome"]
