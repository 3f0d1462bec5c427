"""Untrusted values as HTML: every page of the viewer and the HTML export
write model output, titles, tool output and URLs only through these
(sanitized as in the terminal, then escaped)."""

from __future__ import annotations

import html
import re

from elelem.render.sanitize import sanitize, sanitize_line


def text(value: str) -> str:
    """Untrusted text as HTML: sanitized, then escaped (quotes included)."""
    return html.escape(sanitize(value), quote=True)


def line(value: str) -> str:
    """Untrusted one-line text (titles, queries) as HTML."""
    return html.escape(sanitize_line(value), quote=True)


_CONTROLS = re.compile("[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]")


def attribute(value: str) -> str:
    """An untrusted value a page script reads back exactly (a call id) as an
    attribute value: escaped, and its control characters (an escape
    character included) written as character references, which the page
    decodes back to the value but which put no raw control in its text."""
    return _CONTROLS.sub(lambda m: f"&#{ord(m.group())};", html.escape(value, quote=True))


__all__ = ["attribute", "line", "text"]
