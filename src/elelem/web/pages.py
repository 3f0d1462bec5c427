"""The frame of every page of ``elelem serve``: the conversation sidebar
(title, model, cost, relative date, grouped by day, with search) and the list
and search pages.

Dates are shown relative to ``now`` and grouped by the viewer's local day;
``now`` is passed in so a page is a pure function of the store and the
clock.  Every text is untrusted and goes through :func:`~elelem.web.html.line`;
a search snippet's matches are marked with ``<mark>`` around escaped pieces.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from elelem.conversation import ConversationInfo, SearchHit
from elelem.render.sanitize import sanitize_line
from elelem.web.html import Link, line


@dataclass(frozen=True)
class Entry:
    """One conversation as the sidebar and the list show it."""

    info: ConversationInfo
    cost: str | None
    """``$0.0123``, ``cost unknown``, or None when nothing was priced."""


def _when(stamp: str, now: datetime) -> datetime:
    moment = datetime.fromisoformat(stamp)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=now.tzinfo)
    return moment.astimezone(now.tzinfo)


def day_label(stamp: str, now: datetime) -> str:
    """The day group of a time: ``Today``, ``Yesterday``, a weekday within the
    week, else the date (``12 Mar 2025``)."""
    days = (now.date() - _when(stamp, now).date()).days
    if days <= 0:
        return "Today"
    if days == 1:
        return "Yesterday"
    moment = _when(stamp, now)
    if days < 7:
        return moment.strftime("%A")
    return f"{moment.day} {moment.strftime('%b %Y')}"


def relative_time(stamp: str, now: datetime) -> str:
    """``just now``, ``5 min ago``, ``3 h ago``, ``2 days ago``, else the date."""
    delta = now - _when(stamp, now)
    if delta < timedelta(minutes=1):
        return "just now"
    if delta < timedelta(hours=1):
        return f"{delta.seconds // 60} min ago"
    if delta < timedelta(days=1):
        return f"{delta.seconds // 3600} h ago"
    if delta < timedelta(days=30):
        return f"{delta.days} day{'s' if delta.days != 1 else ''} ago"
    return _when(stamp, now).strftime("%Y-%m-%d")


def by_day(entries: Sequence[Entry], now: datetime) -> list[tuple[str, list[Entry]]]:
    """``entries`` (newest first) in day groups, in order."""
    groups: list[tuple[str, list[Entry]]] = []
    for entry in entries:
        label = day_label(entry.info.updated_at, now)
        if not groups or groups[-1][0] != label:
            groups.append((label, []))
        groups[-1][1].append(entry)
    return groups


def highlight(snippet: str, query: str) -> str:
    """A search snippet as HTML, each query word's matches in ``<mark>``."""
    clean = sanitize_line(snippet)
    words = [w for w in sanitize_line(query).split() if w]
    if not words:
        return html.escape(clean)
    pattern = re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)
    out: list[str] = []
    last = 0
    for found in pattern.finditer(clean):
        out.append(html.escape(clean[last : found.start()]))
        out.append(f"<mark>{html.escape(found.group(0))}</mark>")
        last = found.end()
    out.append(html.escape(clean[last:]))
    return "".join(out)


def _meta(entry: Entry, now: datetime) -> str:
    parts = [line(entry.info.model or "no model")]
    if entry.cost is not None:
        parts.append(line(entry.cost))
    when = relative_time(entry.info.updated_at, now)
    stamp = html.escape(entry.info.updated_at, quote=True)
    parts.append(f'<time datetime="{stamp}">{html.escape(when)}</time>')
    return " · ".join(parts)


