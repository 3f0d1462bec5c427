"""Images and documents on the wires: the rules no one wire owns.

Each shape's own spelling of an image or a document, its provider's
documented limits (``LIMITS``) and its citations into documents are in the
shape's ``media`` module (``encode_media``); this module holds what they
share:

- size limits, checked before anything is sent (:func:`check_limits`), an
  :class:`~elelem.errors.AttachmentTooLargeError` naming the limit;
- data URLs and base64 of a block's bytes;
- the documents of a request in the order a provider numbers them
  (:func:`request_documents`), so a citation's ``document_index`` names
  the message and block that hold the document (:func:`document_location`).

Sans-IO like every shape: the bytes are in the blocks (resolved from the
blob store by the conversation layer before encoding).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from elelem.errors import AttachmentTooLargeError
from elelem.vocabulary import (
    AudioBlock,
    BytesSource,
    DocumentBlock,
    Drop,
    FileSource,
    ImageBlock,
    Message,
    ProviderPayload,
    SearchResultSource,
    ToolResultBlock,
    URLSource,
)
from elelem.vocabulary.audio import audio_media_type, wav_duration
from elelem.vocabulary.drop import FOREIGN_PAYLOAD, BlockSite
from elelem.vocabulary.registry import register_block_mapping
from elelem.vocabulary.sniff import image_size, sniff_media_type

MediaBlock = ImageBlock | DocumentBlock

MB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """One provider's documented limits on inline images and documents."""

    provider: str
    image_bytes: int | None = None
    image_pixels: int | None = None
    """The longest side an image may have, in pixels."""
    document_bytes: int | None = None
    document_pages: int | None = None
    request_bytes: int | None = None
    """The whole request's size: the inline bytes count as their base64."""


# OpenAI's limits hold on both of its wires (Responses and Chat Completions):
# 20 MB per image; a file input up to 32 MB (and 100 pages); a request's
# inputs up to 50 MB.  Every other provider's limits are in its shape's
# ``media`` module.
OPENAI_LIMITS = Limits("OpenAI", 20 * MB, None, 32 * MB, 100, 50 * MB)


def check_limits(block: MediaBlock, limits: Limits | None, where: str) -> None:
    """Raise :class:`~elelem.errors.AttachmentTooLargeError` when an inline
    image or document of ``block`` exceeds ``limits`` (nothing is sent)."""
    if limits is None or not isinstance(block.source, BytesSource):
        return
    size = block.source.blob.size
    name = block.name or ("image" if isinstance(block, ImageBlock) else "document")
    said = (
        f"{where}: image {name}" if isinstance(block, ImageBlock) else f"{where}: document {name}"
    )
    takes = f"{limits.provider} takes"
    if isinstance(block, ImageBlock):
        _refuse_over(
            size,
            limits.image_bytes,
            lambda limit: f"{said} is {size:,} bytes; {takes} images up to {limit:,} bytes",
        )
        side = max(block.width or 0, block.height or 0)
        _refuse_over(
            side,
            limits.image_pixels,
            lambda limit: (
                f"{said} is {block.width}×{block.height} px; {takes} images up to {limit} px a side"
            ),
        )
        return
    _refuse_over(
        size,
        limits.document_bytes,
        lambda limit: f"{said} is {size:,} bytes; {takes} documents up to {limit:,} bytes",
    )
    pages = block.pages or 0
    _refuse_over(
        pages,
        limits.document_pages,
        lambda limit: f"{said} has {pages} pages; {takes} documents of up to {limit} pages",
    )


def _refuse_over(size: int, limit: int | None, message: Callable[[int], str]) -> None:
    # The message is made only when it is raised: most blocks are within limits.
    if limit is not None and size > limit:
        raise AttachmentTooLargeError(message(limit), limit=limit, size=size)


def check_request(messages: Iterable[Message], limits: Limits) -> None:
    """Raise :class:`~elelem.errors.AttachmentTooLargeError` when the inline
    images and documents of ``messages``, as the base64 the wire carries,
    exceed the provider's request size (nothing is sent)."""
    if limits.request_bytes is None:
        return
    total = 0
    for message in messages:
        for part in message.content:
            inner = part.attachments or () if isinstance(part, ToolResultBlock) else (part,)
            for block in inner:
                if isinstance(block, (ImageBlock, DocumentBlock)) and isinstance(
                    block.source, BytesSource
                ):
                    total += (block.source.blob.size + 2) // 3 * 4
    if total > limits.request_bytes:
        raise AttachmentTooLargeError(
            f"the request's images and documents take {total:,} bytes as base64;"
            f" {limits.provider} takes requests of up to {limits.request_bytes:,} bytes",
            limit=limits.request_bytes,
            size=total,
        )


