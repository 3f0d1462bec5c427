"""The sources of one assistant message, numbered as the footnotes are, as
UI message stream ``source-url`` / ``source-document`` chunks.

An http(s) URL is a ``source-url``; a document of the conversation, or a URL
that is not http(s), a ``source-document`` (a title, never a link).
"""

from __future__ import annotations

from typing import Any

from elelem.render.sanitize import safe_url, url_scheme
from elelem.vocabulary import Attribution, DocumentLocation

UIChunk = dict[str, Any]

DOCUMENT_MEDIA_TYPE = "application/octet-stream"
"""The ``mediaType`` of a ``source-document`` whose document type the
citation does not name (the protocol requires one)."""


class Sources:
    """Numbers the distinct sources of one message, as the footnotes do."""

    def __init__(self) -> None:
        self._ids: dict[tuple[str, str], str] = {}
        self.chunks: dict[str, UIChunk] = {}  # source id -> its source chunk

    def cite(self, attribution: Attribution, out: list[UIChunk]) -> str:
        url = attribution.source.url or ""
        title = attribution.source.title
        document = document_location(attribution)
        if document is not None:
            # One source per document of the conversation, as the footnotes number them.
            key = ("", f"{title or ''}\x00{document.index}\x00{document.unit}")
        else:
            key = (url, "" if url else title or "")
        source_id = self._ids.get(key)
        if source_id is not None:
            return source_id
        source_id = f"source-{len(self._ids) + 1}"
        self._ids[key] = source_id
        link = safe_url(url) if url else None
        if link is not None:
            chunk: UIChunk = {"type": "source-url", "sourceId": source_id, "url": link}
            if title:
                chunk["title"] = title
        else:
            # A document, or a URL that is not http(s): a title, never a link.
            if not title:
                if document is not None:
                    title = f"document {document.index + 1}"
                else:
                    title = f"(link removed: {_scheme(url)})" if url else "(untitled)"
            chunk = {
                "type": "source-document",
                "sourceId": source_id,
                "mediaType": DOCUMENT_MEDIA_TYPE,
                "title": title,
            }
        out.append(chunk)
        self.chunks[source_id] = chunk
        return source_id


def document_location(attribution: Attribution) -> DocumentLocation | None:
    """Where in a document of the conversation ``attribution`` points, or None."""
    found = attribution.source.document
    if isinstance(found, DocumentLocation) and not attribution.source.url:
        return found
    return None


def _scheme(url: str) -> str:
    return url_scheme(url) or "unsupported"


__all__ = ["DOCUMENT_MEDIA_TYPE", "Sources", "document_location"]
