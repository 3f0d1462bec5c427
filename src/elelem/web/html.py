"""The HTML of stored conversations: one set of templates for ``elelem serve``
and for ``elelem export --format html``.

Everything shown comes from untrusted places (model output, titles, URLs,
excerpts, tool output, hosted summaries), so every piece of text is first
sanitized (controls, escape sequences and bidi overrides removed, as in the
terminal) and then HTML-escaped; links are emitted only for http(s) URLs, with
``rel="noopener noreferrer nofollow"``.  Answers and reasoning are Markdown,
rendered by :mod:`elelem.web.markup` (raw HTML off, the same link rule).  No template writes a script or an
inline event handler, and no provider payload value is ever written — except
Google's search suggestions (``searchEntryPoint.renderedContent``), which
Google requires to be shown with a grounded answer: they go into a sandboxed
``<iframe>`` that may not run scripts, their ``<style>`` allowed by hash, never
by ``unsafe-inline``: served, the frame is a document of its own under its own
policy (:mod:`elelem.web.routes.frames`, as the live chat frames it);
exported, a ``srcdoc`` frame, which inherits the page's policy.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources

import msgspec

from elelem.conversation import (
    Awaiting,
    ConversationInfo,
    Decision,
    Event,
    MessageBody,
    ResponseRecord,
    turn_views,
)
from elelem.providers.costs import events_cost, response_cost
from elelem.render.event_lines import KeptEvent, Notice, event_shown, message_speaker
from elelem.render.lines import (
    Footnotes,
    activity_label,
    activity_line,
    reasoning_summary,
    record_outcome,
    usage_line,
)
from elelem.render.sanitize import domain, sanitize_line
from elelem.vocabulary import (
    HostedActivity,
    Part,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    UnknownBlock,
)
from elelem.vocabulary.json import JSONValue
from elelem.web.escape import attribute, line, text
from elelem.web.folds import ATTACHMENTS, Fetch, ToolFold, duration, media_figure
from elelem.web.markup import code_stylesheet, markdown_html
from elelem.web.ui_chunks import search_entry_point

Link = Callable[[str], str]
"""Turns an app path (``/c/<id>``) into the href to write (the token kept)."""

ENTRY_POINT_SANDBOX = "allow-popups allow-popups-to-escape-sandbox"
"""The search suggestions frame may open its links in a new tab; it may not
run scripts, submit forms, reach its parent or share an origin."""


def suggestions_path(conversation: str, event: str) -> str:
    """The app path of the search suggestions a stored hosted-activity event
    holds, served as a document of its own (``elelem serve``)."""
    return f"/c/{conversation}/suggestions/{event}"


def style_hash(css: str) -> str:
    """The CSP source allowing exactly this ``<style>`` element's text."""
    digest = hashlib.sha256(css.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


_STYLE_ELEMENT = re.compile(r"<style\b[^>]*>(.*?)</style\s*>", re.IGNORECASE | re.DOTALL)


def stylesheet() -> str:
    """The viewer's stylesheet (served as /static/elelem.css, inlined by
    export): the page's rules and the highlighted code's colours."""
    page = (resources.files("elelem.web") / "static" / "elelem.css").read_text("utf-8")
    return page + "\n" + code_stylesheet()


@dataclass
class Page:
    """What rendering collected besides the HTML: the style hashes the page's
    Content-Security-Policy must allow."""

    style_hashes: list[str] = field(default_factory=list)

    def allow_styles_of(self, document: str) -> None:
        """Allow the ``<style>`` elements of a framed document by hash."""
        for css in _STYLE_ELEMENT.findall(document):
            source = style_hash(css)
            if source not in self.style_hashes:
                self.style_hashes.append(source)


def content_security_policy(page: Page, *, static: bool, chat: bool = False) -> str:
    """The page's policy: nothing by default; styles from our own origin
    (``static``) or by hash; scripts only our own static chat script; no
    inline script, no ``unsafe-inline`` anywhere."""
    styles = ["'self'"] if static else []
    styles += page.style_hashes
    directives = [
        "default-src 'none'",
        "style-src " + (" ".join(styles) if styles else "'none'"),
        "img-src data:",  # attachments are inlined; no page loads a remote image
        "media-src data:",  # audio too (a live session's speech), from its bytes
        "script-src " + ("'self'" if chat else "'none'"),
        "connect-src " + ("'self'" if chat else "'none'"),
        "frame-src 'self'",
        "base-uri 'none'",
        "form-action 'self'" if static else "form-action 'none'",
    ]
    if static:
        # A header, not a <meta>: frame-ancestors only works there.
        directives.append("frame-ancestors 'none'")
    return "; ".join(directives)


# --------------------------------------------------------------------------
# Documents
# --------------------------------------------------------------------------


def document(
    title: str,
    body: str,
    *,
    link: Link | None,
    page: Page,
    inline_css: bool = False,
    scripts: Sequence[str] = (),
    meta: dict[str, str] | None = None,
) -> str:
    """A whole HTML document.  With ``inline_css`` (a self-contained export)
    the stylesheet is inlined and the policy goes into a ``<meta>``, with the
    stylesheet allowed by its hash; otherwise it links /static/elelem.css."""
    head = ['<meta charset="utf-8">', '<meta name="viewport" content="width=device-width">']
    head.append('<meta name="referrer" content="no-referrer">')
    if inline_css:
        css = stylesheet()
        page.style_hashes.insert(0, style_hash(css))
        policy = content_security_policy(page, static=False)
        head.append(f'<meta http-equiv="Content-Security-Policy" content="{html.escape(policy)}">')
        head.append(f"<style>{css}</style>")
    elif link is not None:
        head.append(f'<link rel="stylesheet" href="{html.escape(link("/static/elelem.css"))}">')
    for name, value in (meta or {}).items():
        head.append(f'<meta name="{html.escape(name)}" content="{html.escape(value)}">')
    if link is not None:
        for script in scripts:  # deferred scripts run in the order written
            head.append(f'<script src="{html.escape(link(script))}" defer></script>')
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n'
        + "\n".join(head)
        + f"\n<title>{line(title)}</title>\n</head>\n<body>\n{body}\n</body>\n</html>\n"
    )