def sidebar(
    entries: Sequence[Entry],
    *,
    link: Link,
    token: str,
    now: datetime,
    query: str | None = None,
    current: str | None = None,
) -> str:
    """The sidebar: the app's name, New chat, the search box and the
    conversations by day (``current`` marked as the page's)."""
    out = ['<aside class="sidebar" aria-label="Conversations">']
    out.append('<div class="side-head">')
    out.append(f'<a class="brand" href="{html.escape(link("/"))}">elelem</a>')
    out.append(f'<a class="new-chat button" href="{html.escape(link("/chat"))}">+ New chat</a>')
    out.append("</div>")
    out.append(_search_form(link, token, query))
    out.append('<nav class="history" aria-label="Conversation history">')
    for label, group in by_day(entries, now):
        out.append(f'<h2 class="day">{html.escape(label)}</h2><ul class="conversations">')
        for entry in group:
            href = html.escape(link(f"/c/{entry.info.id}"))
            mark = ' aria-current="page"' if entry.info.id == current else ""
            out.append(
                f'<li><a href="{href}"{mark}><span class="title">'
                f"{line(entry.info.title or entry.info.id)}</span>"
                f'<span class="meta">{_meta(entry, now)}</span></a></li>'
            )
        out.append("</ul>")
    if not entries:
        out.append('<p class="empty">no conversations yet</p>')
    out.append("</nav></aside>")
    return "".join(out)


def _search_form(link: Link, token: str, query: str | None) -> str:
    value = html.escape(query or "", quote=True)
    return (
        f'<form class="search" role="search" method="get" action="{html.escape(link("/"))}">'
        f'<input type="hidden" name="token" value="{html.escape(token, quote=True)}">'
        f'<input type="search" name="q" value="{value}" placeholder="Search messages" '
        'aria-label="Search messages"></form>'
    )


def listing(
    entries: Sequence[Entry],
    *,
    link: Link,
    now: datetime,
    query: str | None = None,
    hits: Sequence[SearchHit] = (),
) -> str:
    """The main column of the list page: the search hits (each with its
    conversation's title and a highlighted snippet) or every conversation
    by day, as ``elelem log`` lists them."""
    if query is not None:
        return _hits(entries, link, query, hits)
    out = ['<main id="main" class="main listing"><header><h1>Conversations</h1></header>']
    out.append(day_groups(entries, link=link, now=now))
    out.append("</main>")
    return "".join(out)


def day_groups(entries: Sequence[Entry], *, link: Link, now: datetime) -> str:
    """Every conversation by day, as ``elelem log`` lists them (or a line
    saying there is none yet)."""
    out: list[str] = []
    for label, group in by_day(entries, now):
        out.append(f'<section class="day-group"><h2>{html.escape(label)}</h2><ul class="rows">')
        for entry in group:
            info = entry.info
            href = html.escape(link(f"/c/{info.id}"))
            turns = f"{info.turns} turn{'s' if info.turns != 1 else ''}"
            out.append(
                f'<li><a href="{href}">{line(info.title or info.id)}</a>'
                f'<span class="meta">{turns} · {_meta(entry, now)}</span></li>'
            )
        out.append("</ul></section>")
    if not entries:
        new = html.escape(link("/chat"))
        out.append(
            f'<p class="empty">No conversations yet: <a href="{new}">start a new chat</a>.</p>'
        )
    return "".join(out)


def _hits(entries: Sequence[Entry], link: Link, query: str, hits: Sequence[SearchHit]) -> str:
    titles = {e.info.id: e.info.title or e.info.id for e in entries}
    out = [
        '<main id="main" class="main listing">'
        f"<header><h1>Messages containing “{line(query)}”</h1></header>"
    ]
    if not hits:
        out.append('<p class="empty">no matches</p>')
    out.append('<ol class="hits">')
    for hit in hits:
        href = html.escape(link(f"/c/{hit.conversation}") + f"#turn-{hit.turn}")
        title = titles.get(hit.conversation, hit.conversation)
        out.append(
            f'<li><a href="{href}">{line(title)}</a> <span class="meta">turn {hit.turn}</span>'
            f'<p class="snippet">{highlight(hit.snippet, query)}</p></li>'
        )
    out.append("</ol></main>")
    return "".join(out)


__all__ = [
    "Entry",
    "by_day",
    "day_groups",
    "day_label",
    "highlight",
    "listing",
    "relative_time",
    "sidebar",
]
