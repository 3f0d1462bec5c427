"""Blobs in the conversation layer: finding the blobs messages reference and
giving loaded messages their bytes back.

Stored events hold a blob's reference only (its SHA-256 and size); the bytes
live once in the store's blob table.  Before a history is encoded for a
provider, :func:`resolve_messages` attaches the bytes, fetched through a
function of the hash (a store's :meth:`get_blob`), to every image and
document that names a blob.  A blob nobody holds is a
:class:`~elelem.errors.BlobMissingError` naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import msgspec

from elelem.conversation.events import Event
from elelem.vocabulary import (
    AudioBlock,
    Blob,
    BytesSource,
    DocumentBlock,
    ImageBlock,
    Message,
    Part,
    ToolResultBlock,
)

Fetch = Callable[[str], bytes]
"""The bytes of a blob by its SHA-256 (raising BlobMissingError / BlobCorruptError)."""


def part_blobs(part: object) -> Iterator[Blob]:
    """The blobs one content part references (an image's or document's bytes,
    those of a tool result's attachments)."""
    if isinstance(part, (ImageBlock, DocumentBlock, AudioBlock)):
        if isinstance(part.source, BytesSource):
            yield part.source.blob
    elif isinstance(part, ToolResultBlock):
        for attachment in part.attachments or ():
            yield from part_blobs(attachment)


def event_blobs(event: Event) -> list[Blob]:
    """The blobs one event's message content references."""
    content = getattr(event.body, "content", None)
    if not isinstance(content, tuple):
        return []
    return [b for part in content for b in part_blobs(part)]


def message_blobs(messages: Iterable[Message]) -> Iterator[Blob]:
    """Every blob the messages reference, in order (repeats included)."""
    for message in messages:
        for part in message.content:
            yield from part_blobs(part)


def _resolved_part(part: Part, fetch: Fetch, cache: dict[str, Blob]) -> Part:
    if isinstance(part, (ImageBlock, DocumentBlock, AudioBlock)):
        source = part.source
        if isinstance(source, BytesSource) and not source.blob.resolved:
            blob = cache.get(source.blob.sha256)
            if blob is None:
                blob = cache[source.blob.sha256] = source.blob.resolve(fetch(source.blob.sha256))
            return msgspec.structs.replace(part, source=BytesSource(blob))
    elif isinstance(part, ToolResultBlock) and part.attachments:
        attachments = tuple(_resolved_part(a, fetch, cache) for a in part.attachments)
        if any(a is not b for a, b in zip(attachments, part.attachments, strict=True)):
            return msgspec.structs.replace(part, attachments=attachments)
    return part


def resolve_messages(
    messages: tuple[Message, ...], fetch: Fetch, cache: dict[str, Blob] | None = None
) -> tuple[Message, ...]:
    """``messages`` with every referenced blob holding its bytes (``messages``
    itself when none lacked them).  ``cache`` keeps resolved blobs between
    calls (a conversation keeps one)."""
    memo = {} if cache is None else cache
    out: list[Message] | None = None
    for i, message in enumerate(messages):
        content = message.content
        parts = [_resolved_part(p, fetch, memo) for p in content]
        if any(a is not b for a, b in zip(parts, content, strict=True)):
            if out is None:
                out = list(messages)
            out[i] = msgspec.structs.replace(message, content=tuple(parts))
    return messages if out is None else tuple(out)


__all__ = ["Fetch", "event_blobs", "message_blobs", "part_blobs", "resolve_messages"]
