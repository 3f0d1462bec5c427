"""Gemini grounding: ``groundingSupports`` (and the Interactions API's
``url_citation`` annotations) -> attributions, and the metadata of a grounded
response -> hosted activity.

A support's ``segment`` gives UTF-8 *byte* offsets over the whole response
text (every non-thought text part, in order); an attribution range is in
code points over one text block.  Each range is converted, then verified by
slicing: the slice must decode cleanly and equal ``segment.text``.  A range
that fails is realigned by its text where the block holds ``segment.text``
(the occurrence nearest the offsets the wire gave; the replay payload says
``"realigned": "segment.text"``), and else dropped (the attribution keeps its
source and the raw support, with no range) rather than stored stale.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from elelem.shapes.common import wire_int
from elelem.vocabulary import (
    ActivityId,
    Attribution,
    HostedActivity,
    ProviderId,
    ProviderPayload,
    Source,
)


def code_point_range(
    block: bytes, block_start: int, segment: Mapping[str, Any]
) -> tuple[int, int] | None:
    """The code-point span in a text block of a byte-offset ``segment``, or None.

    ``block`` is the block's UTF-8 text and ``block_start`` its byte offset in
    the whole response text.  None when the segment lies outside the block,
    cuts a character in two, or its slice differs from ``segment.text``.
    """
    start = wire_int(segment.get("startIndex")) - block_start
    end = wire_int(segment.get("endIndex")) - block_start
    found = utf8_slice(block, start, end)
    if found is None:
        return None
    first, inside = found
    expected = segment.get("text")
    if isinstance(expected, str) and expected != inside:
        return None
    return (first, first + len(inside))


def utf8_slice(data: bytes, start: int, end: int) -> tuple[int, str] | None:
    """The UTF-8 bytes ``data[start:end]`` in code points: how many stand
    before them, and the text they hold; None when the span lies outside
    ``data`` or cuts a character in two (the Gemini API's offsets, in
    ``groundingSupports`` and in the Interactions API's annotations)."""
    if not 0 <= start <= end <= len(data):
        return None
    try:
        before = data[:start].decode("utf-8")
        inside = data[start:end].decode("utf-8")
    except UnicodeDecodeError:
        return None
    return len(before), inside


def realigned_range(
    block: bytes, block_start: int, segment: Mapping[str, Any]
) -> tuple[int, int] | None:
    """The code-point span of ``segment.text`` in the block, where its
    offsets did not hold it: the occurrence nearest the start the wire gave
    (recorders and servers have been seen off by a few bytes), or None when
    the block does not hold that text."""
    expected = segment.get("text")
    if not isinstance(expected, str) or not expected:
        return None
    text = block.decode("utf-8")
    claimed = len(
        block[: max(0, wire_int(segment.get("startIndex")) - block_start)].decode("utf-8", "ignore")
    )
    found, at = None, text.find(expected)
    while at != -1:
        if found is None or abs(at - claimed) < abs(found - claimed):
            found = at
        at = text.find(expected, at + 1)
    return None if found is None else (found, found + len(expected))


def chunk_source(chunk: Mapping[str, Any]) -> tuple[Source, str | None]:
    """The source of one ``groundingChunks`` entry and its source-side excerpt.

    ``web`` chunks carry ``uri`` and ``title``; ``retrievedContext`` (file
    search, RAG) carries its ``text``, which is the excerpt, and a title or
    store name; ``maps`` chunks a ``uri`` and ``title``.
    """
    for kind in ("web", "retrievedContext", "maps", "image"):
        body = chunk.get(kind)
        if not isinstance(body, Mapping):
            continue
        uri = body.get("uri")
        title = body.get("title")
        if not isinstance(title, str):
            store = body.get("fileSearchStore") or body.get("documentName")
            title = store if isinstance(store, str) else None
        text = body.get("text")
        return (
            Source(url=uri if isinstance(uri, str) else None, title=title),
            text if isinstance(text, str) else None,
        )
    return Source(), None


def support_attributions(
    provider: ProviderId,
    metadata: Mapping[str, Any],
    block: bytes,
    block_start: int,
) -> list[Attribution]:
    """The attributions of every support whose segment starts inside the block.

    One attribution per (support, cited chunk).  Its ``replay`` payload keeps
    the raw support, the chunk index it stands for, and the raw chunk.
    """
    chunks = metadata.get("groundingChunks")
    chunks = chunks if isinstance(chunks, list) else []
    supports = metadata.get("groundingSupports")
    out: list[Attribution] = []
    for support in supports if isinstance(supports, list) else []:
        if not isinstance(support, Mapping):
            continue
        segment = support.get("segment")
        segment = segment if isinstance(segment, Mapping) else {}
        start = wire_int(segment.get("startIndex"))
        if not block_start <= start < block_start + len(block):
            continue
        span = code_point_range(block, block_start, segment)
        realigned = False
        if span is None:
            span = realigned_range(block, block_start, segment)
            realigned = span is not None
        indices = support.get("groundingChunkIndices")
        for index in indices if isinstance(indices, list) else []:
            n = wire_int(index, -1)
            raw_chunk = chunks[n] if 0 <= n < len(chunks) else None
            source, excerpt = (
                chunk_source(raw_chunk) if isinstance(raw_chunk, Mapping) else (Source(), None)
            )
            value = {"support": dict(support), "chunk_index": n, "chunk": raw_chunk}
            if realigned:
                value["realigned"] = "segment.text"
            out.append(
                Attribution(
                    source=source,
                    excerpt=excerpt,
                    range=span,
                    replay=ProviderPayload(provider, "grounding_support", None, value),
                )
            )
    return out


def search_activity(
    provider: ProviderId, activity_id: str, metadata: Mapping[str, Any]
) -> list[HostedActivity]:
    """The web search a grounded response ran: started with its queries, then
    completed with ``N sources``; the raw metadata is the payload.  Empty
    when the metadata names no search queries."""
    queries = metadata.get("webSearchQueries")
    if not isinstance(queries, list) or not queries:
        return []
    chunks = metadata.get("groundingChunks")
    count = len(chunks) if isinstance(chunks, list) else 0
    payload = ProviderPayload(provider, "grounding_metadata", None, dict(metadata))
    started = HostedActivity(
        id=ActivityId(activity_id),
        name="web_search",
        state="started",
        input={"queries": list(queries)},
    )
    noun = "source" if count == 1 else "sources"
    return [started, started.transition("completed", summary=f"{count} {noun}", payload=payload)]


_FETCHED = "URL_RETRIEVAL_STATUS_SUCCESS"


def fetch_activity(
    provider: ProviderId, activity_id: str, metadata: Mapping[str, Any]
) -> list[HostedActivity]:
    """The URL fetches a response made (``urlContextMetadata``): started with
    the URLs, completed when any fetch succeeded, else failed."""
    entries = metadata.get("urlMetadata")
    if not isinstance(entries, list) or not entries:
        return []
    urls = [e.get("retrievedUrl") for e in entries if isinstance(e, Mapping)]
    ok = [e for e in entries if isinstance(e, Mapping) and e.get("urlRetrievalStatus") == _FETCHED]
    started = HostedActivity(
        id=ActivityId(activity_id),
        name="web_fetch",
        state="started",
        input={"urls": [u for u in urls if isinstance(u, str)]},
    )
    hosts = [_host(e.get("retrievedUrl")) for e in ok]
    summary = f"fetched {', '.join(hosts)}" if ok else f"{len(entries)} fetch(es) failed"
    payload = ProviderPayload(provider, "url_context_metadata", None, dict(metadata))
    return [
        started,
        started.transition("completed" if ok else "failed", summary=summary, payload=payload),
    ]


def _host(url: object) -> str:
    if not isinstance(url, str):
        return "?"
    return urlsplit(url).hostname or url


def has_supports(metadata: Mapping[str, Any] | None) -> bool:
    """True when ``metadata`` holds at least one grounding support."""
    if metadata is None:
        return False
    supports = metadata.get("groundingSupports")
    return isinstance(supports, Sequence) and len(supports) > 0


def annotation_attribution(
    provider: ProviderId, text: str, annotation: Mapping[str, Any]
) -> Attribution:
    """An attribution for one ``url_citation`` annotation of ``text``.

    Offsets are UTF-8 bytes, as in ``groundingSupports``; the range is kept
    only when the byte span lies in the text and cuts no character.
    """
    data = text.encode("utf-8")
    start, end = annotation.get("start_index"), annotation.get("end_index")
    span: tuple[int, int] | None = None
    if isinstance(start, int) and isinstance(end, int):
        found = utf8_slice(data, start, end)
        if found is not None:
            span = (found[0], found[0] + len(found[1]))
    url, title = annotation.get("url"), annotation.get("title")
    return Attribution(
        source=Source(
            url=url if isinstance(url, str) else None,
            title=title if isinstance(title, str) else None,
        ),
        range=span,
        replay=ProviderPayload(provider, "annotation", None, dict(annotation)),
    )


__all__ = [
    "annotation_attribution",
    "chunk_source",
    "code_point_range",
    "fetch_activity",
    "has_supports",
    "search_activity",
    "support_attributions",
    "utf8_slice",
]