def conversation(
    info: ConversationInfo,
    events: Sequence[Event],
    *,
    link: Link | None,
    page: Page,
    fetch: Fetch | None = None,
) -> str:
    """The main column of one conversation: its title, model, turns and
    cost, then each turn's user message, the answer in stream order (rendered
    Markdown with numbered citations, reasoning and hosted activity
    collapsed, each tool call folded with its result), its sources as cards with their
    excerpts, its usage and cost, attachments as thumbnails (their bytes from
    ``fetch``).  Without ``link`` (an export) the page has no app links."""
    out = ['<header class="conv-head">']
    if link is not None:
        out.append(f'<a class="back" href="{html.escape(link("/"))}">← conversations</a>')
    out.append(f"<h1>{line(info.title or info.id)}</h1>")
    cost = events_cost(events)
    spent = f" · {line(cost.describe())}" if cost.responses else ""
    out.append(
        f'<p class="meta">{line(info.model or "no model")} · '
        f"{info.turns} turn{'s' if info.turns != 1 else ''}{spent} · "
        f'<span class="id">{line(info.id)}</span></p></header>'
    )
    views = turn_views(events)
    asked = [v.turn for v in views if v.rewound is None and _asks(v.events)]
    for view in views:
        actions: tuple[str, ...] = ()
        if link is not None and view.turn in asked:
            actions = ("retry", "edit") if view.turn == asked[-1] else ("edit",)
        answer = _Answer(view.turn, page, fetch, link, info.id)
        out.append(_turn(answer, view.events, view.rewound, actions))
    return "\n".join(out)


def _asks(events: Sequence[Event]) -> bool:
    """Whether a turn has a user message (one to retry or edit)."""
    return any(
        isinstance(e.body, MessageBody) and e.body.role == "user" and e.body.source == "user"
        for e in events
    )


