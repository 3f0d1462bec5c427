"""Links in untrusted Markdown, bounded by what the source can pay for.

A reference definition is written once and used any number of times, and
each use repeats its URL and title in the output: a 30 kB URL used by 5,000
three-character ``[a]`` references made 150 MB of HTML (8 s for 120 kB of
source in the web renderer, 11 s in the terminal's, which prints each URL
after its link).  The other hostile bracket texts measured (``[`` * n,
``![`` * n, nested ``[[…]]``, ``[`` across lines, quoted ``> [``, link
definition floods) cost markdown-it time in proportion to their length.

So both renderers spend at most :func:`link_budget` characters of URLs and
titles on one document: the links past it are shown as their text, the
images past it as their alt text.  Any ordinary answer stays far inside
it (the budget is twice the source, and at least 64 kB).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # markdown-it comes with the cli and web extras, not the core
    from markdown_it.token import Token

LINK_BUDGET_FLOOR = 64 * 1024
"""The least budget: a short answer may cite the same long URL many times."""


def link_budget(source: str) -> int:
    """The characters of link targets and titles a rendering of ``source`` may spend."""
    return max(LINK_BUDGET_FLOOR, 2 * len(source))


def _cost(token: Token, key: str) -> int:
    target = token.attrGet(key)
    title = token.attrGet("title")
    return len(str(target or "")) + len(str(title or ""))


def bound_links(tokens: Sequence[Token], budget: int) -> int:
    """Unlink, in document order, every link and image of ``tokens`` (a
    markdown-it token stream) once their targets and titles would pass
    ``budget`` characters in all; return how many were unlinked.  A link
    keeps its text (its open and close tokens go), an image becomes its
    alt text."""
    spent = 0
    unlinked = 0
    for token in tokens:
        children = token.children
        if not children:
            continue
        kept: list[Token] = []
        dropping = False
        for child in children:
            if child.type == "link_open":
                spent += _cost(child, "href")
                dropping = spent > budget
                if dropping:
                    unlinked += 1
                    continue
            elif child.type == "link_close" and dropping:
                dropping = False
                continue
            elif child.type == "image":
                spent += _cost(child, "src")
                if spent > budget:
                    unlinked += 1
                    # Its content is its alt text; as a text token it shows just that.
                    child.type, child.tag, child.attrs, child.children = "text", "", {}, None
            kept.append(child)
        if unlinked:
            token.children = kept
    return unlinked


__all__ = ["LINK_BUDGET_FLOOR", "bound_links", "link_budget"]
