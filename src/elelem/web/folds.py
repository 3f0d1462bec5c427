"""Tool activity on the page: each client tool call and its result folded as
one status line (``<details>``/``<summary>``, like hosted activity), and the
images tools return (a computer-use screenshot, an MCP image result) as
thumbnails.

The summary line names the tool, its state (``done``, ``failed``,
``refused``, ``interrupted``, ``awaiting approval``, ``awaiting result``, ``no
result``), how long it took from the stored call to the stored result
(approval waits included: the times are the log's; left out for the calls
of a step whose results were stored together, where no call's own time is
known), and how many images or documents it returned; unfolded, it shows the arguments, the whole result
and its attachments, every value sanitized and escaped.

An image is shown from its own bytes only, by the check of
:mod:`elelem.web.images` (the live chat's thumbnails make the same); on
``elelem serve`` a click opens it whole from the store (``/blob/<sha256>``,
:mod:`elelem.web.routes.blobs`).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from elelem.render.lines import attachment_line, call_arguments
from elelem.vocabulary import (
    AudioBlock,
    BytesSource,
    DocumentBlock,
    ImageBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from elelem.web.escape import attribute, line, text
from elelem.web.images import SHOWN_IMAGES, THUMBNAIL_LIMIT, Fetch, image_bytes, image_data_url
from elelem.web.ui_chunks import media_url

Link = Callable[[str], str]
"""Turns an app path into the href to write (the token kept)."""

PLAYED_AUDIO = frozenset(
    {"audio/wav", "audio/x-wav", "audio/mpeg", "audio/ogg", "audio/webm", "audio/mp4", "audio/flac"}
)
"""Audio a browser plays, given as an ``<audio>`` of its bytes (``data:`` URLs)."""

ATTACHMENTS = (ImageBlock, DocumentBlock, AudioBlock)
"""The blocks shown as an attachment (:func:`media_figure`)."""


def media_figure(
    block: ImageBlock | DocumentBlock | AudioBlock, fetch: Fetch | None, link: Link | None
) -> str:
    """An attachment: its line, a raster image as a bounded thumbnail of its
    own bytes (a link opening it whole when ``link`` makes app links), audio
    as a player of its bytes; never anything fetched from elsewhere."""
    caption = f"<figcaption>{line(attachment_line(block))}</figcaption>"
    if isinstance(block, AudioBlock) and block.media_type in PLAYED_AUDIO:
        src = media_url(block, fetch)
        if src is not None and src.startswith("data:"):
            player = f'<audio controls preload="none" src="{src}"></audio>'
            return f'<figure class="attachment audio">{player}{caption}</figure>'
    src = image_data_url(block, fetch) if isinstance(block, ImageBlock) else None
    if src is None:
        return f'<figure class="attachment">{caption}</figure>'
    alt = line(block.name or "image")
    image = f'<img src="{src}" alt="{alt}">'
    if link is not None and isinstance(block.source, BytesSource):
        href = html.escape(link(f"/blob/{block.source.blob.sha256}"), quote=True)
        image = (
            f'<a class="full" href="{href}" target="_blank" rel="noopener noreferrer" '
            f'title="Open the whole image">{image}</a>'
        )
    return f'<figure class="attachment thumbnail">{image}{caption}</figure>'


def duration(start: str, end: str) -> str | None:
    """The time between two stored events' ``at`` (``75 ms``, ``1.2 s``,
    ``2 min 5 s``), or None when either is not an ISO time."""
    try:
        seconds = (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
    except ValueError:
        return None
    if seconds < 0:
        return None
    if seconds < 1:
        return f"{round(seconds * 1000)} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s"


_TONES = {
    "failed": " bad",
    "interrupted": " bad",
    "refused": " wait",
    "awaiting": " wait",
    "no": " wait",
}
"""How a fold's state is coloured (by its first word): a failure as an
error, a call left unanswered as a warning."""


def _count(n: int, what: str) -> str:
    return f"{n} {what}" if n == 1 else f"{n} {what}s"


@dataclass
class ToolFold:
    """One client tool call and its result as the page folds them; filled as
    the turn's events are read (the result and any wait come later than the
    call), written once the turn is done."""

    call: ToolCallBlock | None
    """The call (None for a result whose call is not in this turn)."""
    called_at: str | None = None
    result: ToolResultBlock | None = None
    answered_at: str | None = None
    waiting: str | None = None
    """``approval`` or ``result`` while a stopped run waits on this call."""
    refused: bool = False
    notes: list[str] = field(default_factory=list)
    """HTML of the response records of the step that made the call."""

    @property
    def name(self) -> str:
        """The tool's name."""
        if self.call is not None:
            return self.call.name
        return (self.result.name if self.result is not None else None) or "tool"

    @property
    def state(self) -> str:
        """What became of the call, in the summary's words."""
        result = self.result
        if result is None:
            return f"awaiting {self.waiting}" if self.waiting else "no result"
        if self.refused or (result.is_error and result.content.startswith("refused")):
            return "refused"
        if result.is_error and result.content.startswith("interrupted"):
            return "interrupted"
        return "failed" if result.is_error else "done"

    def summary(self) -> str:
        """``tool get_weather · done · 75 ms · 1 image`` (sanitized, not escaped)."""
        words = [f"tool {self.name}", self.state]
        if self.called_at and self.answered_at:
            took = duration(self.called_at, self.answered_at)
            if took is not None:
                words.append(took)
        attached = self.result.attachments or () if self.result is not None else ()
        images = sum(isinstance(a, ImageBlock) for a in attached)
        if images:
            words.append(_count(images, "image"))
        if len(attached) > images:
            words.append(_count(len(attached) - images, "document"))
        return " · ".join(words)

    def html(self, fetch: Fetch | None, link: Link | None) -> str:
        """The folded status line, and inside it the whole call and result."""
        state = self.state
        tone = _TONES.get(state.split(" ")[0], "")
        call = self.call.id if self.call is not None else self.result and self.result.call_id
        # The call id and tool name let the chat script update this fold when
        # a resumed run answers the call.
        out = [
            f'<details class="tool{tone}" data-state="{state.replace(" ", "-")}" '
            f'data-call="{attribute(call or "")}" data-tool="{attribute(self.name)}">'
            f"<summary>{line(self.summary())}</summary>"
            '<div class="tool-detail">'
        ]
        if self.call is not None:
            out.append(_arguments(self.call.arguments))
        result = self.result
        if result is not None:
            kind = "tool-error" if result.is_error else "tool-output"
            out.append(
                f'<p class="tool-label">result</p><pre class="{kind}">{text(result.content)}</pre>'
            )
            attached = result.attachments or ()
            if attached:
                figures = "".join(media_figure(a, fetch, link) for a in attached)
                out.append(f'<div class="tool-media">{figures}</div>')
        out.extend(self.notes)
        out.append("</div></details>")
        return "".join(out)


def _arguments(arguments: str) -> str:
    """A call's arguments: each named value, or the text as it came when it
    is not a JSON object."""
    pairs = call_arguments(arguments)
    if pairs is None:
        return f'<p class="tool-label">arguments</p><pre>{text(arguments)}</pre>'
    if not pairs:
        return '<p class="tool-label">no arguments</p>'
    rows = "".join(
        f"<dt>{line(name)}</dt><dd><pre>{text(value)}</pre></dd>" for name, value in pairs
    )
    return f'<p class="tool-label">arguments</p><dl class="arguments">{rows}</dl>'


__all__ = [
    "ATTACHMENTS",
    "PLAYED_AUDIO",
    "SHOWN_IMAGES",
    "THUMBNAIL_LIMIT",
    "Fetch",
    "Link",
    "ToolFold",
    "duration",
    "image_bytes",
    "media_figure",
]
