"""Citations on Chat Completions text: ``url_citation`` annotations and
Perplexity's top-level ``citations`` / ``search_results``."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from elelem.vocabulary import Attribution, ProviderId, ProviderPayload, Source

ANNOTATION_FORMAT = "annotation"
"""Payload format of a raw ``annotations[]`` entry."""

CITATION_FORMAT = "citation"
"""Payload format of a Perplexity ``citations[]`` URL (``{"index": n, "url": …}``, 1-based)."""

SEARCH_RESULT_FORMAT = "search_result"
"""Payload format of a raw Perplexity ``search_results[]`` entry."""


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _utf16_to_code_points(text: str, offset: int) -> int | None:
    units = 0
    for i, ch in enumerate(text):
        if units == offset:
            return i
        units += 2 if ord(ch) > 0xFFFF else 1
    return len(text) if units == offset else None


def _anchors(url: str | None, title: str | None) -> list[str]:
    found = [a for a in (url, title) if a]
    if url:
        host = urlsplit(url).hostname or ""
        if host:
            found.append(host.removeprefix("www."))
    return found


def verified_range(
    text: str, start: Any, end: Any, url: str | None, title: str | None
) -> tuple[int, int] | None:
    """The code-point span ``start..end`` of ``text``, or None if it does not check out.

    The wire does not say its unit, so both readings are tried: code points,
    then UTF-16 units (they differ only after an astral character).  A span
    is kept only if it is non-empty, inside the text, and its slice names the
    source (its URL, host or title), as OpenAI's and OpenRouter's citation
    markers do; a source with neither URL nor title needs an unambiguous span.
    """
    if not isinstance(start, int) or not isinstance(end, int) or isinstance(start, bool):
        return None
    if not 0 <= start < end:
        return None
    readings: list[tuple[int, int]] = []
    if end <= len(text):
        readings.append((start, end))
    s16, e16 = _utf16_to_code_points(text, start), _utf16_to_code_points(text, end)
    if s16 is not None and e16 is not None and s16 < e16 and (s16, e16) not in readings:
        readings.append((s16, e16))
    anchors = _anchors(url, title)
    if not anchors:
        return readings[0] if len(readings) == 1 else None
    for span in readings:
        piece = text[span[0] : span[1]]
        if any(a in piece for a in anchors):
            return span
    return None


def _source_fields(annotation: Mapping[str, Any]) -> Mapping[str, Any]:
    kind = annotation.get("type")
    body = annotation.get(kind) if isinstance(kind, str) else None
    return body if isinstance(body, dict) else annotation


def annotation_url(annotation: Mapping[str, Any]) -> str | None:
    """The source URL an ``annotations[]`` entry names, if any."""
    return _str(_source_fields(annotation).get("url"))


def annotation_attribution(
    annotation: Mapping[str, Any], text: str, provider: ProviderId
) -> Attribution:
    """One ``annotations[]`` entry as an attribution on the block holding ``text``.

    A ``url_citation`` gives the source, its ``content`` the excerpt (text
    from the source) and its indices a verified range; any other annotation
    type keeps its source fields where it has them.  The raw entry is always
    kept in ``replay``.
    """
    fields = _source_fields(annotation)
    url, title = _str(fields.get("url")), _str(fields.get("title"))
    span = verified_range(text, fields.get("start_index"), fields.get("end_index"), url, title)
    return Attribution(
        source=Source(url=url, title=title),
        excerpt=_str(fields.get("content")),
        range=span,
        replay=ProviderPayload(provider, ANNOTATION_FORMAT, None, dict(annotation)),
    )


def perplexity_attributions(
    citations: Sequence[str],
    search_results: Sequence[Any],
    provider: ProviderId,
    annotated: Collection[str] = (),
) -> list[Attribution]:
    """Attributions for Perplexity's response-level sources.

    Each ``search_results[]`` entry gives one (url, title, raw entry kept);
    each ``citations[]`` URL not among them gives one more.  The ``[n]``
    markers in the text refer to ``citations`` by 1-based position, which the
    payload keeps; no range is claimed.  A URL in ``annotated`` (already
    attributed by an ``annotations[]`` entry of the same response, as
    OpenRouter relays one provider's sources both ways) is not attributed
    again.
    """
    out: list[Attribution] = []
    seen: set[str] = set(annotated)
    for result in search_results:
        if not isinstance(result, dict):
            continue
        url = _str(result.get("url"))
        if url:
            seen.add(url)
        out.append(
            Attribution(
                source=Source(url=url, title=_str(result.get("title"))),
                excerpt=_str(result.get("snippet")),
                replay=ProviderPayload(provider, SEARCH_RESULT_FORMAT, None, dict(result)),
            )
        )
    for number, url in enumerate(citations, start=1):
        if url in seen:
            continue
        out.append(
            Attribution(
                source=Source(url=url),
                replay=ProviderPayload(
                    provider, CITATION_FORMAT, None, {"index": number, "url": url}
                ),
            )
        )
    return out


__all__ = [
    "ANNOTATION_FORMAT",
    "CITATION_FORMAT",
    "SEARCH_RESULT_FORMAT",
    "annotation_attribution",
    "annotation_url",
    "perplexity_attributions",
    "verified_range",
]
