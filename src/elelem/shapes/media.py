"""Images and documents on the wires: what every shape shares.

- the documented size limits of each provider, checked before anything is
  sent (:func:`check_limits`), an :class:`~elelem.errors.AttachmentTooLargeError`
  naming the limit;
- data URLs and base64 of a block's bytes;
- the documents of a request in the order a provider numbers them
  (:func:`request_documents`), so a citation's ``document_index`` names
  the message and block that hold the document (:func:`document_location`).

Sans-IO like every shape: the bytes are in the blocks (resolved from the
blob store by the conversation layer before encoding).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from elelem.errors import AttachmentTooLargeError
from elelem.vocabulary import (
    BytesSource,
    DocumentBlock,
    DocumentLocation,
    FileSource,
    ImageBlock,
    Message,
    SearchResultSource,
    Source,
    ToolResultBlock,
)

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


LIMITS: dict[str, Limits] = {
    # Anthropic: 5 MB per image (API), 8000×8000 px; PDFs 32 MB and 100 pages.
    "anthropic": Limits("Anthropic", 5 * MB, 8000, 32 * MB, 100),
    # OpenAI: 20 MB per image; a file input up to 32 MB (and 100 pages).
    "openai": Limits("OpenAI", 20 * MB, None, 32 * MB, 100),
    # Gemini: inline data up to 20 MB per request (larger goes through the File API).
    "gemini": Limits("Gemini", 20 * MB, None, 20 * MB, 1000),
    # Bedrock Converse: an image up to 3.75 MB and 8000 px; a document up to 4.5 MB.
    "bedrock": Limits("Bedrock", 3_932_160, 8000, 4_718_592, None),
    # Ollama: no documented limit.
    "ollama": Limits("Ollama"),
}


def check_limits(block: MediaBlock, limits: Limits | None, where: str) -> None:
    """Raise :class:`~elelem.errors.AttachmentTooLargeError` when an inline
    image or document of ``block`` exceeds ``limits`` (nothing is sent)."""
    if limits is None or not isinstance(block.source, BytesSource):
        return
    size = block.source.blob.size
    name = block.name or ("image" if isinstance(block, ImageBlock) else "document")
    if isinstance(block, ImageBlock):
        if limits.image_bytes is not None and size > limits.image_bytes:
            raise AttachmentTooLargeError(
                f"{where}: image {name} is {size:,} bytes; {limits.provider} takes images"
                f" up to {limits.image_bytes:,} bytes",
                limit=limits.image_bytes,
                size=size,
            )
        side = max(block.width or 0, block.height or 0)
        if limits.image_pixels is not None and side > limits.image_pixels:
            raise AttachmentTooLargeError(
                f"{where}: image {name} is {block.width}×{block.height} px; {limits.provider}"
                f" takes images up to {limits.image_pixels} px a side",
                limit=limits.image_pixels,
                size=side,
            )
        return
    if limits.document_bytes is not None and size > limits.document_bytes:
        raise AttachmentTooLargeError(
            f"{where}: document {name} is {size:,} bytes; {limits.provider} takes documents"
            f" up to {limits.document_bytes:,} bytes",
            limit=limits.document_bytes,
            size=size,
        )
    pages = block.pages or 0
    if limits.document_pages is not None and pages > limits.document_pages:
        raise AttachmentTooLargeError(
            f"{where}: document {name} has {pages} pages; {limits.provider} takes documents"
            f" of up to {limits.document_pages} pages",
            limit=limits.document_pages,
            size=pages,
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


def media_kind(block: MediaBlock) -> str:
    """``image`` or ``document``: the ``what`` of a drop record."""
    return "image" if isinstance(block, ImageBlock) else "document"


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


_UNITS = {
    "char_location": ("char", "start_char_index", "end_char_index", "document_index"),
    "page_location": ("page", "start_page_number", "end_page_number", "document_index"),
    "content_block_location": (
        "block",
        "start_block_index",
        "end_block_index",
        "document_index",
    ),
    "search_result_location": (
        "block",
        "start_block_index",
        "end_block_index",
        "search_result_index",
    ),
}


def _int(value: object) -> int | None:
    return value if type(value) is int and value >= 0 else None


def anthropic_document_source(
    citation: Mapping[str, Any], documents: RequestDocuments | None
) -> Source | None:
    """The :class:`~elelem.vocabulary.Source` of an Anthropic citation into a
    document of the request (``char_location``, ``page_location``,
    ``content_block_location``, ``search_result_location``), naming the
    document, its title and the location in its own unit; None for any other
    citation type or a location that is not well formed."""
    unit_fields = _UNITS.get(str(citation.get("type")))
    if unit_fields is None:
        return None
    unit, start_key, end_key, index_key = unit_fields
    index, start, end = (_int(citation.get(k)) for k in (index_key, start_key, end_key))
    if index is None or start is None or end is None:
        return None
    search = index_key == "search_result_index"
    refs = () if documents is None else documents.search_results if search else documents.documents
    ref = refs[index] if index < len(refs) else None
    title = citation.get("title" if search else "document_title")
    if not isinstance(title, str) or not title:
        title = ref.document.name if ref is not None else None
    location = DocumentLocation(
        index,
        unit,
        start,
        end,
        ref.message if ref is not None else None,
        ref.block if ref is not None else None,
    )
    # A search result is a document the caller supplied: its ``source`` string
    # stays in the replay payload, the footnote names the result and blocks.
    return Source(title=title, document=location)


__all__ = [
    "LIMITS",
    "DocumentRef",
    "Limits",
    "MediaBlock",
    "RequestDocuments",
    "anthropic_document_source",
    "check_limits",
    "data_url",
    "file_id",
    "media_kind",
    "request_documents",
]