class _Answer:
    """One turn's answer being written: its footnotes and open timeline."""

    def __init__(
        self, turn: int, page: Page, fetch: Fetch | None, link: Link | None, conversation: str
    ) -> None:
        self.turn = turn
        self.page = page
        self.fetch = fetch
        self.link = link
        self.conversation = conversation
        self.event = ""
        """The id of the event being read."""
        self.notes = Footnotes()
        self.out: list[str | ToolFold] = []
        self.at: str | None = None
        """When the event being read was stored."""
        self.folds: dict[str, ToolFold] = {}
        self.step: list[ToolFold] = []
        """The calls of the response being read, until its record."""
        self.timeline: list[str] | None = None
        self.frames: list[str] = []
        self.status = ""
        self.started: dict[str, HostedActivity] = {}
        self.inputs: dict[str, tuple[str, JSONValue]] = {}
        """Each activity of the open fold: its label and input."""
        self.span: list[str] = []
        """When the open fold's transitions were stored."""
        self.run: list[TextBlock] = []

    def close_timeline(self) -> None:
        self.close_text()
        if self.timeline is not None:
            # Collapsed to its last status line; the search suggestions stay
            # outside, always shown (Google requires it).
            self.out.append(
                f'<details class="hosted"><summary>{line(self.hosted_summary())}</summary>'
                f'<ol class="timeline">{"".join(self.timeline)}</ol>'
                f"{hosted_inputs(self.inputs)}</details>" + "".join(self.frames)
            )
            self.timeline = None
            self.frames = []
            self.inputs = {}
            self.span = []

    def hosted_summary(self) -> str:
        """The fold's line: the last status, how many activities it holds
        when more than one, and how long they took when a second or more
        (shorter spans are when the stream's events arrived, not work)."""
        words = [self.status]
        if len(self.inputs) > 1:
            words.append(f"{len(self.inputs)} activities")
        if len(self.span) > 1:
            took = duration(self.span[0], self.span[-1])
            if took is not None and not took.endswith(" ms"):
                words.append(took)
        return " · ".join(words)

    def part(self, part: Part) -> None:
        if isinstance(part, HostedActivity):
            self.close_text()
            self.hosted(part)
            return
        if isinstance(part, TextBlock):
            if self.timeline is not None:
                self.close_timeline()
            self.run.append(part)
            return
        self.close_timeline()
        if isinstance(part, ReasoningBlock):
            if not part.text.strip():
                # Nothing to unfold: the provider sent the reasoning encrypted.
                self.out.append('<p class="reasoning-redacted">reasoning (redacted)</p>')
                return
            summary = reasoning_summary(part.text, 60)
            self.out.append(
                f'<details class="reasoning"><summary>{line(summary)}</summary>'
                f'<div class="reasoning-text">{markdown_html(part.text)}</div></details>'
            )
        elif isinstance(part, ToolCallBlock):
            fold = ToolFold(part, self.at)
            self.folds[part.id] = fold
            self.step.append(fold)
            self.out.append(fold)
        elif isinstance(part, ToolResultBlock):
            self.tool_result(part)
        elif isinstance(part, ATTACHMENTS):
            self.out.append(media_figure(part, self.fetch, self.link))
        else:
            # The default arm: a block type this page does not know (a
            # plugin's, or one nobody registered) is named, never dumped.
            tag = part.type if isinstance(part, UnknownBlock) else str(getattr(part, "type", "?"))
            self.out.append(f'<div class="block-other">[{line(tag)} block kept, not shown]</div>')

    def tool_result(self, result: ToolResultBlock) -> None:
        """A result goes into its call's fold (where the call is); one whose
        call is not in this turn is a fold of its own, here."""
        fold = self.folds.get(result.call_id)
        if fold is None or fold.result is not None:
            fold = ToolFold(None)
            self.out.append(fold)
        fold.result = result
        fold.answered_at = self.at

    def record(self, record: ResponseRecord, at: str) -> None:
        """A response's record: the record of a step that only called tools
        goes inside the fold of its last call (no usage line between every
        call and its result); any other is a line here."""
        line_html = _record(record, at)
        if folded_record(record) and self.step and line_html:
            self.step[-1].notes.append(line_html)
        else:
            self.out.append(line_html)
        self.step = []

    def waiting(self, awaiting: Awaiting) -> None:
        """A stopped run: its calls' folds say what they wait for."""
        for ids, what in ((awaiting.approval, "approval"), (awaiting.results, "result")):
            for call in ids:
                if call in self.folds:
                    self.folds[call].waiting = what

    def decided(self, decision: Decision) -> None:
        """The answers that resumed a run: a refused call's fold says so."""
        for call in decision.refused:
            if call in self.folds:
                self.folds[call].refused = True

    def written(self) -> str:
        """The turn's HTML, each tool fold written now that its result is known.
        No whitespace between parts: text blocks are inline, and a newline
        between two of them would show as a space inside a sentence."""
        return "".join(
            part if isinstance(part, str) else part.html(self.fetch, self.link) for part in self.out
        )

    def close_text(self) -> None:
        """Write the run of text blocks as one Markdown document: a provider
        splits one answer into many blocks (Anthropic: one per citation),
        and Markdown spans across them."""
        if not self.run:
            return
        source: list[str] = []
        markers: dict[int, str] = {}
        offset = 0
        for block in self.run:
            for point, numbers in self.notes.points(block).items():
                markers[offset + point] = markers.get(offset + point, "") + "".join(
                    f'<sup class="cite"><a href="#fn-{self.turn}-{n}" '
                    f'id="ref-{self.turn}-{n}">[{n}]</a></sup>'
                    for n in numbers
                )
            source.append(block.text)
            offset += len(block.text)
        incomplete = not all(block.complete for block in self.run)
        self.run = []
        self.out.append(f'<div class="text">{markdown_html("".join(source), markers)}</div>')
        if incomplete:
            self.out.append('<p class="warn">interrupted: the text above is what arrived</p>')

    def hosted(self, transition: HostedActivity) -> None:
        started = self.started.get(transition.id)
        if started is None:
            self.started[transition.id] = transition
        if self.timeline is None:
            self.timeline = []
        status = activity_line(transition, started)
        self.status = status
        data = transition.input if transition.input is not None else (started and started.input)
        self.inputs[transition.id] = (activity_label(transition.name), data or None)
        if self.at is not None:
            self.span.append(self.at)
        state = html.escape(transition.state)
        self.timeline.append(f'<li class="activity" data-state="{state}">{line(status)}</li>')
        entry = search_entry_point(transition)
        if entry is None:
            return
        if self.link is not None:
            # Served: the frame is a document of its own, under its own
            # policy (routes/frames.py), as the live chat draws it.
            path = suggestions_path(self.conversation, self.event)
            source = f'src="{html.escape(self.link(path), quote=True)}"'
        else:
            # Exported (one file): the frame's HTML inline; a srcdoc frame
            # inherits the page's policy, which allows its style by hash.
            self.page.allow_styles_of(entry)
            source = f'srcdoc="{html.escape(entry, quote=True)}"'
        self.frames.append(
            f'<iframe class="search-entry-point" title="Google search suggestions" '
            f'sandbox="{ENTRY_POINT_SANDBOX}" referrerpolicy="no-referrer" {source}></iframe>'
        )

    def footnotes(self) -> None:
        self.close_timeline()
        if not self.notes:
            return
        items = []
        for note in self.notes.notes:
            anchor = f'id="fn-{self.turn}-{note.number}"'
            title = html.escape(note.title) if note.title else "(untitled)"
            if note.locations:
                where = html.escape("; ".join(note.locations))
                title += f', <span class="location">{where}</span>'

            if note.url is not None:
                href = html.escape(note.url, quote=True)
                body = (
                    f'<a class="source" href="{href}" rel="noopener noreferrer nofollow" '
                    f'target="_blank">{title}</a> '
                    f'<span class="url">{html.escape(domain(note.url))}</span>'
                )
            elif note.unsafe_scheme:
                body = f'{title} <span class="removed">({html.escape(note.unsafe_scheme)}: link removed)</span>'
            else:
                body = title
            quotes = "".join(f"<blockquote>{html.escape(e)}</blockquote>" for e in note.excerpts)
            back = f' <a class="back-ref" href="#ref-{self.turn}-{note.number}">↩</a>'
            items.append(f'<li {anchor} value="{note.number}">{body}{back}{quotes}</li>')
        self.out.append('<ol class="footnotes">' + "".join(items) + "</ol>")


