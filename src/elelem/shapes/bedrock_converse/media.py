"""Images and documents on the Bedrock Converse wire, and its citations
into them (document locations and web citations).

What the wires share is :mod:`elelem.shapes.media`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from elelem.shapes.media import (
    Limits,
    MediaBlock,
    Report,
    RequestDocuments,
    check_limits,
    media_kind,
    nonnegative_int,
    source_kind,
)
from elelem.vocabulary import (
    Attribution,
    AudioBlock,
    BytesSource,
    ChunksSource,
    DocumentBlock,
    DocumentLocation,
    FileSource,
    ImageBlock,
    ProviderId,
    ProviderPayload,
    SearchResultSource,
    Source,
    TextSource,
    URLSource,
)
from elelem.vocabulary.drop import UNSUPPORTED

# Bedrock Converse: an image up to 3.75 MB and 8000 px; a document up to 4.5 MB.
LIMITS = Limits("Bedrock", 3_932_160, 8000, 4_718_592, None)
"""Bedrock's documented limits on inline images and documents."""


BEDROCK_IMAGE_FORMATS = {
    "image/png": "png",
    "image/jpeg": "jpeg",
    "image/gif": "gif",
    "image/webp": "webp",
}


BEDROCK_DOCUMENT_FORMATS = {
    "application/pdf": "pdf",
    "text/plain": "txt",
    "text/markdown": "md",
    "text/csv": "csv",
    "text/html": "html",
}


_BEDROCK_NAME = re.compile(r"[^A-Za-z0-9\s\-\(\)\[\]]")


def bedrock_document_name(block: DocumentBlock, index: int) -> str:
    """A name Bedrock accepts (letters, digits, single spaces, hyphens,
    parentheses, square brackets), from the document's own name."""
    raw = block.name or f"document {index + 1}"
    name = " ".join(_BEDROCK_NAME.sub(" ", raw).split())
    return name[:200] or f"document {index + 1}"


def encode_media(
    block: MediaBlock, provider: str, where: str, report: Report, index: int = 0
) -> dict[str, Any] | None:
    """The Bedrock Converse content block of an image or a document (bytes
    as base64, text documents as ``text``/``content`` sources,
    ``citations.enabled``); URLs and provider files are reported."""
    source = block.source
    kind = media_kind(block)
    if isinstance(source, (URLSource, FileSource)):
        report(kind, UNSUPPORTED, f"Bedrock Converse takes no {kind} by {source_kind(block)}")
        return None
    check_limits(block, LIMITS, where)
    if isinstance(block, ImageBlock):
        assert isinstance(source, BytesSource)
        fmt = BEDROCK_IMAGE_FORMATS.get(block.media_type or "")
        if fmt is None:
            report("image", UNSUPPORTED, f"Bedrock takes no image of type {block.media_type}")
            return None
        return {"image": {"format": fmt, "source": {"bytes": source.blob.base64()}}}
    doc: dict[str, Any]
    if isinstance(source, BytesSource):
        fmt = BEDROCK_DOCUMENT_FORMATS.get(block.media_type or "")
        if fmt is None:
            report("document", UNSUPPORTED, f"Bedrock takes no document of {block.media_type}")
            return None
        doc = {"format": fmt, "name": bedrock_document_name(block, index)}
        doc["source"] = {"bytes": source.blob.base64()}
    elif isinstance(source, TextSource):
        doc = {"format": "txt", "name": bedrock_document_name(block, index)}
        doc["source"] = {"text": source.text}
    else:
        assert isinstance(source, (ChunksSource, SearchResultSource))
        doc = {"format": "txt", "name": bedrock_document_name(block, index)}
        doc["source"] = {"content": [{"text": c} for c in source.chunks]}
    if block.context:
        doc["context"] = block.context
    if block.citations:
        doc["citations"] = {"enabled": True}
    return {"document": doc}


_BEDROCK_LOCATIONS = {
    # Bedrock numbers pages from 1 and chunks from 0, both ends inclusive;
    # characters as a half-open span.  DocumentLocation's end is exclusive.
    "documentChar": ("char", 0),
    "documentPage": ("page", 1),
    "documentChunk": ("block", 1),
}


