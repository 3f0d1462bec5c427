"""The sidebar's words: day groups, relative dates, highlighted snippets."""

from __future__ import annotations

from datetime import UTC, datetime

from elelem.web.pages import day_label, highlight, relative_time

NOW = datetime(2026, 3, 12, 15, 0, tzinfo=UTC)


def test_day_groups() -> None:
    assert day_label("2026-03-12T00:01:00+00:00", NOW) == "Today"
    assert day_label("2026-03-11T23:59:00+00:00", NOW) == "Yesterday"
    assert day_label("2026-03-07T10:00:00+00:00", NOW) == "Saturday"
    assert day_label("2026-03-05T10:00:00+00:00", NOW) == "5 Mar 2026"
    assert day_label("2026-03-12T16:00:00", NOW) == "Today"  # naive: the viewer's zone


def test_relative_times() -> None:
    assert relative_time("2026-03-12T14:59:30+00:00", NOW) == "just now"
    assert relative_time("2026-03-12T14:55:00+00:00", NOW) == "5 min ago"
    assert relative_time("2026-03-12T12:00:00+00:00", NOW) == "3 h ago"
    assert relative_time("2026-03-11T14:00:00+00:00", NOW) == "1 day ago"
    assert relative_time("2026-02-20T14:00:00+00:00", NOW) == "20 days ago"
    assert relative_time("2026-01-01T14:00:00+00:00", NOW) == "2026-01-01"


def test_highlight_marks_every_query_word_in_escaped_text() -> None:
    snippet = "…the <b>Eiffel</b> tower\u202e is eiffel-shaped"
    assert highlight(snippet, "eiffel TOWER") == (
        "…the &lt;b&gt;<mark>Eiffel</mark>&lt;/b&gt; <mark>tower</mark> is "
        "<mark>eiffel</mark>-shaped"
    )
    assert highlight("a <mark> b", "<mark>") == "a <mark>&lt;mark&gt;</mark> b"
    assert highlight("plain", "   ") == "plain"
