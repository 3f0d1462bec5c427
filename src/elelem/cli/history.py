"""``elelem log``, ``show``, ``export`` and ``import``: the stored conversations."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import click
import msgspec

from elelem.cli.console import make_console, make_renderer
from elelem.cli.exits import EXIT_STORE, EXIT_USAGE, Failure, debug_option, guarded
from elelem.cli.flags import display_options, max_bytes_option
from elelem.cli.json_out import ndjson_line
from elelem.cli.safety import binary_stdout, current_redactor
from elelem.cli.store import new_store_note, store_from_env
from elelem.conversation import (
    Conversation,
    ConversationInfo,
    ConversationNotFound,
    Store,
    export_conversation,
    import_conversation,
)
from elelem.conversation.errors import ConversationExists
from elelem.conversation.sqlbase import SQLStore
from elelem.conversation.sqlite import SQLiteStore
from elelem.conversation.store import SearchHit
from elelem.providers.costs import events_cost
from elelem.reading import ReadRefused, read_file, read_stream, too_large
from elelem.render import render_events, sanitize_line
from elelem.render.lines import clip
from elelem.render.markdown import conversation_markdown
from elelem.vocabulary import ConversationId

MAX_LISTING = 2**31 - 1
"""The most ``log -n`` lists (a store's integers end somewhere)."""


def resolve_conversation(store: Store, ref: str | None) -> ConversationId:
    """The conversation ``ref`` names: an id, a unique prefix of one, or
    (None / ``last``) the most recently updated conversation."""
    if ref is None or ref == "last":
        latest = store.list_conversations(limit=1)
        if not latest:
            raise NoConversations()
        return latest[0].id
    try:
        return store.info(ConversationId(ref)).id
    except ConversationNotFound:
        pass
    matches = [c for c in store.list_conversations() if c.id.startswith(ref)]
    if len(matches) == 1:
        return matches[0].id
    if len(matches) > 1:
        raise AmbiguousConversation(ref, matches)
    raise ConversationNotFound(ref)


SHOWN_CANDIDATES = 5
"""How many candidates an ambiguous id's message lists."""


class NoConversations(ConversationNotFound):
    """``last`` (or no id) asked of a store that holds no conversation yet."""

    def __init__(self) -> None:
        super().__init__("last")
        self.args = ("there are no conversations in this store yet" + new_store_note(),)


class AmbiguousConversation(ConversationNotFound):
    """An id prefix that several conversations start with: the message lists
    the newest few with their titles, so the user can pick one."""

    def __init__(self, ref: str, matches: list[ConversationInfo]) -> None:
        shown = ", ".join(
            f"{c.id} ({clip(sanitize_line(c.title or '-'), 30)})"
            for c in matches[:SHOWN_CANDIDATES]
        )
        more = len(matches) - SHOWN_CANDIDATES
        tail = f" and {more} more" if more > 0 else ""
        super().__init__(ref)
        self.args = (
            f"{ref!r} is ambiguous: {len(matches)} conversations start so: {shown}{tail}"
            " (give more of the id)",
        )
        self.candidates = tuple(c.id for c in matches)


def _title(store: Store, hit: SearchHit) -> str:
    return store.info(hit.conversation).title or "(untitled)"


def highlighted(text: str, search: str, terminal: bool) -> str:
    """``text`` (sanitized already) with each word of ``search`` in bold on a
    terminal; unchanged elsewhere (a pipe gets no escapes)."""
    if not terminal:
        return text
    words = sorted({w for w in search.split() if w.strip('"*')}, key=len, reverse=True)
    if not words:
        return text
    pattern = re.compile("|".join(re.escape(w.strip('"*')) for w in words), re.IGNORECASE)
    return pattern.sub(lambda m: click.style(m.group(0), bold=True, underline=True), text)


def when(stamp: str) -> str:
    """An ISO timestamp shortened to ``YYYY-MM-DD HH:MM``."""
    return stamp[:16].replace("T", " ")


def log_line(info: ConversationInfo, cost: str | None = None) -> str:
    """One listing line: id, last update, turns, model, cost (when given), title."""
    turns = f"{info.turns} turn{'s' if info.turns != 1 else ''}"
    model = sanitize_line(info.model or "-")
    title = clip(sanitize_line(info.title or ""), 60)
    spent = f"{cost}  " if cost is not None else ""
    # Ids and times are checked on import; a store written otherwise is shown clean too.
    cid, stamp = sanitize_line(info.id), sanitize_line(when(info.updated_at))
    return f"{cid}  {stamp}  {turns:>8}  {model}  {spent}{title}".rstrip()


LOG_HEADERS = ("ID", "UPDATED", "TURNS", "MODEL", "COST", "TITLE")
"""The header row of ``elelem log`` on a terminal."""


def log_columns(info: ConversationInfo, cost: str | None) -> list[str]:
    """A listing line's columns (:func:`log_line`'s values), for a table."""
    return [
        sanitize_line(info.id),
        sanitize_line(when(info.updated_at)),
        str(info.turns),
        sanitize_line(info.model or "-"),
        cost or "-",
        clip(sanitize_line(info.title or ""), 60),
    ]


def column_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """``rows`` under ``headers``, each column as wide as its widest value
    (the last one left ragged): what a terminal shows; a pipe gets the
    plain lines, with no header to skip."""
    widths = [max(len(r[i]) for r in (headers, *rows)) for i in range(len(headers) - 1)]
    lines = []
    for row in (headers, *rows):
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
    return "\n".join(lines) + "\n"


def conversation_cost(conversation: Conversation) -> str | None:
    """What every response of ``conversation`` cost (``$0.0123``, ``cost
    unknown``), or None before its first response."""
    cost = events_cost(conversation.events)
    return cost.describe() if cost.responses else None


@click.group("log", invoke_without_command=True)
@click.option("-n", "--limit", type=click.IntRange(min=1), default=20, show_default=True)
@click.option(
    "-s", "--search", metavar="TEXT", help="List the messages that contain TEXT (full-text)."
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@click.pass_context
@debug_option
@guarded
def log_command(ctx: click.Context, limit: int, search: str | None, as_json: bool) -> None:
    """List stored conversations, newest first (`elelem log path` prints the store)."""
    if ctx.invoked_subcommand is not None:
        return
    if limit > MAX_LISTING:
        raise Failure(f"-n {limit} is more than {MAX_LISTING} conversations", EXIT_USAGE)
    store = store_from_env()
    out = sys.stdout
    if search is not None:
        hits = store.search(search, limit=limit)
        titles: dict[str, str] = {}
        for hit in hits:
            if as_json:
                out.write(ndjson_line(msgspec.structs.asdict(hit)) + "\n")
                continue
            title = clip(sanitize_line(titles.setdefault(hit.conversation, _title(store, hit))), 40)
            snippet = highlighted(clip(sanitize_line(hit.snippet), 100), search, out.isatty())
            out.write(f"{sanitize_line(hit.conversation)}  {title}  turn {hit.turn}  {snippet}\n")
        if not hits:
            click.echo("no matches", err=True)
        return
    infos = store.list_conversations(limit=limit)
    rows: list[list[str]] = []
    for info in infos:
        conversation = Conversation.open(store, info.id)
        if as_json:
            cost = events_cost(conversation.events)
            spent = None if cost.total is None else str(cost.total)
            # The listing entry's fields as stored, and the cost.
            entry = {**msgspec.structs.asdict(info), "cost_usd": spent}
            out.write(ndjson_line(entry) + "\n")
        elif out.isatty():
            rows.append(log_columns(info, conversation_cost(conversation)))
        else:
            out.write(log_line(info, conversation_cost(conversation)) + "\n")
    if rows:
        out.write(column_table(LOG_HEADERS, rows))
    if not infos:
        click.echo("no conversations yet" + new_store_note(), err=True)


@log_command.command("path")
@debug_option
@guarded
def log_path_command() -> None:
    """Print where the conversation store is (a path, or a URL without password)."""
    store = store_from_env()
    where = store.where if isinstance(store, SQLStore) else type(store).__name__
    if isinstance(store, SQLiteStore) and store.path != ":memory:":
        # sqlite:///rel.db is relative to the current folder: say which file that is.
        where = os.path.abspath(store.path)
    sys.stdout.write(sanitize_line(where) + "\n")


@click.command("show")
@click.argument("conversation", required=False, metavar="[ID]")
@display_options
@debug_option
@guarded
def show_command(conversation: str | None, reasoning: str, citations: str) -> None:
    """Re-render a stored conversation (ID, a unique prefix, or the latest)."""
    store = store_from_env()
    cid = resolve_conversation(store, conversation)
    convo = Conversation.open(store, cid)
    renderer = make_renderer(reasoning, citations, make_console())
    renderer.notice(log_line(convo.info, conversation_cost(convo)))
    render_events(renderer, convo.events)


def _html(store: Store, cid: ConversationId) -> bytes:
    from elelem.web.html import export_html

    return export_html(store.info(cid), store.load(cid), store.get_blob)


def _markdown(store: Store, cid: ConversationId) -> bytes:
    return conversation_markdown(store.info(cid), store.load(cid)).encode("utf-8")


def _json(store: Store, cid: ConversationId) -> bytes:
    """The NDJSON export's records (header, events, blobs) as one JSON array:
    what a program reading one JSON document wants (``llm``'s habit)."""
    lines = export_conversation(store, cid).splitlines()
    # Each line is one JSON object already: joined, not decoded and re-encoded.
    return b"[\n" + b",\n".join(lines) + b"\n]\n"


EXPORT_FORMATS: dict[str, Callable[[Store, ConversationId], bytes]] = {
    "ndjson": export_conversation,
    "json": _json,
    "html": _html,
    "md": _markdown,
}
"""``export --format`` name -> the function writing a conversation's bytes."""


@click.command("export")
@click.argument("conversation", required=False, metavar="[ID]")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Write to this file instead of stdout.",
)
@click.option(
    "-f",
    "--format",
    "form",
    type=click.Choice(sorted(EXPORT_FORMATS)),
    default="ndjson",
    show_default=True,
    help="ndjson: versioned, re-importable; json: the same records as one JSON array; "
    "html: one self-contained page; md: Markdown with footnotes.",
)
@debug_option
@guarded
def export_command(conversation: str | None, output: Path | None, form: str) -> None:
    """Export a conversation (ID, a unique prefix, or the latest): versioned
    NDJSON that `elelem import` reads, a self-contained HTML page, or Markdown."""
    store = store_from_env()
    data = EXPORT_FORMATS[form](store, resolve_conversation(store, conversation))
    # A store written before redaction existed may hold an echoed key.
    data = current_redactor().redact_bytes(data)
    if output is not None:
        output.write_bytes(data)
        return
    if sys.stdout.isatty():
        # The export holds untrusted text verbatim (JSON escapes only C0).
        raise Failure("an export is data: redirect stdout or use -o FILE", EXIT_USAGE)
    sys.stdout.flush()
    out = binary_stdout()
    out.write(data)
    out.flush()


MAX_IMPORT_BYTES = 256 * 1024 * 1024
"""The largest export ``elelem import`` reads unless told otherwise."""


@click.command("import")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True, path_type=str))
@click.option("--new-id", is_flag=True, help="Give the imported conversation a fresh id.")
@max_bytes_option(MAX_IMPORT_BYTES, "an export")
@debug_option
@guarded
def import_command(file: str, new_id: bool, max_bytes: int) -> None:
    """Import a conversation exported with `elelem export` (FILE or - for stdin)."""
    try:
        if file == "-":
            data = read_stream(sys.stdin.buffer, max_bytes)
        else:
            data = read_file(file, max_bytes)
    except ReadRefused as exc:
        limit = " (--max-bytes)" if str(exc) == too_large(max_bytes) else ""
        name = "stdin" if file == "-" else file
        raise Failure(f"{name}: {exc}{limit}", EXIT_USAGE) from None
    store = store_from_env()
    try:
        info = import_conversation(store, data, new_id=new_id)
    except ConversationExists as exc:
        raise Failure(
            f"{exc} in this store: import it under a fresh id with elelem import --new-id {file}",
            EXIT_STORE,
        ) from None
    click.echo(f"imported {sanitize_line(info.id)} ({info.events} events)")


__all__ = [
    "export_command",
    "import_command",
    "log_command",
    "log_line",
    "resolve_conversation",
    "show_command",
]
