"""Terminal rendering: sanitization, citation footnotes, hosted-activity
status lines, reasoning display modes and the usage line (docs/architecture.md §6).

The :class:`Renderer` (and :func:`render_events`, which uses it) draws with rich, which the
``cli`` extra brings; it loads on first use, so the web view and the
exports use the sanitizer and the lines with the library alone.
"""

from typing import TYPE_CHECKING

from elelem.render.lines import (
    Footnote,
    Footnotes,
    activity_label,
    activity_line,
    add_usage,
    cited_text,
    reasoning_summary,
    usage_line,
)
from elelem.render.sanitize import (
    decode_excerpt,
    domain,
    neutralize_markdown_links,
    safe_url,
    sanitize,
    sanitize_line,
)

if TYPE_CHECKING:
    from elelem.render.conversation import render_events
    from elelem.render.renderer import CitationDisplay, Renderer, RenderOptions, render_parts

_RENDERER = frozenset({"CitationDisplay", "Renderer", "RenderOptions", "render_parts"})


def __getattr__(name: str) -> object:
    if name in _RENDERER:
        from elelem.render import renderer

        return getattr(renderer, name)
    if name == "render_events":
        from elelem.render import conversation

        return conversation.render_events
    raise AttributeError(f"module 'elelem.render' has no attribute {name!r}")


__all__ = [
    "CitationDisplay",
    "Footnote",
    "Footnotes",
    "RenderOptions",
    "Renderer",
    "activity_label",
    "activity_line",
    "add_usage",
    "cited_text",
    "decode_excerpt",
    "domain",
    "neutralize_markdown_links",
    "reasoning_summary",
    "render_events",
    "render_parts",
    "safe_url",
    "sanitize",
    "sanitize_line",
    "usage_line",
]