def data_url(block: MediaBlock) -> str:
    """``data:{media_type};base64,{bytes}`` of a block of bytes."""
    assert isinstance(block.source, BytesSource)
    return f"data:{block.media_type};base64,{block.source.blob.base64()}"


def file_id(block: MediaBlock, provider: str) -> str | None:
    """The provider file id of ``block`` when it is ``provider``'s file, else None."""
    source = block.source
    if isinstance(source, FileSource) and source.file.provider == provider:
        return source.id
    return None


def media_kind(block: MediaBlock | AudioBlock) -> str:
    """``image``, ``document`` or ``audio``: the ``what`` of a drop record."""
    if isinstance(block, AudioBlock):
        return "audio"
    return "image" if isinstance(block, ImageBlock) else "document"


def check_audio(block: AudioBlock, limit: int | None, provider: str, where: str) -> None:
    """Raise :class:`~elelem.errors.AttachmentTooLargeError` when inline
    audio is over ``provider``'s documented ``limit`` (nothing is sent)."""
    source = block.source
    if limit is None or not isinstance(source, BytesSource) or source.blob.size <= limit:
        return
    size = source.blob.size
    raise AttachmentTooLargeError(
        f"{where}: audio {block.name or 'of bytes'} is {size:,} bytes; {provider} takes audio"
        f" up to {limit:,} bytes inline",
        limit=limit,
        size=size,
    )


# --------------------------------------------------------------------------
# documents of a request, as providers number them
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class DocumentRef:
    """One document of a request: where it is and what it is."""

    message: int
    block: int
    document: DocumentBlock


@dataclass(frozen=True)
class RequestDocuments:
    """The documents and the search results of a request, each in order."""

    documents: tuple[DocumentRef, ...] = ()
    search_results: tuple[DocumentRef, ...] = ()


def nonnegative_int(value: object) -> int | None:
    """``value`` when it is an int (not a bool) of at least 0: a wire's index or offset."""
    return value if type(value) is int and value >= 0 else None


def request_documents(messages: tuple[Message, ...]) -> RequestDocuments:
    """The documents of ``messages`` in request order, each with the index of
    its message in ``messages`` and of its block there (those inside tool
    results count at the tool result's block), search results apart: the
    numbering of Anthropic's ``document_index`` and ``search_result_index``
    and Bedrock's ``documentIndex``."""
    documents: list[DocumentRef] = []
    results: list[DocumentRef] = []
    for i, message in enumerate(messages):
        for j, part in enumerate(message.content):
            inner = part.attachments or () if isinstance(part, ToolResultBlock) else (part,)
            for block in inner:
                if not isinstance(block, DocumentBlock):
                    continue
                ref = DocumentRef(i, j, block)
                (results if isinstance(block.source, SearchResultSource) else documents).append(ref)
    return RequestDocuments(tuple(documents), tuple(results))


# --------------------------------------------------------------------------
# what every wire's spelling of an image or a document uses
# --------------------------------------------------------------------------

Report = Callable[[str, str, str], None]
"""Records one drop: ``(what, why, detail)`` (``why`` a drop reason code:
``unsupported``, ``foreign-payload``)."""


def line_report(drops: list[Drop], where: str) -> Report:
    """A :data:`Report` appending one :class:`~elelem.vocabulary.Drop` at ``where`` to ``drops``."""
    return lambda what, why, detail: drops.append(Drop(where, what, why, detail))


MediaEncoder = Callable[[Any, str, str, Report], Any]
"""A wire's spelling of a built-in block: ``(block, provider, where,
report)`` -> the part, or None with the drop reported (each shape's
``media.encode_media``)."""


def register_media(shape: str, **encoders: MediaEncoder) -> None:
    """Register ``shape``'s spelling of the built-in blocks (``image=``,
    ``document=``, ``audio=``) as their block mappings, the path a plugin's
    block takes (:func:`~elelem.vocabulary.register_block_mapping`).

    Each mapping spells the block at a :class:`~elelem.vocabulary.drop.BlockSite`
    with the site's drops reported at its ``where``; called with a bare
    provider name (a plugin's two-argument form) it spells nothing, since the
    drops would have nowhere to go."""
    for tag, encode in encoders.items():
        register_block_mapping(tag, encoders={shape: _site_mapping(encode)})


def _site_mapping(encode: MediaEncoder) -> Callable[[Any, str], Any]:
    def mapping(block: Any, site: str) -> Any:
        if not isinstance(site, BlockSite):
            return None
        return encode(block, site, site.where, line_report(site.dropped, site.where))

    return mapping