_REWOUND = {
    "retry": "replaced by a retry",
    "edit": "replaced by an edited message",
    "refused": "refused before it was sent: left out of later requests",
}


def _turn(
    answer: _Answer,
    events: Sequence[Event],
    rewound: str | None = None,
    actions: Sequence[str] = (),
) -> str:
    """One turn's section, written by ``answer``; a rewound turn is marked
    (it stays in the log but is no longer sent); ``actions`` are the chat's
    buttons for it."""
    number = answer.turn
    if rewound is not None:
        out = [f'<section class="turn rewound" id="turn-{number}">']
        note = _REWOUND.get(rewound, "left out of the conversation")
        out.append(f'<p class="rewound-note">{line(note)}</p>')
    else:
        out = [f'<section class="turn" id="turn-{number}">']
    for event in events:
        body, shown = event.body, event_shown(event)
        answer.at = event.at
        answer.event = event.id
        if isinstance(shown, MessageBody):
            speaker, words = message_speaker(shown)
            if speaker == "assistant":
                for part in body.content:
                    answer.part(part)
                continue
            answer.close_timeline()
            if speaker == "system":
                answer.out.append(f'<div class="system">system: {text(words)}</div>')
            elif speaker == "context":
                answer.out.append(f'<div class="context">{line(body.source)}: {text(words)}</div>')
            elif speaker == "tool":
                # A step's results are stored together: a call's own time
                # is known only when its result was stored alone.
                results = sum(isinstance(p, ToolResultBlock) for p in body.content)
                answer.at = event.at if results <= 1 else None
                for part in body.content:
                    answer.part(part)
            else:
                answer.out.append(f'<div class="user">{text(words)}</div>')
                for part in body.content:
                    if not isinstance(part, TextBlock):
                        answer.part(part)
        elif isinstance(shown, HostedActivity):
            answer.part(shown)
        elif isinstance(shown, ResponseRecord):
            answer.close_timeline()
            answer.record(shown, event.at)
        elif isinstance(shown, Notice):
            # Worded as `elelem show` and the Markdown export word them.
            answer.close_timeline()
            if isinstance(body, Awaiting):
                answer.waiting(body)  # the calls' folds say what they wait for
            elif isinstance(body, Decision):
                answer.decided(body)
            answer.out.append(f'<p class="notice {shown.kind}">{line(shown.text)}</p>')
            for part in shown.parts:
                answer.part(part)
        elif isinstance(shown, KeptEvent):
            answer.close_timeline()
            answer.out.append(
                f'<div class="notice">[{line(shown.kind)} event kept, not shown]</div>'
            )
    answer.footnotes()
    out.append(answer.written())
    if actions:
        buttons = "".join(
            f'<button type="button" class="{a}" data-turn="{number}">{a.capitalize()}</button>'
            for a in actions
        )
        out.append(f'<div class="turn-actions">{buttons}</div>')
    out.append("</section>")
    return "\n".join(out)


