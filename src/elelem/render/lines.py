"""The words of the display: footnotes, hosted-activity status lines, reasoning
summaries and the usage line, as plain sanitized strings.

These are pure functions of vocabulary values, shared by every output mode
(live terminal, static terminal, plain text), so the same conversation reads
the same everywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import msgspec

from elelem.conversation.events import ResponseRecord
from elelem.conversation.projections import add_usage as sum_usage
from elelem.render.sanitize import (
    decode_excerpt,
    domain,
    safe_url,
    sanitize,
    sanitize_line,
    url_scheme,
)
from elelem.stream import Retry
from elelem.vocabulary import (
    Attribution,
    AudioBlock,
    BytesSource,
    ChunksSource,
    DocumentBlock,
    DocumentLocation,
    FileSource,
    HostedActivity,
    ImageBlock,
    SearchResultSource,
    TextBlock,
    TextSource,
    URLSource,
    Usage,
    neutral_activity_name,
)
from elelem.vocabulary.json import JSONValue, decode_json
from elelem.vocabulary.malformed import PayloadFault

ELLIPSIS = "…"


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` code points, with an ellipsis when cut."""
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + ELLIPSIS


# --------------------------------------------------------------------------
# Citations
# --------------------------------------------------------------------------


@dataclass
class Footnote:
    """One cited source of an answer: its number and what is shown for it."""

    number: int
    title: str
    url: str | None
    unsafe_scheme: str
    excerpts: list[str] = field(default_factory=list)
    locations: list[str] = field(default_factory=list)
    """Where in a document of the conversation (``pp. 3–4``), each distinct one."""

    def lines(self, *, excerpts: bool) -> list[str]:
        """The footnote as display lines: ``[n] title — domain``, the URL, and
        (with ``excerpts``) each distinct quoted excerpt.  A document's
        footnote names where in it: ``[2] Q3 2025 Quarterly Report, pp. 3–4``."""
        head = f"[{self.number}] {self.title}" if self.title else f"[{self.number}]"
        if self.locations:
            head += (", " if self.title else " ") + "; ".join(self.locations)
        if self.url is not None:
            host = domain(self.url)
            if host and host != self.title:
                head += f" — {host}"
        elif self.unsafe_scheme:
            head += f" — ({self.unsafe_scheme}: link removed)"
        out = [head]
        if self.url is not None:
            out.append(f"    {self.url}")
        if excerpts:
            for excerpt in self.excerpts:
                body = "\n      ".join(excerpt.splitlines())
                out.append(f"    “{body}”")
        return out


class Footnotes:
    """Numbers the sources cited in one answer, in order of first citation.

    Citations of the same source (same URL, or same title where there is no
    URL) share a number.
    """

    def __init__(self) -> None:
        self._notes: list[Footnote] = []
        self._by_key: dict[tuple[str, str], Footnote] = {}

    def __bool__(self) -> bool:
        return bool(self._notes)

    @property
    def notes(self) -> tuple[Footnote, ...]:
        """The footnotes so far, numbered from 1."""
        return tuple(self._notes)

    def cite(self, attribution: Attribution) -> int:
        """The number of ``attribution``'s source (new sources get the next number)."""
        raw_url = attribution.source.url or ""
        raw_title = attribution.source.title or ""
        found = attribution.source.document
        document = found if isinstance(found, DocumentLocation) and not raw_url else None
        if document is not None:
            # One number per document of the conversation, however often cited.
            key = ("", f"{raw_title}\x00{document.index}\x00{document.unit}")
        else:
            key = (raw_url, "" if raw_url else raw_title)
        note = self._by_key.get(key)
        if note is None:
            url = safe_url(raw_url) if raw_url else None
            title = sanitize_line(raw_title)
            if not title and url is not None:
                title = domain(url)
            note = Footnote(
                number=len(self._notes) + 1,
                title=title,
                url=url,
                unsafe_scheme=url_scheme(raw_url) if raw_url and url is None else "",
            )
            if raw_url and url is None and not note.unsafe_scheme:
                note.unsafe_scheme = "unsupported"
            self._notes.append(note)
            self._by_key[key] = note
        if document is not None:
            if not note.title:
                note.title = f"document {document.index + 1}"
            if document.label not in note.locations:
                note.locations.append(document.label)
        if attribution.excerpt:
            excerpt = decode_excerpt(attribution.excerpt).strip()
            if excerpt and excerpt not in note.excerpts:
                note.excerpts.append(excerpt)
        return note.number

    def points(self, block: TextBlock) -> dict[int, list[int]]:
        """Where in ``block`` each cited source's marker goes (a range's end,
        or the block's end for a citation of the whole block), each source
        once a point: the numbers to write there, in order of citation."""
        at: dict[int, list[int]] = {}
        end = len(block.text)
        for attribution in block.attributions:
            number = self.cite(attribution)
            point = attribution.range[1] if attribution.range is not None else end
            numbers = at.setdefault(point, [])
            if number not in numbers:
                numbers.append(number)
        return at

    def lines(self, *, excerpts: bool = False) -> list[str]:
        """Every footnote's display lines, in number order."""
        out: list[str] = []
        for note in self._notes:
            out.extend(note.lines(excerpts=excerpts))
        return out


