"""The lines of the events a turn's log holds beside its messages that
say what the provider did to or made for it: the context edits it applied
(:class:`~elelem.conversation.ContextEdits`) and the files its code
execution made, fetched into the store
(:class:`~elelem.conversation.GeneratedFileBody`).  Plain text, sanitized
by the caller's renderer, as the other lines of :mod:`elelem.render.lines`."""

from __future__ import annotations

from elelem.conversation.context_edits import ContextEdits
from elelem.conversation.generated import GeneratedFileBody


def context_edits_line(body: ContextEdits) -> str:
    """``context edited by anthropic: cleared 4 tool uses, 1 thinking turn
    (31,900 input tokens)``: what the provider cleared from a response's
    prompt, sanitized by the caller's renderer."""
    parts = []
    for key, noun in (
        ("cleared_tool_uses", "tool use"),
        ("cleared_thinking_turns", "thinking turn"),
    ):
        count = body.cleared(key)
        if count:
            parts.append(f"{count:,} {noun}{'s' if count != 1 else ''}")
    tokens = body.cleared("cleared_input_tokens")
    what = ", ".join(parts) or f"{len(body.edits)} edit{'s' if len(body.edits) != 1 else ''}"
    return f"context edited by {body.provider}: cleared {what} ({tokens:,} input tokens)"


def generated_line(body: GeneratedFileBody) -> str:
    """``file made by code execution: chart.png (anthropic file_011…, 2,048
    bytes)``: a fetched generated file, sanitized by the caller's renderer."""
    size = sum(getattr(getattr(p.source, "blob", None), "size", 0) for p in body.content)
    where = f"{body.container_id}/{body.file_id}" if body.container_id else body.file_id
    name = body.filename or body.file_id
    return f"file made by code execution: {name} ({body.provider} {where}, {size:,} bytes)"


__all__ = ["context_edits_line", "generated_line"]
