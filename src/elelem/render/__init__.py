"""Terminal rendering: sanitization, citation footnotes, hosted-activity
status lines, reasoning display modes and the usage line (DESIGN.md §7)."""

from elelem.render.conversation import render_events
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
from elelem.render.renderer import CitationDisplay, Renderer, RenderOptions, render_parts
from elelem.render.sanitize import (
    decode_excerpt,
    domain,
    neutralize_markdown_links,
    safe_url,
    sanitize,
    sanitize_line,
)

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