# --------------------------------------------------------------------------
# Attachments
# --------------------------------------------------------------------------


def byte_size(n: int) -> str:
    """``n`` bytes as people read it: ``812 B``, ``312 KB``, ``1.4 MB``."""
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{round(n / 1024)} KB"
    return f"{n / (1024 * 1024):.1f} MB"


_KIND = {"application/pdf": "PDF", "text/plain": "text"}
_WHAT = {ImageBlock: "image", DocumentBlock: "document", AudioBlock: "audio"}


def attachment_line(block: ImageBlock | DocumentBlock | AudioBlock) -> str:
    """The one line that stands for an image or document, never its bytes:
    ``[image screenshot.png 1280×800, 312 KB]``, ``[document Q3 Report (PDF,
    2 pages), 48 KB]``, ``[image https://example.com/cat.jpg]``.  Names and
    URLs are untrusted: sanitized, clipped."""
    what = _WHAT.get(type(block), "document")
    source = block.source
    name = block.name
    words = [what]
    if name:
        words.append(clip(sanitize_line(name), 80))
    if isinstance(block, ImageBlock) and block.width and block.height:
        words.append(f"{block.width}\u00d7{block.height}")
    if isinstance(block, AudioBlock) and block.duration is not None:
        words.append(f"{block.duration:.1f} s")
    details: list[str] = []
    if isinstance(block, DocumentBlock):
        kind = _KIND.get(block.media_type or "", "")
        if isinstance(source, SearchResultSource):
            kind = "search result"
        elif isinstance(source, ChunksSource):
            kind = f"{len(source.chunks)} chunks"
        parts = [kind] if kind else []
        if block.pages:
            parts.append(f"{block.pages} page{'s' if block.pages != 1 else ''}")
        if parts:
            words.append(f"({', '.join(parts)})")
    if isinstance(source, BytesSource):
        details.append(byte_size(source.blob.size))
    elif isinstance(source, TextSource):
        details.append(f"{len(source.text)} characters")
    elif isinstance(source, FileSource):
        details.append(
            f"{sanitize_line(source.file.provider)} file {clip(sanitize_line(source.id), 40)}"
        )
    elif isinstance(source, URLSource) and name != source.url:
        details.append(clip(sanitize_line(source.url), 80))
    if isinstance(block, AudioBlock) and block.transcript:
        details.append(f'"{clip(sanitize_line(block.transcript), 80)}"')
    line = " ".join(words)
    if details:
        line += ", " + ", ".join(details)
    return f"[{line}]"


def marker(numbers: list[int], *, escape: bool = False) -> str:
    """``[1][3]`` for the distinct numbers, in order; Markdown-escaped with ``escape``."""
    seen: list[int] = []
    for n in numbers:
        if n not in seen:
            seen.append(n)
    if escape:
        return "".join(f"\\[{n}\\]" for n in seen)
    return "".join(f"[{n}]" for n in seen)