def document_text(block: DocumentBlock) -> str | None:
    """A document given as text, as the text a wire without document parts
    receives: ``<document title="…">`` … ``</document>`` (the context first);
    None for a PDF or a reference."""
    text = block.text
    if text is None:
        return None
    name = block.name
    head = f'<document title="{name}">' if name else "<document>"
    context = f"{block.context}\n\n" if block.context else ""
    return f"{head}\n{context}{text}\n</document>"


def foreign_file(block: MediaBlock | AudioBlock, provider: str, report: Report) -> bool:
    """Whether ``block`` is a file uploaded to another provider (reported as a drop)."""
    source = block.source
    if isinstance(source, FileSource) and source.file.provider != provider:
        report(
            media_kind(block),
            FOREIGN_PAYLOAD,
            f"a {source.file.provider} file id cannot be sent to {provider}",
        )
        return True
    return False


def source_kind(block: MediaBlock | AudioBlock) -> str:
    """How ``block``'s bytes are given, for messages (``type image/png``, ``URL``, …)."""
    source = block.source
    if isinstance(source, BytesSource):
        return f"type {block.media_type}"
    if isinstance(source, URLSource):
        return "URL"
    if isinstance(source, FileSource):
        return "provider file"
    return "this source"


# --------------------------------------------------------------------------
# images coming back
# --------------------------------------------------------------------------

GENERATED_BY = "generated_by"
"""The payload format on a generated image naming the hosted call that made
it (``{"id": …}``): native replay puts the bytes back into that call's item."""


def _base64(encoded: object) -> bytes | None:
    """The bytes of base64 text ``encoded``; None for anything else."""
    if not isinstance(encoded, str) or not encoded:
        return None
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return None


def joined_base64(pieces: Sequence[str]) -> str:
    """Base64 text that arrived in pieces, as one base64 text.

    A stream may cut one base64 text anywhere (the pieces join), or encode
    each piece on its own, padding and all (Chat Completions'
    ``delta.audio.data``, as other clients decode it piece by piece): then
    the joined text is no base64, and the bytes are each piece's decoded in
    turn.  Where both readings hold they give the same bytes."""
    joined = "".join(pieces)
    if len(pieces) < 2 or _base64(joined) is not None:
        return joined
    decoded = [_base64(piece) for piece in pieces if piece]
    if any(data is None for data in decoded):
        return joined  # no base64 either way: the caller keeps it as it came
    return base64.b64encode(b"".join(d for d in decoded if d is not None)).decode("ascii")


def generated_image(
    encoded: object,
    media_type: str | None,
    payloads: Iterable[ProviderPayload] = (),
) -> dict[str, Any] | None:
    """The raw JSON of an :class:`~elelem.vocabulary.ImageBlock` holding the
    base64 bytes ``encoded`` (for a ``block-start`` chunk: the assembler
    builds the block and its blob from it), with the pixel size and, when
    ``media_type`` is not given, the type read from the bytes; None when
    ``encoded`` is not base64 of an image (the caller keeps the data as it
    came)."""
    data = _base64(encoded)
    if data is None:
        return None
    kind = media_type or sniff_media_type(data)
    if kind is None or not kind.startswith("image/"):
        return None
    size = image_size(data)
    return {
        "type": "image",
        "source": {"kind": "bytes", "blob": {"base64": encoded}},
        "media_type": kind,
        "width": size[0] if size else None,
        "height": size[1] if size else None,
        "payloads": [msgspec.to_builtins(p) for p in payloads],
    }


def generated_audio(
    encoded: object,
    media_type: str | None,
    transcript: str | None = None,
    payloads: Iterable[ProviderPayload] = (),
) -> dict[str, Any] | None:
    """The raw JSON of an :class:`~elelem.vocabulary.AudioBlock` holding the
    base64 bytes ``encoded`` (for a ``block-start`` chunk, as
    :func:`generated_image`), its type read from the bytes when not given
    (``audio/pcm`` for raw samples) and a WAV's duration; None when
    ``encoded`` is not base64 (the caller keeps the data as it came)."""
    data = _base64(encoded)
    if data is None:
        return None
    kind = media_type or audio_media_type(data) or "audio/pcm"
    if not kind.startswith("audio/"):
        return None
    return {
        "type": "audio",
        "source": {"kind": "bytes", "blob": {"base64": encoded}},
        "media_type": kind,
        "duration": wav_duration(data),
        "transcript": transcript,
        "payloads": [msgspec.to_builtins(p) for p in payloads],
    }


def generated_by(block: ImageBlock, provider: str) -> str | None:
    """The id of ``provider``'s hosted call that generated ``block``, if any."""
    for payload in block.payloads:
        if payload.provider == provider and payload.format == GENERATED_BY:
            value = payload.value
            found = value.get("id") if isinstance(value, dict) else None
            if isinstance(found, str):
                return found
    return None