def hosted_inputs(inputs: dict[str, tuple[str, JSONValue]]) -> str:
    """What each hosted activity of a fold was given (a query, the code it
    ran), as indented JSON, sanitized; nothing when none was given."""
    rows = [
        f"<dt>{line(label)}</dt><dd><pre>{text(msgspec.json.format(msgspec.json.encode(data)).decode())}</pre></dd>"
        for label, data in inputs.values()
        if data is not None
    ]
    return f'<dl class="activity-inputs">{"".join(rows)}</dl>' if rows else ""


def record_notes(record: ResponseRecord, at: str) -> list[tuple[str, str]]:
    """A response's outcome, usage, cost (priced as of when it was stored,
    ``at``) and model: each its class and its text, sanitized (one line
    each), not escaped.  The stored page writes them under the answer
    (:func:`_record`); the live page the same, from the stream
    (:mod:`elelem.web.dated`)."""
    notes = []
    outcome = record_outcome(record)
    if outcome is not None:
        notes.append(outcome)
    elif record.finish not in (None, "stop", "tool-calls"):
        failure = f": {record.failure}" if record.failure else ""
        notes.append(("warn", f"finished: {record.finish or ''}{failure}"))
    if record.usage is not None:
        notes.append(("usage", usage_line(record.usage)))
        notes.append(("cost", response_cost(record, at).describe()))
    if record.model:
        notes.append(("model", record.model))
    return [(kind, sanitize_line(words)) for kind, words in notes]


def folded_record(record: ResponseRecord) -> bool:
    """Whether ``record``'s line goes inside the fold of its step's last
    tool call (a step that only called tools: no usage line between every
    call and its result) rather than under the answer."""
    return record.finish == "tool-calls" and record_outcome(record) is None


def _record(record: ResponseRecord, at: str) -> str:
    """A response's outcome, usage, cost and model, under its answer
    (:func:`record_notes`)."""
    notes = [
        f'<span class="{kind}">{html.escape(words, quote=True)}</span>'
        for kind, words in record_notes(record, at)
    ]
    return f'<p class="response">{" · ".join(notes)}</p>' if notes else ""


def export_html(
    info: ConversationInfo, events: Sequence[Event], fetch: Fetch | None = None
) -> bytes:
    """One self-contained HTML file of a conversation: the viewer's templates,
    the stylesheet inlined and allowed by hash, images inline, a policy that
    runs no script."""
    page = Page()
    body = conversation(info, events, link=None, page=page, fetch=fetch)
    body = f'<main id="main" class="main conversation">{body}</main>'
    return document(info.title or info.id, body, link=None, page=page, inline_css=True).encode(
        "utf-8"
    )


__all__ = [
    "ENTRY_POINT_SANDBOX",
    "Link",
    "Page",
    "attribute",
    "content_security_policy",
    "conversation",
    "document",
    "export_html",
    "folded_record",
    "line",
    "record_notes",
    "style_hash",
    "stylesheet",
    "suggestions_path",
    "text",
]