_FOOTNOTE_LIKE = re.compile(r"^([ \t]*)\[(\d+)\]", re.MULTILINE)


def disarm_footnotes(text: str, *, at_line_start: bool = True) -> str:
    r"""Model text with every line that starts like a footnote (``[3] …``)
    escaped as ``\[3] …``, so that in plain output no line of an answer
    can pass for one of the real footnotes printed after it.  With
    ``at_line_start`` False the text continues a line already begun, whose
    start is not a line start."""
    if "[" not in text:
        return text
    head = ""
    if not at_line_start:
        head, newline, text = text.partition("\n")
        if not newline:
            return head
        head += newline
    return head + _FOOTNOTE_LIKE.sub(r"\1\\[\2]", text)


def cited_text(block: TextBlock, notes: Footnotes, *, escape: bool = False) -> str:
    """The block's text, sanitized, with footnote markers after the cited text.

    A citation with a range gets its marker at the range's end; one without
    (Anthropic anchors a citation to its whole block) at the block's end.
    Ranges are code points of the stored text, so the text is cut at the
    marker points first and each piece sanitized on its own.
    """
    at: dict[int, list[int]] = {}
    end = len(block.text)
    for attribution in block.attributions:
        number = notes.cite(attribution)
        point = attribution.range[1] if attribution.range is not None else end
        at.setdefault(point, []).append(number)
    if not at:
        return sanitize(block.text)
    pieces: list[str] = []
    last = 0
    for point in sorted(at):
        pieces.append(sanitize(block.text[last:point]))
        pieces.append(marker(at[point], escape=escape))
        last = point
    pieces.append(sanitize(block.text[last:]))
    return "".join(pieces)


# --------------------------------------------------------------------------
# Hosted activity
# --------------------------------------------------------------------------

CODE_ACTIVITIES = frozenset({"code_execution"})
SEARCH_ACTIVITIES = frozenset({"web_search", "file_search"})
FETCH_ACTIVITIES = frozenset({"web_fetch"})
_SAID = ("searched ", "opened ", "found ", "fetched ", "visited ")

_LABELS = {"mcp": "MCP", "x_search": "X search"}


def activity_label(name: str) -> str:
    """How a hosted activity is named on screen: its neutral name in words.

    A provider's own name (as stored before names were made neutral, or one
    nobody mapped) goes through the one table first, so ``bash_code_execution``
    reads ``code execution`` and ``advisor`` reads ``advisor``.
    """
    neutral = neutral_activity_name(name)
    # Sanitize before the underscores go: "_" is part of escape sequences (APC).
    label = _LABELS.get(neutral) or sanitize_line(neutral).replace("_", " ")
    return clip(label, 60) or "hosted activity"


def _field(value: JSONValue, *names: str) -> str:
    if isinstance(value, dict):
        for name in names:
            item = value.get(name)
            if isinstance(item, str) and item:
                return item
            if isinstance(item, list) and item and all(isinstance(i, str) for i in item):
                return " | ".join(item)
        action = value.get("action")
        if isinstance(action, dict):
            return _field(action, *names)
    return ""


def _first_line(text: str, limit: int = 80) -> str:
    """The first non-blank line of ``text``, sanitized and clipped; an ellipsis
    marks lines left out."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    shown = clip(sanitize_line(lines[0].strip()), limit)
    return shown if len(lines) == 1 or shown.endswith(ELLIPSIS) else shown + " " + ELLIPSIS


def _code_detail(data: JSONValue) -> str:
    """What a code activity ran: a command (``ls -la``), an editor command and
    its file (``view /tmp/a.py``), else the first line of the code."""
    command = _field(data, "command", "commands")
    if command:
        path = _field(data, "path")
        return _first_line(f"{command} {path}" if path else command)
    return _first_line(_field(data, "code"))


def _detail(data: JSONValue) -> str:
    """The gist of any other activity's input: a query, pattern, command or tool name."""
    return _first_line(_field(data, "query", "queries", "pattern", "commands", "command", "name"))


