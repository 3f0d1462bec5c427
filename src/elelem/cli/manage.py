"""``elelem rm``, ``rename`` and ``fork``: changing which conversations there are."""

from __future__ import annotations

import click

from elelem.cli.exits import EXIT_USAGE, Failure, debug_option, guarded
from elelem.cli.history import resolve_conversation
from elelem.cli.store import store_from_env
from elelem.conversation import Conversation
from elelem.render import sanitize_line
from elelem.vocabulary import EventId


@click.command("rm")
@click.argument("conversations", nargs=-1, required=True, metavar="ID...")
@debug_option
@guarded
def rm_command(conversations: tuple[str, ...]) -> None:
    """Delete conversations (each an id or a unique prefix), events and all."""
    store = store_from_env()
    ids = [resolve_conversation(store, ref) for ref in conversations]  # all named, or none go
    for cid in dict.fromkeys(ids):
        store.delete(cid)
        click.echo(f"deleted {cid}", err=True)


@click.command("rename")
@click.argument("conversation", metavar="ID")
@click.argument("title", nargs=-1, required=True)
@debug_option
@guarded
def rename_command(conversation: str, title: tuple[str, ...]) -> None:
    """Give a conversation (an id or a unique prefix) a new TITLE."""
    text = " ".join(title).strip()
    if not text:
        raise Failure("the title must not be empty", EXIT_USAGE)
    store = store_from_env()
    cid = resolve_conversation(store, conversation)
    store.set_title(cid, text)
    click.echo(f"renamed {cid}: {sanitize_line(text)}", err=True)


@click.command("fork")
@click.argument("conversation", required=False, metavar="[ID]")
@click.option(
    "--at",
    "at",
    metavar="EVENT",
    help="Fork after this event (its id or a unique prefix; default: the latest).",
)
@click.option("--title", help="The new conversation's title (default: the original's).")
@debug_option
@guarded
def fork_command(conversation: str | None, at: str | None, title: str | None) -> None:
    """Copy a conversation (ID, a unique prefix, or the latest) up to an event,
    to continue it differently with `elelem ask -c NEW_ID`."""
    store = store_from_env()
    source = Conversation.open(store, resolve_conversation(store, conversation))
    event = None if at is None else _event(source, at)
    fork = source.fork(event, title=title)
    click.echo(fork.id)
    click.echo(f"forked {source.id} at {event or source.events[-1].id}", err=True)


def _event(conversation: Conversation, ref: str) -> EventId:
    matches = [e.id for e in conversation.events if e.id.startswith(ref)]
    if len(matches) == 1:
        return matches[0]
    shown = sanitize_line(ref)
    if not matches:
        raise Failure(f"conversation {conversation.id} has no event {shown!r}", EXIT_USAGE)
    raise Failure(
        f"event {shown!r} is ambiguous: {len(matches)} events of {conversation.id} start so"
        " (give more of the id)",
        EXIT_USAGE,
    )


__all__ = ["fork_command", "rename_command", "rm_command"]
