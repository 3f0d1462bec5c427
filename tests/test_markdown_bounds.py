"""Hostile Markdown costs work in proportion to its length (issue #33).

Measured with markdown-it-py (process time, 10k → 80k repeats): ``[`` * n,
``![`` * n, ``[`` and a newline, quoted ``> [``, nested ``[[a]]``, reference
definition floods and unclosed ``[a](`` all grow linearly.  The one that did
not: a reference definition used over and over, each use repeating its URL
in the output (quadratic: 36 s for 80k uses of a definition that swallowed
the rest of its line).  Link targets are now spent from a budget; these
tests count the output, not the time.
"""

from __future__ import annotations

import io

from rich.console import Console

from elelem.render.link_budget import LINK_BUDGET_FLOOR, bound_links, link_budget
from elelem.render.renderer import bounded_markdown
from elelem.web.markup import markdown_html

URL = "https://example.com/" + "y" * 10_000
FLOOD = "[a]" * 3_000 + "\n\n[a]: " + URL + "\n"


def test_a_reused_reference_costs_the_page_its_budget_not_its_uses() -> None:
    html = markdown_html(FLOOD)
    # Before: every use repeated the 10 kB URL, 15 MB of HTML.
    assert len(html) < 3 * link_budget(FLOOD) + 100_000, len(html)
    # "[a][a]" is one full reference link: 1,500 of them.  As many are
    # live as the budget pays for; the rest are shown as their text.
    live = link_budget(FLOOD) // len(URL)
    link = f'<a href="{URL}" rel="noopener noreferrer nofollow" target="_blank">a</a>'
    assert html == "<p>" + link * live + "a" * (1_500 - live) + "</p>\n"


def test_the_terminal_prints_the_budget_not_every_use() -> None:
    console = Console(file=io.StringIO(), width=100, force_terminal=False, color_system=None)
    console.print(bounded_markdown(FLOOD))
    out = console.file.getvalue()  # type: ignore[attr-defined]
    # rich prints each link's URL after its text: 15 MB before.
    assert len(out) < 3 * link_budget(FLOOD) + 100_000, len(out)
    assert out.count("(https://example.com/y") == link_budget(FLOOD) // len(URL)


def test_an_ordinary_answer_keeps_every_link() -> None:
    source = "See [the docs](https://example.com/docs) and ![chart](https://example.com/c.png).\n"
    source += 'Also [ref] and [ref].\n\n[ref]: https://example.com/ref "Ref"\n'
    html = markdown_html(source)
    assert html == (
        '<p>See <a href="https://example.com/docs" rel="noopener noreferrer nofollow" '
        'target="_blank">the docs</a> and <a class="image-link" '
        'href="https://example.com/c.png" rel="noopener noreferrer nofollow" '
        'target="_blank">image: chart</a>.\n'
        'Also <a href="https://example.com/ref" title="Ref" rel="noopener noreferrer '
        'nofollow" target="_blank">ref</a> and <a href="https://example.com/ref" '
        'title="Ref" rel="noopener noreferrer nofollow" target="_blank">ref</a>.</p>\n'
    )


def test_bound_links_unlinks_in_document_order() -> None:
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse("[x](http://a) ![i](http://bb) [y](http://ccc)")
    assert bound_links(tokens, len("http://a") + len("http://bb")) == 1
    (inline,) = [t for t in tokens if t.type == "inline"]
    assert [(c.type, c.content) for c in inline.children or []] == [
        ("link_open", ""),
        ("text", "x"),
        ("link_close", ""),
        ("text", " "),
        ("image", "i"),
        ("text", " "),
        ("text", "y"),
    ]
    assert link_budget("") == LINK_BUDGET_FLOOR
