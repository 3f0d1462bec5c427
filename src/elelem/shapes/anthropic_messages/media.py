"""Images, documents and search results on the Anthropic Messages wire, and
its citations into the documents of a request.

What the wires share is :mod:`elelem.shapes.media`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from elelem.shapes.media import (
    MB,
    Limits,
    MediaBlock,
    Report,
    RequestDocuments,
    check_limits,
    foreign_file,
    nonnegative_int,
    source_kind,
)
from elelem.vocabulary import (
    BytesSource,
    ChunksSource,
    DocumentLocation,
    FileSource,
    ImageBlock,
    SearchResultSource,
    Source,
    URLSource,
)
from elelem.vocabulary.drop import UNSUPPORTED

# Anthropic: 5 MB per image (API), 8000×8000 px; PDFs 32 MB and 100 pages;
# a Messages request of at most 32 MB.
LIMITS = Limits("Anthropic", 5 * MB, 8000, 32 * MB, 100, 32 * MB)
"""Anthropic's documented limits on inline images and documents."""


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
    index, start, end = (nonnegative_int(citation.get(k)) for k in (index_key, start_key, end_key))
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


def encode_media(
    block: MediaBlock, provider: str, where: str, report: Report
) -> dict[str, Any] | None:
    """The Anthropic Messages content block of an image or a document (None
    when it cannot go, reported): ``image`` / ``document`` with a base64,
    url, file, text or content source and ``citations.enabled``, or a
    ``search_result``."""
    if foreign_file(block, provider, report):
        return None
    check_limits(block, LIMITS, where)
    source = block.source
    if isinstance(block, ImageBlock):
        if isinstance(source, BytesSource):
            wire = {"type": "base64", "media_type": block.media_type, "data": source.blob.base64()}
        elif isinstance(source, URLSource):
            wire = {"type": "url", "url": source.url}
        else:
            assert isinstance(source, FileSource)
            wire = {"type": "file", "file_id": source.id}
        return {"type": "image", "source": wire}
    if isinstance(source, SearchResultSource):
        return {
            "type": "search_result",
            "source": source.source,
            "title": block.title or source.source,
            "content": [{"type": "text", "text": chunk} for chunk in source.chunks],
            "citations": {"enabled": block.citations},
        }
    doc: dict[str, Any]
    if isinstance(source, BytesSource) and block.media_type == "application/pdf":
        doc = {"type": "base64", "media_type": "application/pdf", "data": source.blob.base64()}
    elif isinstance(source, URLSource):
        doc = {"type": "url", "url": source.url}
    elif isinstance(source, FileSource):
        doc = {"type": "file", "file_id": source.id}
    elif isinstance(source, ChunksSource):
        doc = {"type": "content", "content": [{"type": "text", "text": c} for c in source.chunks]}
    elif block.text is not None:
        doc = {"type": "text", "media_type": "text/plain", "data": block.text}
    else:
        report("document", UNSUPPORTED, f"Anthropic takes no document of {source_kind(block)}")
        return None
    out: dict[str, Any] = {"type": "document", "source": doc}
    if block.title:
        out["title"] = block.title
    if block.context:
        out["context"] = block.context
    if block.citations:
        out["citations"] = {"enabled": True}
    return out