def bedrock_citation(
    citation: Mapping[str, Any], provider: ProviderId, documents: RequestDocuments | None = None
) -> Attribution | None:
    """The :class:`~elelem.vocabulary.Attribution` of one Bedrock Converse
    document citation (``location.documentChar`` / ``documentPage`` /
    ``documentChunk``), its excerpt the ``sourceContent`` text, the raw
    citation its replay; None for a citation of another kind (see
    :func:`bedrock_attribution`)."""
    location = citation.get("location")
    if not isinstance(location, dict) or len(location) != 1:
        return None
    ((kind, where),) = location.items()
    if kind == "web":
        return _bedrock_web_citation(citation, where, provider)
    unit = _BEDROCK_LOCATIONS.get(kind)
    if unit is None or not isinstance(where, dict):
        return None
    index, start, end = (nonnegative_int(where.get(k)) for k in ("documentIndex", "start", "end"))
    if index is None or start is None or end is None:
        return None
    refs = documents.documents if documents is not None else ()
    ref = refs[index] if index < len(refs) else None
    title = citation.get("title")
    if not isinstance(title, str) or not title:
        title = ref.document.name if ref is not None else None
    excerpt = _source_text(citation)
    return Attribution(
        Source(
            title=title,
            document=DocumentLocation(
                index,
                unit[0],
                start,
                end + unit[1],
                ref.message if ref is not None else None,
                ref.block if ref is not None else None,
            ),
        ),
        excerpt=excerpt or None,
        replay=ProviderPayload(provider, "citation", None, dict(citation)),
    )


def bedrock_attribution(
    citation: Mapping[str, Any], provider: ProviderId, documents: RequestDocuments | None = None
) -> Attribution:
    """The :class:`~elelem.vocabulary.Attribution` of any Bedrock Converse
    citation: :func:`bedrock_citation` where it names a location this module
    reads, else one that keeps what the citation says (its ``title``, its
    ``sourceContent`` as the excerpt), the raw citation its replay either way."""
    known = bedrock_citation(citation, provider, documents)
    if known is not None:
        return known
    title = citation.get("title")
    return Attribution(
        Source(title=title if isinstance(title, str) and title else None),
        excerpt=_source_text(citation) or None,
        replay=ProviderPayload(provider, "citation", None, dict(citation)),
    )


def _source_text(citation: Mapping[str, Any]) -> str:
    """The cited text of a Bedrock citation (its ``sourceContent`` texts)."""
    return "".join(
        str(part.get("text"))
        for part in citation.get("sourceContent") or ()
        if isinstance(part, dict) and isinstance(part.get("text"), str)
    )


def _bedrock_web_citation(
    citation: Mapping[str, Any], where: object, provider: ProviderId
) -> Attribution | None:
    # A web page a server tool found (Nova web grounding): its URL, titled by
    # the citation or the page's domain.  A web location without a URL (seen
    # on document citations) names nothing: the raw citation is kept instead.
    if not isinstance(where, dict) or not isinstance(where.get("url"), str) or not where["url"]:
        return None
    title = citation.get("title")
    if not isinstance(title, str) or not title:
        domain = where.get("domain")
        title = domain if isinstance(domain, str) and domain else None
    excerpt = _source_text(citation)
    return Attribution(
        Source(url=where["url"], title=title),
        excerpt=excerpt or None,
        replay=ProviderPayload(provider, "citation", None, dict(citation)),
    )


BEDROCK_AUDIO_FORMATS = frozenset(
    {"mp3", "opus", "wav", "aac", "flac", "m4a", "ogg", "webm", "pcm"}
)
"""The audio formats Converse's ``AudioBlock`` takes (of elelem's format names)."""


def encode_audio(
    block: AudioBlock, provider: str, where: str, report: Report
) -> dict[str, Any] | None:
    """The Converse ``audio`` block (Nova): bytes as base64, or an ``s3://``
    URI as ``s3Location``; other URLs, provider files and formats Converse
    does not list are reported."""
    source = block.source
    fmt = block.format
    if fmt not in BEDROCK_AUDIO_FORMATS:
        report("audio", UNSUPPORTED, f"Bedrock takes no audio of type {block.media_type}")
        return None
    if isinstance(source, BytesSource):
        return {"audio": {"format": fmt, "source": {"bytes": source.blob.base64()}}}
    if isinstance(source, URLSource) and source.url.startswith("s3://"):
        return {"audio": {"format": fmt, "source": {"s3Location": {"uri": source.url}}}}
    report("audio", UNSUPPORTED, f"Bedrock Converse takes no audio by {source_kind(block)}")
    return None
