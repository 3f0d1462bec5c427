"""Markdown answers as safe HTML: the one renderer of the viewer, the chat and
the HTML export.

Model output is untrusted, so the Markdown is rendered with markdown-it-py in
its CommonMark preset with these rules:

- raw HTML is off: a tag the model wrote is shown as text;
- links are live only for ``http``, ``https`` and ``mailto`` URLs, and carry
  ``rel="noopener noreferrer nofollow"`` and ``target="_blank"``; any other
  link stays the text it was written as;
- images are never loaded (a remote image is a tracking pixel the model
  chose): ``![alt](url)`` becomes a link to the URL, under the same rule;
- fenced code is highlighted on the server by Pygments (class names only;
  the colours come from the stylesheet), so no script is needed;
- tables and strikethrough are on; typographer and linkify are off;
- link targets and titles are spent from a budget of twice the source
  (:mod:`elelem.render.link_budget`): a reference used thousands of times
  cannot make the page quadratic in size;
- citation markers (``[1]``, linked to the turn's footnotes) are placed at
  their code-point positions in the source, which markdown-it cannot do:
  each point gets a placeholder carrying a per-render random nonce (so
  content cannot forge one), the placeholders in text become the markers,
  and any that fell inside a code span, a code block or a URL are removed.

Text is first sanitized as in the terminal (controls, escape sequences and
bidi overrides removed).
"""

from __future__ import annotations

import re
import secrets
import string
from collections.abc import Mapping, Sequence
from functools import cache
from html import escape
from typing import Any, cast

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from elelem.render.link_budget import bound_links, link_budget
from elelem.render.sanitize import sanitize

LINK_SCHEMES = frozenset({"http", "https", "mailto"})
LINK_REL = "noopener noreferrer nofollow"
CODE_CLASS = "hl"
"""The class of highlighted code: the Pygments rules are scoped under it."""

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_NONCE = 12
_ANY_PLACEHOLDER = re.compile(f"\u27e6[a-z]{{{_NONCE}}}\\d+\u27e7")


HIGHLIGHT_LIMIT = 50_000
"""Code blocks longer than this (code points) are shown plain: a lexer's
regular expressions run over untrusted text, and time must stay bounded."""


def _highlight(code: str, language: str, _attrs: Any) -> str:
    if len(code) > HIGHLIGHT_LIMIT:
        return ""  # markdown-it escapes the code itself
    name = language.split()[0] if language.strip() else ""
    try:
        lexer = get_lexer_by_name(name) if name else None
    except ClassNotFound:
        lexer = None
    if lexer is None:
        return ""  # markdown-it escapes the code itself
    body = str(highlight(code, lexer, HtmlFormatter(nowrap=True)))
    # Output starting with <pre> is taken as is by markdown-it.
    return f'<pre class="{CODE_CLASS}"><code data-language="{escape(name)}">{body}</code></pre>'


def _valid_link(url: str) -> bool:
    found = _SCHEME.match(url.strip())
    return found is not None and found.group(1).lower() in LINK_SCHEMES


@cache
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "highlight": _highlight})
    md.enable(["table", "strikethrough"])
    md.validateLink = _valid_link  # type: ignore[method-assign]
    normalize = md.normalizeLink

    def normalize_link(url: str) -> str:
        # A marker's placeholder is taken out of a URL before it is encoded
        # (in a host name it would be punycoded past recognition).
        return str(normalize(_ANY_PLACEHOLDER.sub("", url)))

    md.normalizeLink = normalize_link  # type: ignore[method-assign]
    renderer = cast(RendererHTML, md.renderer)
    rules: Any = renderer.rules

    def link_open(tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        token.attrSet("rel", LINK_REL)
        token.attrSet("target", "_blank")
        return str(renderer.renderToken(tokens, idx, options, env))

    def image(tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        alt = renderer.renderInlineAsText(token.children or [], options, env)
        href = escapeHtml(str(token.attrGet("src") or ""))
        label = escapeHtml("image: " + (alt or "untitled"))
        return f'<a class="image-link" href="{href}" rel="{LINK_REL}" target="_blank">{label}</a>'

    def table_open(tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        # Wide tables scroll inside the answer column instead of widening it.
        return '<div class="table">' + str(renderer.renderToken(tokens, idx, options, env))

    def table_close(tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        return str(renderer.renderToken(tokens, idx, options, env)) + "</div>"

    rules["link_open"] = link_open
    rules["image"] = image
    rules["table_open"] = table_open
    rules["table_close"] = table_close
    return md


def _nonce() -> str:
    return "".join(secrets.choice(string.ascii_lowercase) for _ in range(_NONCE))


def markdown_html(source: str, markers: Mapping[int, str] | None = None) -> str:
    """``source`` (untrusted Markdown) as safe HTML.

    ``markers`` maps code-point positions in ``source`` to trusted HTML (the
    citation markers) put there; a marker whose position falls inside a code
    span, a code block or a URL is shown after the text instead.
    """
    if not markers:
        md = _markdown()
        text = sanitize(source)
        tokens = md.parse(text)
        bound_links(tokens, link_budget(text))
        return str(cast(RendererHTML, md.renderer).render(tokens, md.options, {}))
    nonce = _nonce()
    held: list[str] = []
    pieces: list[str] = []
    last = 0
    for point in sorted(markers):
        at = _settle(source, min(max(point, last), len(source)))
        pieces.append(sanitize(source[last:at]))
        pieces.append(f"\u27e6{nonce}{len(held)}\u27e7")
        held.append(markers[point])
        last = at
    pieces.append(sanitize(source[last:]))
    placeholder = re.compile("\u27e6" + nonce + r"(\d+)\u27e7")
    md = _markdown()
    text = "".join(pieces)
    tokens = md.parse(text)
    bound_links(tokens, link_budget(text))
    _place(tokens, placeholder)
    html = cast(RendererHTML, md.renderer).render(tokens, md.options, {})
    placed: set[int] = set()

    def put(found: re.Match[str]) -> str:
        placed.add(int(found.group(1)))
        return held[int(found.group(1))]

    html = placeholder.sub(put, html)
    # A marker whose point fell in code, a URL or a table's edge is shown
    # after the text, never lost.
    rest = "".join(marker for i, marker in enumerate(held) if i not in placed)
    return html + (f'<p class="cites">{rest}</p>\n' if rest else "")


def _settle(source: str, point: int) -> int:
    """A marker right after white space moves before it: at the start of a
    line it would end a heading, a list item or a table row early."""
    while point > 0 and source[point - 1].isspace():
        point -= 1
    return point


def _place(tokens: Sequence[Token], placeholder: re.Pattern[str]) -> None:
    """Keep placeholders only in text tokens (they become markers there);
    remove them from code, URLs and everything else."""
    for token in tokens:
        if token.children:
            _place(token.children, placeholder)
        if token.type == "text":
            continue
        if token.content:
            token.content = placeholder.sub("", token.content)
        for name, value in list((token.attrs or {}).items()):
            if isinstance(value, str):
                token.attrSet(name, placeholder.sub("", value))


@cache
def code_stylesheet() -> str:
    """The Pygments colours for highlighted code, light and dark."""
    scope = f".{CODE_CLASS}"
    light = HtmlFormatter(style="default").get_style_defs(scope)  # type: ignore[no-untyped-call]
    dark = HtmlFormatter(style="monokai").get_style_defs(scope)  # type: ignore[no-untyped-call]
    return f"{light}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n"


__all__ = [
    "CODE_CLASS",
    "HIGHLIGHT_LIMIT",
    "LINK_REL",
    "LINK_SCHEMES",
    "code_stylesheet",
    "markdown_html",
]