def activity_line(transition: HostedActivity, started: HostedActivity | None = None) -> str:
    """The status line for a hosted-activity transition.

    ``searching "q"`` / ``searched "q" → 10 results`` / ``search failed: …``,
    ``fetching example.com`` / ``fetched example.com``, ``code execution:
    ls -la`` / ``code execution: ls -la → exit 0`` (``running code`` /
    ``ran code → exit 0`` when the input names nothing), and for any other
    activity its label, with the gist of its input where there is one
    (``tool search: weather → 2 tools found``, ``MCP running``).  The input
    comes from ``started`` when the transition itself carries none.  Names are
    read through the neutral table, so a provider's own name reads the same.
    """
    name = neutral_activity_name(transition.name)
    data = transition.input if transition.input is not None else (started and started.input)
    summary = clip(sanitize_line(transition.summary), 120)
    state = transition.state
    if name in SEARCH_ACTIVITIES:
        query = clip(sanitize_line(_field(data, "query", "queries")), 100)
        what = f' "{query}"' if query else ""
        if state == "started":
            return f"searching{what}"
        if state == "failed":
            return f"search failed: {summary or 'no reason given'}"
        if summary.startswith(_SAID):
            return summary  # the shape already said what happened (OpenAI)
        return f"searched{what} → {summary}" if summary else f"searched{what}"
    if name in FETCH_ACTIVITIES:
        url = _field(data, "url", "urls")
        target = domain(url) or clip(sanitize_line(url), 100)
        if state == "started":
            return f"fetching {target}".rstrip()
        if state == "failed":
            return f"fetch failed: {summary or 'no reason given'}"
        if summary.startswith("fetched"):
            return summary
        line = f"fetched {target}".rstrip()
        return f"{line} → {summary}" if summary else line
    label = activity_label(name)
    if state == "failed":
        return f"{label} failed: {summary or 'no reason given'}"
    if name in CODE_ACTIVITIES:
        detail = _code_detail(data)
        if not detail:
            if state == "started":
                return "running code"
            return f"ran code → {summary}" if summary else "ran code"
    else:
        detail = _detail(data)
    if detail:
        line = f"{label}: {detail}"
        return f"{line} → {summary}" if state != "started" and summary else line
    if state == "started":
        return f"{label} running"
    return f"{label} → {summary}" if summary else f"{label} done"


def unfinished_line(started: HostedActivity) -> str:
    """The line for an activity that started and never reached a terminal state."""
    return f"{activity_line(started)} — did not finish"


def malformed_line(fault: PayloadFault) -> str:
    """The line for a payload the provider sent malformed (recorded on its
    block, not sent back): which, where, what, every part sanitized."""
    return (
        f"malformed {sanitize_line(fault.provider)} {sanitize_line(fault.format)} payload"
        f" at {sanitize_line(fault.where)}: {sanitize_line(fault.what)} (kept, not replayed)"
    )


# --------------------------------------------------------------------------
# Reasoning, tools, usage
# --------------------------------------------------------------------------


def reasoning_summary(text: str, limit: int = 100) -> str:
    """One line for a reasoning block: its opening words and its length."""
    clean = sanitize_line(text)
    if not clean:
        return "thinking (redacted)"
    words = len(clean.split())
    return f"thinking: {clip(clean, limit)} ({words} word{'s' if words != 1 else ''})"


_HOSTED_NOUNS = {
    "web_search": "web search",
    "web_fetch": "web fetch",
    "code_execution": "code execution",
    "file_search": "file search",
    "tool_search": "tool search",
    "image_generation": "image generation",
    "mcp": "MCP call",
    "shell": "shell call",
    "map_search": "map search",
    "x_search": "X search",
    "server_side_tools": "server-side tool call",
    "search_sources": "search source",
}
"""What one of each hosted counter is called; many of them take the
English plural (``web searches``, ``MCP calls``)."""


