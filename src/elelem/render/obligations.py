"""Display obligations: what a provider requires to be shown with an answer.

Google requires the search suggestions of a grounded Gemini answer
(``groundingMetadata.searchEntryPoint``) to be displayed with it, as it
composed them, and each suggestion to lead to Google Search.  They are kept in
the search's :class:`~elelem.vocabulary.ProviderPayload` (format
``grounding_metadata``), whose value is otherwise never shown; this module is
the one place that reads them out, for every medium:

- a browser shows :attr:`DisplayObligation.html` (the provider's own HTML) in
  a sandboxed frame that runs no script;
- a terminal and a Markdown document show :func:`obligation_lines`: one line
  per suggestion, its terms and its link, read from the HTML's links (http(s)
  only, sanitized) or, when the HTML has none, the search queries.

A future obligation is a new :class:`DisplayObligation` kind read here; every
medium already shows whatever this module returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser

from elelem.render.sanitize import safe_url, sanitize_line
from elelem.vocabulary import HostedActivity


@dataclass(frozen=True)
class Suggestion:
    """One search suggestion: its terms and where it leads (None when the
    provider gave no http(s) link for it)."""

    terms: str
    url: str | None


@dataclass(frozen=True)
class DisplayObligation:
    """Something a provider requires to be shown with the answer."""

    kind: str
    """``search-suggestions`` (Google)."""
    label: str
    """Who requires it and what it is, as shown: ``Google Search suggestions``."""
    suggestions: tuple[Suggestion, ...]
    html: str | None
    """The provider-composed HTML, for a sandboxed frame only (never inline)."""


class _Links(HTMLParser):
    """The links of the suggestions HTML: each ``<a href>`` and its text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[tuple[str, list[str]]] = []
        self._open: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._open = []
            self.links.append((dict(attrs).get("href") or "", self._open))

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self._open = None

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._open.append(data)


def _suggestions(html: str, queries: object) -> tuple[Suggestion, ...]:
    parser = _Links()
    parser.feed(html)
    parser.close()
    found = [
        Suggestion(sanitize_line("".join(words)), safe_url(href))
        for href, words in parser.links
        if sanitize_line("".join(words))
    ]
    if found:
        return tuple(found)
    listed = queries if isinstance(queries, list) else []
    return tuple(Suggestion(sanitize_line(q), None) for q in listed if isinstance(q, str))


def display_obligations(activity: HostedActivity) -> tuple[DisplayObligation, ...]:
    """The display obligations a hosted-activity transition carries."""
    payload = activity.payload
    if payload is None or payload.format != "grounding_metadata":
        return ()
    value = payload.value
    entry = value.get("searchEntryPoint") if isinstance(value, dict) else None
    html = entry.get("renderedContent") if isinstance(entry, dict) else None
    if not isinstance(html, str) or not html.strip():
        return ()
    queries = value.get("webSearchQueries") if isinstance(value, dict) else None
    return (
        DisplayObligation(
            "search-suggestions", "Google Search suggestions", _suggestions(html, queries), html
        ),
    )


def obligation_lines(activity: HostedActivity) -> list[str]:
    """The text lines of ``activity``'s obligations: one per suggestion,
    ``Google Search suggestions: <terms> <link>``."""
    lines: list[str] = []
    for obligation in display_obligations(activity):
        for suggestion in obligation.suggestions:
            link = f" {suggestion.url}" if suggestion.url else ""
            lines.append(f"{obligation.label}: {suggestion.terms}{link}")
        if not obligation.suggestions:
            lines.append(f"{obligation.label}: (shown by elelem serve and the HTML export)")
    return lines


__all__ = ["DisplayObligation", "Suggestion", "display_obligations", "obligation_lines"]
