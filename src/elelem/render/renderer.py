"""The terminal renderer: streaming chunks or stored parts in, safe display out.

Three output modes, chosen from the console:

- *live* (an interactive terminal): a live region shows what is in progress
  (streaming Markdown, a spinner per running hosted activity, reasoning per
  the display mode); committed content is printed above it;
- *static* (a terminal that is not interactive): committed content printed
  with styles, nothing in progress is drawn;
- *plain* (not a terminal): plain text, no escape sequence at all, the same
  words and footnotes.

The renderer assembles nothing: it is fed what the driver produced, each
chunk with the parts that chunk committed (``(chunk, committed)``, as
:meth:`elelem.transport.ResponseStream.with_commits` and a turn's
``on_chunk`` give them).  Committed parts are shown as they commit; deltas
only wake the live region, which reads the blocks in progress from the
source given to :meth:`Renderer.follow` (the driver's assembler) when it
redraws.  Feeding a delta costs the same however long the answer is.

Every untrusted string is sanitized before it reaches rich, is never parsed
as rich markup, and rich's own output for Markdown is filtered once more
(Markdown decodes entities such as ``&#x202E;`` itself).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.padding import Padding
from rich.segment import Segment
from rich.text import Text

if TYPE_CHECKING:
    from rich.live import Live
    from rich.markdown import Markdown
    from rich.spinner import Spinner

from elelem.render.lines import (
    Footnotes,
    activity_line,
    add_usage,
    attachment_line,
    cited_text,
    clip,
    disarm_footnotes,
    malformed_line,
    reasoning_summary,
    retry_line,
    unfinished_line,
    usage_line,
)
from elelem.render.link_budget import bound_links, link_budget
from elelem.render.obligations import obligation_lines
from elelem.render.sanitize import neutralize_markdown_links, sanitize, sanitize_line
from elelem.stream import (
    BlockStart,
    Chunk,
    Finish,
    Hosted,
    ReasoningDelta,
    ResponseStart,
    Retry,
    TextDelta,
    UsageUpdate,
)
from elelem.vocabulary import (
    AudioBlock,
    DocumentBlock,
    HostedActivity,
    ImageBlock,
    Part,
    ReasoningBlock,
    ReasoningDisplay,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    UnknownBlock,
    Usage,
    block_mapping,
)
from elelem.vocabulary.malformed import block_faults

CitationDisplay = Literal["short", "full"]

_QUIET_FINISHES = frozenset({"stop", "tool-calls", "paused"})


@dataclass(frozen=True)
class RenderOptions:
    """What to show: reasoning per ``reasoning`` (hidden | summary | full),
    citation excerpts with ``citations="full"``, and the usage line."""

    reasoning: ReasoningDisplay = "summary"
    citations: CitationDisplay = "short"
    usage: bool = True


class _Safe:
    """Re-sanitizes what rich renders and drops hyperlinks and control codes."""

    def __init__(self, inner: RenderableType) -> None:
        self.inner = inner

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for seg in console.render(self.inner, options):
            if seg.control:
                continue
            style = seg.style
            if style is not None and style.link:
                style = style.update_link(None)
            yield Segment(sanitize(seg.text), style)


class _Tail:
    """The last lines of a renderable that fit the terminal, so a live region
    never grows past the screen (rich cannot redraw what scrolled away)."""

    def __init__(self, inner: RenderableType) -> None:
        self.inner = inner

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = console.render_lines(self.inner, options, pad=False)
        keep = max(4, console.size.height - 2)
        for line in lines[-keep:]:
            yield from line
            yield Segment.line()


OpenParts = Callable[[], Sequence[Part]]
"""A source of the blocks in progress (marked incomplete), such as
:meth:`elelem.transport.ResponseStream.open_parts`."""


def _nothing_open() -> Sequence[Part]:
    return ()


class Renderer:
    """Displays one conversation's answers on ``console``.

    Feed it a live stream with :meth:`feed` (``(chunk, committed)`` pairs
    of one or more provider responses, as the driver yields them), or
    stored content with :meth:`user` and :meth:`part`; end each answer with
    :meth:`end_answer`, which prints the footnotes and the usage line.
    :meth:`follow` names where the blocks in progress are read from (for
    the live region, and for :meth:`interrupt`, which ends an answer that
    was cut off showing what had arrived).
    """

    def __init__(
        self,
        console: Console,
        options: RenderOptions | None = None,
        *,
        live: bool | None = None,
    ) -> None:
        self.console = console
        self.options = options or RenderOptions()
        self.plain = not console.is_terminal
        want_live = console.is_interactive if live is None else live
        self.live = bool(want_live) and not self.plain
        self._notes = Footnotes()
        self._run: list[str] = []
        self._plain_col0 = True
        self._plain_started = False
        self._open_parts: OpenParts = _nothing_open
        self._streaming = False
        self._running: dict[str, HostedActivity] = {}
        self._spinners: dict[str, Spinner] = {}
        self._usage: Usage | None = None
        self._response_usage: Usage | None = None
        self._live: Live | None = None
        self._active = False
        self.cost: str | None = None
        """What the answer cost (``$0.0123``, ``cost unknown``), set by the
        caller before :meth:`end_answer` ends the usage line with it."""

    @property
    def active(self) -> bool:
        """True while an answer is being shown (something was fed or shown
        since the last :meth:`end_answer`)."""
        return self._active

    # -- streaming -----------------------------------------------------------

    def follow(self, open_parts: OpenParts | None) -> None:
        """Read the blocks in progress from ``open_parts`` (None: nothing is
        shown in progress).  It is called when the live region redraws, on
        rich's refresh thread, and by :meth:`interrupt`."""
        self._open_parts = open_parts or _nothing_open

    def feed(self, chunk: Chunk, committed: Sequence[Part] = ()) -> None:
        """Show one chunk of a live response with what it ``committed``:
        committed parts as they commit; a delta only wakes the live region."""
        self._active = True
        kind = type(chunk)
        if kind is TextDelta or kind is ReasoningDelta:
            if self._live is None:
                self._start_live()
        elif isinstance(chunk, ResponseStart):
            self._response_usage = None
        elif isinstance(chunk, UsageUpdate):
            self._response_usage = chunk.usage
        elif (isinstance(chunk, BlockStart) and chunk.block == "reasoning") or (
            isinstance(chunk, Hosted) and chunk.transition.state == "started"
        ):
            self._start_live()
        elif isinstance(chunk, Retry):
            self.notice(retry_line(chunk), "yellow")
        # Every other chunk (citations, payloads, kinds added later) shows
        # nothing until the part it belongs to commits.
        self._streaming = kind is not Finish
        for part in committed:
            self.part(part)
        if isinstance(chunk, Finish):
            self.add_usage(self._response_usage)
            self._response_usage = None
            self.finished(chunk.reason, chunk.failure)

    def interrupt(self, note: str = "interrupted: kept what arrived") -> None:
        """The stream was cut off: :meth:`cut` it with ``note``, then
        :meth:`end_answer`."""
        self.cut(note)
        self.end_answer()

    def cut(self, note: str = "interrupted: kept what arrived") -> None:
        """The stream was cut off: show the blocks in progress as they stand
        (from :meth:`follow`'s source), count the usage it reported so far,
        and say so in a notice line.  The answer stays open, so a caller
        that counts the usage its own way can :meth:`set_usage` before
        :meth:`end_answer`."""
        if self._streaming:
            for part in self._open_parts():
                if _shows_something(part):
                    self.part(part)
            self.add_usage(self._response_usage)
        self._streaming = False
        self._flush_run()
        self._line(note, "yellow")

    def pause(self) -> None:
        """Stop the live region, printing the text it held, so what is
        written next (a question on the terminal, a status line) stays on
        screen instead of being redrawn over; the region comes back with the
        next delta.  Safe from another thread while no chunk is being fed."""
        self._stop_live()
        self._flush_run()

    # -- stored content ------------------------------------------------------

    def user(self, text: str) -> None:
        """Show a user's message (when re-rendering a stored conversation)."""
        self._flush_run()
        self._stop_live()
        lines = sanitize(text).splitlines() or [""]
        shown = "\n".join(f"> {line}" for line in lines)
        if self.plain:
            self._plain_write(shown + "\n")
        else:
            self.console.print(Text(shown, style="bold"), highlight=False)

    def part(self, part: Part) -> None:
        """Show one committed part: a block or a hosted-activity transition,
        then each malformed payload recorded on it."""
        self._part(part)
        faults = block_faults(part)
        if faults:
            self._flush_run()
            for fault in faults:
                self._line(clip(malformed_line(fault), 300), "yellow")

    def _part(self, part: Part) -> None:
        self._active = True
        if isinstance(part, TextBlock):
            self._text(part)
            return
        self._flush_run()
        if isinstance(part, HostedActivity):
            self._hosted(part)
        elif isinstance(part, ReasoningBlock):
            self._reasoning(part)
        elif isinstance(part, ToolCallBlock):
            args = clip(sanitize_line(part.arguments), 200)
            self._line(f"→ {sanitize_line(part.name)}({args})", "magenta")
        elif isinstance(part, ToolResultBlock):
            who = sanitize_line(part.name or part.call_id)
            verb = "error" if part.is_error else "result"
            self._line(f"← {who} {verb}: {clip(sanitize_line(part.content), 200)}", "magenta")
            for attachment in part.attachments or ():
                self._line(f"  {attachment_line(attachment)}", "cyan")
        elif isinstance(part, (ImageBlock, DocumentBlock, AudioBlock)):
            self._line(attachment_line(part), "cyan")
        elif isinstance(part, UnknownBlock):
            self._line(f"[{clip(sanitize_line(part.type), 60)} block kept, not shown]", "dim")
        else:
            config = getattr(part, "__struct_config__", None)
            tag = str(getattr(config, "tag", None) or type(part).__name__)
            mapping = block_mapping(tag)
            if mapping is not None and mapping.render is not None:
                # A plugin block type's own line: its text is untrusted too.
                self._line(sanitize_line(mapping.render(part)), "cyan")
                return
            self._line(f"[{sanitize_line(tag)} block kept, not shown]", "dim")

    def add_usage(self, usage: Usage | None) -> None:
        """Count one response's usage into this answer's usage line."""
        self._usage = add_usage(self._usage, usage)

    def set_usage(self, usage: Usage | None) -> None:
        """Make ``usage`` what this answer's usage line says, in place of the
        streamed responses' counted so far: a caller that counts the answer
        its own way (the CLI, as its ``--json`` turn line does) says it
        once; None leaves the line off."""
        self._usage = usage

    def finished(self, reason: str | None, failure: str | None = None) -> None:
        """Say how a response ended when that is not the ordinary end of an
        answer (``stop``, ``tool-calls``, or ``paused`` with its continuation)."""
        if reason is None or reason in _QUIET_FINISHES:
            return
        self._flush_run()
        line = f"stopped: {sanitize_line(reason)}"
        if failure:
            line += f" ({clip(sanitize_line(failure), 200)})"
        self._line(line, "yellow")

    def notice(self, text: str, style: str = "dim") -> None:
        """A line of the tool's own (sanitized all the same)."""
        self._flush_run()
        self._line(" ".join(sanitize(text).split("\n")), style)

    def end_answer(self) -> None:
        """Finish the answer: unfinished activities, footnotes, the usage line."""
        self._flush_run()
        self._stop_live()
        for started in self._running.values():
            self._line(unfinished_line(started), "yellow")
        self._running.clear()
        self._spinners.clear()
        if self._notes:
            self._blank()
            for line in self._notes.lines(excerpts=self.options.citations == "full"):
                style = "dim" if line.startswith("    ") else "cyan"
                self._line(line, style, wrap=not line.startswith("    http"))
        if self.options.usage and self._usage is not None:
            if self._active:
                # Apart from the answer above it; an answer that showed
                # nothing (a run that spent before it ended early) has the
                # line alone.
                self._blank()
            line = usage_line(self._usage)
            if self.cost is not None:
                line += " · " + sanitize_line(self.cost)
            self._line(line, "dim")
        self._notes = Footnotes()
        self._usage = None
        self.cost = None
        self._streaming = False
        self._active = False

    # -- parts -----------------------------------------------------------------

    def _text(self, block: TextBlock) -> None:
        if self.plain:
            text = neutralize_markdown_links(cited_text(block, self._notes))
            text = disarm_footnotes(text, at_line_start=self._plain_col0)
            if not self._plain_started and self._plain_col0:
                text = text.lstrip("\n")  # a run opens on a fresh line already
            self._plain_write(text)
            self._plain_started = bool(text) or self._plain_started
        else:
            self._run.append(neutralize_markdown_links(cited_text(block, self._notes, escape=True)))

    def _hosted(self, transition: HostedActivity) -> None:
        if transition.state == "started":
            self._running[transition.id] = transition
            if self.live:
                from rich.spinner import Spinner  # deferred as Live is (_start_live)

                self._spinners[transition.id] = Spinner(
                    "dots", Text(activity_line(transition), style="cyan")
                )
            return
        started = self._running.pop(transition.id, None)
        self._spinners.pop(transition.id, None)
        style = "red" if transition.state == "failed" else "cyan"
        self._line(activity_line(transition, started), style)
        # Google requires its search suggestions shown with a grounded answer.
        for line in obligation_lines(transition):
            self._line(line, "cyan", wrap=False)

    def _reasoning(self, block: ReasoningBlock) -> None:
        mode = self.options.reasoning
        if mode == "hidden":
            return
        if mode == "summary" or not block.text.strip():
            self._line(reasoning_summary(block.text), "dim italic")
            return
        body = sanitize(block.text).strip("\n")
        shown = "thinking:\n" + "\n".join(f"  {line}" for line in body.splitlines())
        self._line(shown, "dim italic")

    # -- output ------------------------------------------------------------------

    def _flush_run(self) -> None:
        if self.plain:
            if self._plain_started:
                if not self._plain_col0:
                    self._plain_write("\n")
                self._plain_started = False
            return
        if not self._run:
            return
        source = "".join(self._run)
        self._run = []
        self.console.print(_Safe(bounded_markdown(source)))

    def _line(self, text: str, style: str, *, wrap: bool = True) -> None:
        if self.plain:
            if not self._plain_col0:
                self._plain_write("\n")
            self._plain_write(text + "\n")
            return
        if not wrap:
            self.console.print(Text(text, style=style), highlight=False, soft_wrap=True)
            return
        # Indented lines (reasoning, footnote excerpts) keep their indent
        # when the terminal width wraps them.
        for line in text.split("\n"):
            body = line.lstrip(" ")
            indent = len(line) - len(body)
            shown: RenderableType = Text(body, style=style)
            if indent:
                shown = Padding(shown, (0, 0, 0, indent))
            self.console.print(shown, highlight=False)

    def _blank(self) -> None:
        if self.plain:
            if not self._plain_col0:
                self._plain_write("\n")
            self._plain_write("\n")
        else:
            self.console.print()

    def _plain_write(self, text: str) -> None:
        if not text:
            return
        self.console.file.write(text)
        self.console.file.flush()
        self._plain_col0 = text.endswith("\n")

    # -- the live region ---------------------------------------------------------

    def _start_live(self) -> None:
        if not self.live or self._live is not None:
            return
        # Deferred: the live region (and its spinners) exists on a terminal
        # only; an answer written to a pipe or file never imports it.
        from rich.live import Live

        self._live = Live(
            console=self.console,
            get_renderable=self._live_view,
            transient=True,
            refresh_per_second=10,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._live.start()

    def _stop_live(self) -> None:
        live, self._live = self._live, None
        if live is not None:
            live.stop()

    def _live_view(self) -> RenderableType:
        # Runs on rich's refresh thread: read snapshots (copying a dict is
        # atomic; the source copies its own state), never hold a lock that
        # printing also needs.
        from rich.spinner import Spinner  # deferred as Live is (_start_live)

        items: list[RenderableType] = list(self._spinners.copy().values())
        texts: list[str] = list(self._run)
        for part in self._open_parts():
            if isinstance(part, ReasoningBlock):
                if self.options.reasoning == "full" and part.text.strip():
                    items.append(Text(sanitize(part.text), style="dim italic"))
                else:
                    items.append(Spinner("dots", Text("thinking…", style="dim italic")))
            elif isinstance(part, TextBlock):
                texts.append(sanitize(part.text))
        pending = "".join(texts)
        if pending:
            items.append(bounded_markdown(neutralize_markdown_links(pending)))
        return _Safe(_Tail(Group(*items)))


def bounded_markdown(source: str) -> Markdown:
    """``source`` as rich Markdown for the terminal (no hyperlinks), its
    links bounded by :func:`~elelem.render.link_budget.link_budget` (rich
    prints each link's URL after its text)."""
    # Imported here: rich's Markdown brings markdown-it and pygments, which
    # every command would pay at start; only a terminal shows Markdown.
    from rich.markdown import Markdown

    markdown = Markdown(source, hyperlinks=False)
    bound_links(markdown.parsed, link_budget(source))
    return markdown


def _shows_something(part: Part) -> bool:
    """What an interrupted stream keeps of a block in progress (as
    :meth:`~elelem.stream.Assembler.partial` does): text or citations,
    reasoning with text."""
    if isinstance(part, TextBlock):
        return bool(part.text or part.attributions)
    return not isinstance(part, ReasoningBlock) or bool(part.text)


def render_parts(renderer: Renderer, parts: Iterable[Part]) -> None:
    """Show stored parts in order (a convenience for re-rendering messages)."""
    for part in parts:
        renderer.part(part)


__all__ = ["CitationDisplay", "RenderOptions", "Renderer", "bounded_markdown", "render_parts"]
