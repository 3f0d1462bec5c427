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

import base64
import binascii
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from elelem.errors import AttachmentTooLargeError
from elelem.vocabulary import (
    Attribution,
    BytesSource,
    ChunksSource,
    DocumentBlock,
    DocumentLocation,
    Drop,
    FileSource,
    ImageBlock,
    Message,
    ProviderId,
    ProviderPayload,
    SearchResultSource,
    Source,
    TextSource,
    ToolResultBlock,
    URLSource,
)
from elelem.vocabulary.drop import FOREIGN_PAYLOAD, UNSUPPORTED
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


LIMITS: dict[str, Limits] = {
    # Anthropic: 5 MB per image (API), 8000×8000 px; PDFs 32 MB and 100 pages;
    # a Messages request of at most 32 MB.
    "anthropic": Limits("Anthropic", 5 * MB, 8000, 32 * MB, 100, 32 * MB),
    # OpenAI: 20 MB per image; a file input up to 32 MB (and 100 pages); a
    # request's inputs up to 50 MB.
    "openai": Limits("OpenAI", 20 * MB, None, 32 * MB, 100, 50 * MB),
    # Gemini: inline data up to 20 MB per request (larger goes through the File API).
    "gemini": Limits("Gemini", 20 * MB, None, 20 * MB, 1000, 20 * MB),
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


# --------------------------------------------------------------------------
# each wire's spelling of an image or a document
# --------------------------------------------------------------------------

Report = Callable[[str, str, str], None]
"""Records one drop: ``(what, why, detail)`` (``why`` a drop reason code:
``unsupported``, ``foreign-payload``)."""


def line_report(drops: list[Drop], where: str) -> Report:
    """A :data:`Report` appending one :class:`~elelem.vocabulary.Drop` at ``where`` to ``drops``."""
    return lambda what, why, detail: drops.append(Drop(where, what, why, detail))


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


def _foreign_file(block: MediaBlock, provider: str, report: Report) -> bool:
    source = block.source
    if isinstance(source, FileSource) and source.file.provider != provider:
        report(
            media_kind(block),
            FOREIGN_PAYLOAD,
            f"a {source.file.provider} file id cannot be sent to {provider}",
        )
        return True
    return False


def _source_kind(block: MediaBlock) -> str:
    source = block.source
    if isinstance(source, BytesSource):
        return f"type {block.media_type}"
    if isinstance(source, URLSource):
        return "URL"
    if isinstance(source, FileSource):
        return "provider file"
    return "this source"


def anthropic_media(
    block: MediaBlock, provider: str, where: str, report: Report
) -> dict[str, Any] | None:
    """The Anthropic Messages content block of an image or a document (None
    when it cannot go, reported): ``image`` / ``document`` with a base64,
    url, file, text or content source and ``citations.enabled``, or a
    ``search_result``."""
    if _foreign_file(block, provider, report):
        return None
    check_limits(block, LIMITS["anthropic"], where)
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
        report("document", UNSUPPORTED, f"Anthropic takes no document of {_source_kind(block)}")
        return None
    out: dict[str, Any] = {"type": "document", "source": doc}
    if block.title:
        out["title"] = block.title
    if block.context:
        out["context"] = block.context
    if block.citations:
        out["citations"] = {"enabled": True}
    return out


def responses_media(
    block: MediaBlock, provider: str, where: str, report: Report
) -> dict[str, Any] | None:
    """The OpenAI Responses input part of an image (``input_image``: data URL
    or URL, ``detail``; or ``file_id``) or a document (``input_file``:
    ``file_data``/``file_url``/``file_id``, ``filename``; text documents as
    ``input_text``)."""
    if _foreign_file(block, provider, report):
        return None
    check_limits(block, LIMITS["openai"], where)
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
    report("document", UNSUPPORTED, f"OpenAI Responses takes no document of {_source_kind(block)}")
    return None


def chat_media(
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
    if _foreign_file(block, provider, report):
        return None
    source = block.source
    if isinstance(block, ImageBlock):
        if not images:
            report("image", UNSUPPORTED, f"the {dialect} chat dialect takes no images")
            return None
        check_limits(block, LIMITS["openai"], where)
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
        check_limits(block, LIMITS["openai"], where)
        name = block.filename or block.title or "document.pdf"
        return {"type": "file", "file": {"filename": name, "file_data": data_url(block)}}
    if files and isinstance(source, FileSource):
        return {"type": "file", "file": {"file_id": source.id}}
    why = "files" if not files else f"documents of {_source_kind(block)}"
    report("document", UNSUPPORTED, f"the {dialect} chat dialect takes no {why}")
    return None


def gemini_media(
    block: MediaBlock, provider: str, where: str, report: Report
) -> dict[str, Any] | None:
    """The Gemini part of an image or document: ``inlineData`` for bytes,
    ``fileData`` for a URL or a Gemini file; text documents as ``text``."""
    if _foreign_file(block, provider, report):
        return None
    check_limits(block, LIMITS["gemini"], where)
    source = block.source
    text = document_text(block) if isinstance(block, DocumentBlock) else None
    if text is not None:
        return {"text": text}
    if isinstance(source, BytesSource):
        return {"inlineData": {"mimeType": block.media_type, "data": source.blob.base64()}}
    if isinstance(source, URLSource):
        uri = source.url
    elif isinstance(source, FileSource):
        uri = source.id
    else:
        report("document", UNSUPPORTED, f"Gemini takes no document of {_source_kind(block)}")
        return None
    media_type = block.media_type or (
        "application/pdf" if isinstance(block, DocumentBlock) else "image/jpeg"
    )
    return {"fileData": {"mimeType": media_type, "fileUri": uri}}


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


def bedrock_media(
    block: MediaBlock, provider: str, where: str, report: Report, index: int = 0
) -> dict[str, Any] | None:
    """The Bedrock Converse content block of an image or a document (bytes
    as base64, text documents as ``text``/``content`` sources,
    ``citations.enabled``); URLs and provider files are reported."""
    source = block.source
    kind = media_kind(block)
    if isinstance(source, (URLSource, FileSource)):
        report(kind, UNSUPPORTED, f"Bedrock Converse takes no {kind} by {_source_kind(block)}")
        return None
    check_limits(block, LIMITS["bedrock"], where)
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


def ollama_media(block: MediaBlock, where: str, report: Report) -> tuple[str | None, str | None]:
    """What Ollama's native chat takes of an image or a document: ``(image,
    text)``, an image's base64 for the message's ``images`` or a text
    document's text; PDFs, URLs and files are reported."""
    source = block.source
    if isinstance(block, DocumentBlock):
        text = document_text(block)
        if text is None:
            report("document", UNSUPPORTED, f"Ollama takes no document of {_source_kind(block)}")
        return None, text
    if not isinstance(source, BytesSource):
        report(
            "image", UNSUPPORTED, f"Ollama takes images as bytes only, not by {_source_kind(block)}"
        )
        return None, None
    return source.blob.base64(), None


# --------------------------------------------------------------------------
# images coming back
# --------------------------------------------------------------------------

GENERATED_BY = "generated_by"
"""The payload format on a generated image naming the hosted call that made
it (``{"id": …}``): native replay puts the bytes back into that call's item."""


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
    if not isinstance(encoded, str) or not encoded:
        return None
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
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


def generated_by(block: ImageBlock, provider: str) -> str | None:
    """The id of ``provider``'s hosted call that generated ``block``, if any."""
    for payload in block.payloads:
        if payload.provider == provider and payload.format == GENERATED_BY:
            value = payload.value
            found = value.get("id") if isinstance(value, dict) else None
            if isinstance(found, str):
                return found
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
    index, start, end = (_int(where.get(k)) for k in ("documentIndex", "start", "end"))
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


__all__ = [
    "BEDROCK_DOCUMENT_FORMATS",
    "BEDROCK_IMAGE_FORMATS",
    "GENERATED_BY",
    "LIMITS",
    "DocumentRef",
    "Limits",
    "MediaBlock",
    "Report",
    "RequestDocuments",
    "anthropic_document_source",
    "anthropic_media",
    "bedrock_attribution",
    "bedrock_citation",
    "bedrock_document_name",
    "bedrock_media",
    "chat_media",
    "check_limits",
    "check_request",
    "data_url",
    "document_text",
    "file_id",
    "gemini_media",
    "generated_by",
    "generated_image",
    "line_report",
    "media_kind",
    "ollama_media",
    "request_documents",
    "responses_generated_image",
    "responses_media",
    "restore_generated",
]
