"""A stored conversation as one Markdown document (``elelem export --format md``).

Each turn is a ``## Turn N`` section: the user's words, then the answer in
stream order — its text with footnote markers (``[^3]``) and the footnote
definitions after it (title linked to its http(s) URL, and the quoted
excerpts), hosted activity and tool calls as quoted status lines (with
Google's search suggestions, linked, which must be shown with a grounded
answer),
reasoning collapsed in a ``<details>`` element — and the turn's usage.

Everything shown is untrusted text made inert for a Markdown renderer:
terminal controls removed (:func:`~elelem.render.sanitize.sanitize`), HTML
escaped (``<``, ``>``, ``&``: no tag a model wrote becomes markup), links
whose scheme is not http(s) disarmed, and a model's own ``[^n]`` cannot pose
as one of the document's footnotes (``[`` before ``^`` is escaped).  Tool
output goes in a fenced block whose fence is longer than any backtick run in
it.  Provider payloads are never written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from urllib.parse import quote

from elelem.conversation import ConversationInfo, Event, MessageBody, ResponseRecord, turn_views
from elelem.providers.costs import events_cost
from elelem.render.event_lines import KeptEvent, Notice, event_shown, message_speaker
from elelem.render.lines import (
    Footnotes,
    activity_line,
    attachment_line,
    record_outcome,
    usage_line,
)
from elelem.render.obligations import display_obligations
from elelem.render.sanitize import neutralize_markdown_links, sanitize, sanitize_line
from elelem.vocabulary import (
    AudioBlock,
    DocumentBlock,
    HostedActivity,
    ImageBlock,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)

_FOOTNOTE_LOOKALIKE = re.compile(r"\[(?=\^)")


def inert(text: str) -> str:
    """Untrusted text as inert Markdown: controls removed, ``<`` and ``>``
    escaped (no tag can open; an ``&`` is left as written: an entity it
    starts renders as text, never as markup, and ``AT&T`` stays readable in
    the source), non-http(s) links disarmed, ``[^`` escaped."""
    clean = sanitize(text).replace("<", "&lt;").replace(">", "&gt;")
    return _FOOTNOTE_LOOKALIKE.sub(r"\\[", neutralize_markdown_links(clean))


def inert_line(text: str) -> str:
    """:func:`inert` on one line (breaks folded into spaces)."""
    return inert(sanitize_line(text))


def link_target(url: str) -> str:
    """An http(s) URL (already :func:`~elelem.render.sanitize.safe_url`) as a
    Markdown link target: ``(``, ``)``, ``<``, ``>``, spaces and backticks
    percent-encoded, so a URL can neither end the link early nor carry raw
    HTML into the document after it."""
    return quote(url, safe=":/?#[]@!$&'*+,;=%~-._")


def _fenced(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{sanitize(text)}\n{fence}"


class _Answer:
    """One answer being written: its lines and its footnotes."""

    def __init__(self) -> None:
        self._lines: list[str] = []
        self.run: list[str] = []
        """Text of consecutive text blocks not written yet: a provider cuts
        one sentence into blocks at every citation, and they are one
        paragraph (as the terminal shows them)."""
        self.notes = Footnotes()
        self.started: dict[str, HostedActivity] = {}
        self.shown_at: dict[str, int] = {}
        """Where each activity's line is: a later state of it replaces the
        line (a search is one line, as it ended), never a second one."""

    @property
    def lines(self) -> list[str]:
        """The answer's lines so far (the pending text run written first)."""
        self.flush()
        return self._lines

    @lines.setter
    def lines(self, value: list[str]) -> None:
        self._lines = value

    def flush(self) -> None:
        """Write the pending run of text as one paragraph."""
        if self.run:
            self._lines += ["".join(self.run), ""]
            self.run = []

    def text(self, block: TextBlock) -> None:
        at = self.notes.points(block)
        pieces: list[str] = []
        last = 0
        for point in sorted(at):
            pieces.append(inert(block.text[last:point]))
            pieces.append("".join(f"[^{n}]" for n in at[point]))
            last = point
        pieces.append(inert(block.text[last:]))
        self.run.append("".join(pieces))
        if not block.complete:
            self.lines += ["*(interrupted: the text above is what arrived)*", ""]

    def reasoning(self, block: ReasoningBlock) -> None:
        if not block.text.strip():
            self.lines += ["*thinking (redacted)*", ""]
            return
        self.lines += [
            "<details><summary>Reasoning</summary>",
            "",
            inert(block.text),
            "",
            "</details>",
            "",
        ]

    def activity(self, transition: HostedActivity) -> None:
        started = self.started.get(transition.id)
        if transition.state == "started":
            self.started[transition.id] = transition
        shown = f"> {inert_line(activity_line(transition, started))}"
        lines = self.lines
        at = self.shown_at.get(transition.id)
        if at is not None:
            lines[at] = shown
        else:
            self.shown_at[transition.id] = len(lines)
            lines += [shown, ""]
        for obligation in display_obligations(transition):
            # Google requires its search suggestions shown with a grounded
            # answer: each one's terms, linked to its http(s) URL.
            chips = [
                f"[{inert_line(s.terms)}]({link_target(s.url)})" if s.url else inert_line(s.terms)
                for s in obligation.suggestions
            ]
            self.lines += [f"> {obligation.label}: " + " · ".join(chips), ""]

    def tool_call(self, block: ToolCallBlock) -> None:
        try:
            arguments = json.dumps(json.loads(block.arguments), ensure_ascii=False)
        except (ValueError, RecursionError):
            arguments = block.arguments  # shown as the model sent them
        self.lines += [f"> called `{inert_line(block.name)}` with {inert_line(arguments)}", ""]

    def tool_result(self, block: ToolResultBlock) -> None:
        head = "tool error" if block.is_error else "tool result"
        name = f" of `{inert_line(block.name)}`" if block.name else ""
        self.lines += [f"> {head}{name}:", "", _fenced(block.content), ""]

    def footnotes(self) -> list[str]:
        out: list[str] = []
        for note in self.notes.notes:
            url = link_target(note.url) if note.url else None
            title = inert_line(note.title) or inert_line(url or "") or "source"
            line = (
                f"[^{note.number}]: [{title}]({url})" if note.url else f"[^{note.number}]: {title}"
            )
            for excerpt in note.excerpts:
                line += f" — “{inert_line(excerpt)}”"
            out.append(line)
        return [*out, ""] if out else []


def conversation_markdown(info: ConversationInfo, events: Sequence[Event]) -> str:
    """The whole conversation as Markdown (see the module doc)."""
    title = inert_line(info.title or info.id)
    model = f" · {inert_line(info.model)}" if info.model else ""
    turns = f"{info.turns} turn{'s' if info.turns != 1 else ''}"
    lines = [f"# {title}", "", f"*{info.id}{model} · {turns} · {info.created_at[:16]}*", ""]
    for view in turn_views(events):
        lines += [f"## Turn {view.turn}", ""]
        answer = _Answer()
        for event in view.events:
            shown = event_shown(event)
            if isinstance(shown, MessageBody):
                _message(lines, answer, shown)
            elif isinstance(shown, HostedActivity):
                answer.activity(shown)
            elif isinstance(shown, ResponseRecord):
                outcome = record_outcome(shown)
                if outcome is not None:
                    answer.lines += [f"*{inert_line(outcome[1])}*", ""]
            elif isinstance(shown, Notice):
                answer.lines += [f"*{inert_line(shown.text)}*", ""]
                answer.lines += [line for part in shown.parts for line in (_other(part), "")]
            elif isinstance(shown, KeptEvent):
                answer.lines += [f"*[{inert_line(shown.kind)} event kept, not shown]*", ""]
        lines += answer.lines + answer.footnotes()
        if view.responses:
            cost = events_cost(view.events).describe()
            lines += [f"*{usage_line(view.usage)} · {inert_line(cost)}*", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _tag(part: object) -> str:
    tag = getattr(part, "tag", None)
    if isinstance(tag, str):
        return tag
    config = getattr(part, "__struct_config__", None)
    return str(getattr(config, "tag", None) or type(part).__name__)


def _other(part: object) -> str:
    """The line for a part this document does not write out: an attachment
    line naming an image or document, else the block kept but not shown."""
    if isinstance(part, ImageBlock | DocumentBlock | AudioBlock):
        return f"*{inert_line(attachment_line(part))}*"
    return f"*[{inert_line(_tag(part))} block kept, not shown]*"


def _message(lines: list[str], answer: _Answer, body: MessageBody) -> None:
    speaker, text = message_speaker(body)
    if speaker == "assistant":
        for part in body.content:
            if isinstance(part, TextBlock):
                answer.text(part)
            elif isinstance(part, ReasoningBlock):
                answer.reasoning(part)
            elif isinstance(part, HostedActivity):
                answer.activity(part)
            elif isinstance(part, ToolCallBlock):
                answer.tool_call(part)
            else:
                answer.lines += [_other(part), ""]
        return
    # Attachments and other blocks beside the text get a line each: a user's
    # image or document is named, never left out of the document.
    others = [_other(p) for p in body.content if not isinstance(p, TextBlock)]
    if speaker == "system":
        lines += [f"**System:** {inert(text)}", ""]
    elif speaker == "context":
        lines += [f"**{inert_line(body.source)}:** {inert(text)}", ""]
    elif speaker == "tool":
        for part in body.content:
            if isinstance(part, ToolResultBlock):
                answer.tool_result(part)
            elif not isinstance(part, TextBlock):
                answer.lines += [_other(part), ""]
        return
    else:
        lines += [f"**User:** {inert(text)}", ""]
    for line in others:
        lines += [line, ""]


__all__ = ["conversation_markdown", "inert", "inert_line"]
