"""The lines of the events a turn's log holds beside its messages: a run
stopped for decisions (:class:`~elelem.conversation.Awaiting`) and the
answers that resumed it (:class:`~elelem.conversation.Decision`), a live
session's notes (:class:`~elelem.conversation.SessionNote`), the context
edits the provider applied (:class:`~elelem.conversation.ContextEdits`) and
the files its code execution made, fetched into the store
(:class:`~elelem.conversation.GeneratedFileBody`).  Plain text, sanitized
by the caller's renderer, as the other lines of :mod:`elelem.render.lines`.

:func:`event_shown` is the one table of what each stored event is on
screen (a message, a hosted activity, a response's record, a notice line,
an event kept but not shown, or nothing), and :func:`message_speaker` who
a message is shown as: the terminal, the Markdown export and the web page
each spell what they give their own way and decide nothing else about
which event shows as what."""

from __future__ import annotations

from collections.abc import Callable, Sequence, Sized
from dataclasses import dataclass
from typing import Any, Literal

from elelem.conversation.context_edits import ContextEdits
from elelem.conversation.events import (
    OVERLAY_KINDS,
    Awaiting,
    Decision,
    Event,
    HostedBody,
    MessageBody,
    ResponseRecord,
    TurnStart,
)
from elelem.conversation.generated import GeneratedFileBody
from elelem.conversation.session import SessionNote
from elelem.vocabulary import HostedActivity, Part, TextBlock


def _counts(parts: Sequence[tuple[str, Sized, str]], nothing: str) -> str:
    """Each ``(wording, items, noun)`` whose items are not empty, its ``{}``
    the count of ``noun`` (``1 call``, ``2 calls``), comma-joined; ``nothing``
    when every one is empty."""
    said = [
        wording.format(f"{len(items)} {noun}{'' if len(items) == 1 else 's'}")
        for wording, items, noun in parts
        if items
    ]
    return ", ".join(said or [nothing])


def awaiting_line(awaiting: Awaiting) -> str:
    """``awaiting approval of 1 call, results of 2 calls``: a stopped run."""
    parts = [
        ("approval of {}", awaiting.approval, "call"),
        ("results of {}", awaiting.results, "call"),
    ]
    return "awaiting " + _counts(parts, "nothing")


def session_line(note: SessionNote) -> str:
    """One line of a live session's note (``session: interrupted at 300 ms,
    heard "It is sunny"``), sanitized by the caller's renderer."""
    detail = note.detail if isinstance(note.detail, dict) else {}
    if note.what == "interrupted":
        heard = detail.get("heard")
        said = f', heard "{heard}"' if isinstance(heard, str) and heard else ""
        return f"session: interrupted at {detail.get('audio_end_ms')} ms{said}"
    if note.what in ("lost", "dropped") and detail.get("error"):
        return f"session {note.what}: {detail.get('error')}"
    if note.what == "input-transcript":
        return f'session: the user said "{detail.get("transcript")}"'
    if note.what == "opened" and detail.get("session_id"):
        return f"session opened ({detail.get('session_id')})"
    return f"session: {note.what}"


def decision_line(decision: Decision) -> str:
    """``approved 1 call, refused 1 call, 1 result given``: a resumed run's answers."""
    parts = [
        ("approved {}", decision.approved, "call"),
        ("refused {}", decision.refused, "call"),
        ("{} given", decision.results, "result"),
    ]
    return "resumed: " + _counts(parts, "nothing decided")


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


@dataclass(frozen=True)
class Notice:
    """The line shown for an event beside the messages, and what follows it."""

    kind: str
    """What the event is (``awaiting``, ``decision``, ``session``,
    ``context-edits``, ``generated``): the web page's class for the line."""
    text: str
    """The words, unsanitized: each renderer escapes them for its medium."""
    warning: bool = False
    """Shown in the warning colour on a terminal (a run stopped, waiting)."""
    parts: tuple[Part, ...] = ()
    """Blocks shown after the line (a generated file's content)."""


_NOTICES: dict[type, tuple[str, Callable[[Any], str], bool]] = {
    Awaiting: ("awaiting", awaiting_line, True),
    Decision: ("decision", decision_line, False),
    SessionNote: ("session", session_line, False),
    ContextEdits: ("context-edits", context_edits_line, False),
    GeneratedFileBody: ("generated", generated_line, False),
}
"""Each event body shown as a notice: its kind, its line, whether it warns."""


def event_notice(body: object) -> Notice | None:
    """The notice of an event ``body`` (a stopped run, the answers that
    resumed it, a live session's note, the provider's context edits, a
    generated file), or None for a body that is not one."""
    row = _NOTICES.get(type(body))
    if row is None:
        return None
    kind, spell, warning = row
    parts = body.content if isinstance(body, GeneratedFileBody) else ()
    return Notice(kind, spell(body), warning, parts)


@dataclass(frozen=True)
class KeptEvent:
    """An event of a kind no renderer knows (a plugin's, or one nobody
    registered): kept in the log, and named where it stood."""

    kind: str
    """The event's kind as stored, unsanitized."""


Shown = MessageBody | HostedActivity | ResponseRecord | Notice | KeptEvent
"""What one stored event is on screen (see :func:`event_shown`)."""


def event_shown(event: Event) -> Shown | None:
    """What ``event`` is on screen: its message, its hosted activity, its
    response record, its :class:`Notice`, or a :class:`KeptEvent` for a kind
    no renderer knows; None for an event not shown (a turn's start; an
    overlay, which changes projections, not what happened)."""
    body = event.body
    if isinstance(body, MessageBody | ResponseRecord):
        return body
    if isinstance(body, HostedBody):
        return body.activity
    notice = event_notice(body)
    if notice is not None:
        return notice
    if isinstance(body, TurnStart) or event.kind in OVERLAY_KINDS:
        return None
    return KeptEvent(event.kind)


Speaker = Literal["assistant", "system", "context", "tool", "user"]
"""Who a stored message is shown as (see :func:`message_speaker`)."""


def message_speaker(body: MessageBody) -> tuple[Speaker, str]:
    """Who a stored message is shown as, and its text (its text blocks
    joined; empty for the assistant's, whose blocks are shown in stream
    order): ``system``; ``context``, a context source's (``body.source``
    names it); ``tool``, results (or a message with no text: its blocks
    alone); else ``user``."""
    if body.role == "assistant":
        return "assistant", ""
    text = "".join(p.text for p in body.content if isinstance(p, TextBlock))
    if body.role == "system":
        return "system", text
    if body.source.startswith("context"):
        return "context", text
    if body.source == "tool" or not text:
        return "tool", text
    return "user", text


__all__ = [
    "KeptEvent",
    "Notice",
    "Shown",
    "Speaker",
    "awaiting_line",
    "context_edits_line",
    "decision_line",
    "event_notice",
    "event_shown",
    "generated_line",
    "message_speaker",
    "session_line",
]