def _plural(noun: str) -> str:
    return noun + ("es" if noun.endswith(("s", "sh", "ch", "x")) else "s")


def add_usage(a: Usage | None, b: Usage | None) -> Usage | None:
    """The sum of two responses' usage, either of which may be missing."""
    if a is None:
        return b
    if b is None:
        return a
    return sum_usage(a, b)


def usage_line(usage: Usage) -> str:
    """``usage: 2,417 in · 312 out · 96 reasoning · cache 1,024 read, 10 written · 1 web search``.

    Zero counters other than input and output are left out.
    """
    parts = [f"{usage.input:,} in", f"{usage.output:,} out"]
    if usage.reasoning:
        parts.append(f"{usage.reasoning:,} reasoning")
    cache = []
    if usage.cache_read:
        cache.append(f"{usage.cache_read:,} read")
    if usage.cache_write:
        cache.append(f"{usage.cache_write:,} written")
    if cache:
        parts.append("cache " + ", ".join(cache))
    counts: dict[str, int] = {}
    for key, count in usage.hosted.items():
        # Counters stored under a provider's own name add up with the neutral one.
        name = neutral_activity_name(key)
        counts[name] = counts.get(name, 0) + count
    for name, count in counts.items():
        if not count:
            continue
        noun = _HOSTED_NOUNS.get(name)
        if noun is None:
            noun = sanitize_line(name)  # a counter nobody named: as the provider spells it
        elif count != 1:
            noun = _plural(noun)
        parts.append(f"{count:,} {noun}")
    return "usage: " + " · ".join(parts)


USER_STOPS = frozenset({"interrupted", "cancelled"})
"""What a response record's ``error`` says when the user stopped it (Ctrl-C,
Stop): an interruption, not a failure."""


def record_outcome(record: ResponseRecord) -> tuple[str, str] | None:
    """How a stored response ended, when that is worth a line: ``("error",
    "failed: …")`` for a response that failed (its error, and whether
    anything arrived before it), ``("warn", "interrupted: kept what
    arrived")`` for one cut off without an error (Ctrl-C, Stop), else None.
    The one wording of ``show``, the Markdown export and the web page.
    Unsanitized: each caller escapes for its medium."""
    if record.error and record.error not in USER_STOPS:
        kept = "" if not record.payloads and record.usage is None else " (kept what arrived)"
        return "error", f"failed: {record.error}{kept}"
    if not record.complete:
        return "warn", "interrupted: kept what arrived"
    return None


def call_arguments(arguments: str) -> list[tuple[str, str]] | None:
    """A tool call's arguments as ``(name, JSON value)`` pairs, in the
    model's order (no arguments: none), or None when they are not a JSON
    object.  Not sanitized: each display sanitizes them its own way (a JSON
    value holds no raw line break)."""
    try:
        given = decode_json(arguments) if arguments.strip() else {}
    except msgspec.DecodeError:
        return None
    if not isinstance(given, dict):
        return None
    return [(str(k), msgspec.json.encode(v).decode()) for k, v in given.items()]


def retry_line(retry: Retry) -> str:
    """``retrying in 1.0 s: rate limit``: the client's visible retry; a
    fallback's move says so (``falling back to openai:gpt-4.1 after
    overloaded (HTTP 529)``)."""
    if retry.fallback is not None:
        status = f" (HTTP {retry.status})" if retry.status is not None else ""
        return f"{sanitize_line(retry.reason)} after {sanitize_line(retry.kind)}{status}"
    return f"retrying in {retry.delay:.1f} s: {sanitize_line(retry.reason)}"


__all__ = [
    "Footnote",
    "Footnotes",
    "activity_label",
    "activity_line",
    "add_usage",
    "call_arguments",
    "cited_text",
    "clip",
    "marker",
    "reasoning_summary",
    "record_outcome",
    "retry_line",
    "unfinished_line",
    "usage_line",
]
