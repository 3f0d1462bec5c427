"""``elelem chat``: a conversation at the prompt.

At a terminal the line editor is prompt-toolkit's (the maintained library
for it): history kept across sessions and searched with Ctrl-R, a bracketed
paste of several lines is one message (the terminal marks pasted text, so
its line breaks never submit), Esc then Enter inserts a line break, Enter
sends.  Ctrl-C at the prompt clears the line; Ctrl-C while an answer streams
stops it and keeps what arrived, shown once; Ctrl-D (or ``/exit``) leaves.
Without a terminal, each line of stdin is one message.

Lines that start with ``/`` are commands, never sent (``//`` sends a line
that starts with ``/``): see :data:`COMMANDS`.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from elelem.cli.ask import Session, awaiting_line, cached, check_model, open_session
from elelem.cli.attachments import Attachment, attach_option, load_attachment, user_message
from elelem.cli.exits import EXIT_USAGE, Failure, debug_option, describe, guarded
from elelem.cli.flags import continue_option, limit_options, model_options
from elelem.cli.store import store_from_env
from elelem.cli.testmodel import TEST_ADDRESS, is_test_model
from elelem.cli.tools import Toolset, tool_options
from elelem.conversation import default_store_path
from elelem.errors import ConfigError, ElelemError, UnsupportedError
from elelem.render import sanitize_line
from elelem.vocabulary import Message

HELP = """\
/help               this list
/model [MODEL]      show the model, or switch to MODEL (any -m form) from the next message on
/system [TEXT]      show the system prompt, or set it (`/system -` clears it)
/attach PATH|URL    attach a file or URL to the next message (repeatable)
/retry              answer your last message again (the old answer is kept, shown replaced)
/exit               leave (Ctrl-D does too)
Enter sends; Esc then Enter starts a new line; a paste is one message; Ctrl-R searches history;
Ctrl-C stops an answer and keeps what arrived."""


@dataclass
class ChatState:
    """What the chat's commands change between messages."""

    session: Session
    attachments: list[Attachment] = field(default_factory=list)
    done: bool = False


def _say(text: str) -> None:
    click.echo(sanitize_line(text), err=True)


def _model(state: ChatState, argument: str) -> None:
    if not argument:
        _say(f"model: {state.session.model}")
        return
    catalog = state.session.catalog
    if is_test_model(argument):
        address = TEST_ADDRESS
    else:
        spec, name = catalog.resolve(argument)
        address = f"{spec.name}:{name}"
    state.session.target = cached(check_model(catalog, address), state.session.cache)
    _say(f"model: {address}")


def _system(state: ChatState, argument: str) -> None:
    if not argument:
        _say(f"system: {state.session.system or '(none)'}")
        return
    state.session.system = None if argument == "-" else argument
    _say("system prompt cleared" if argument == "-" else "system prompt set")


def _attach(state: ChatState, argument: str) -> None:
    if not argument or argument == "-":
        raise Failure("/attach takes a PATH or an http(s) URL", EXIT_USAGE)
    block = load_attachment(argument)
    state.attachments.append(block)
    _say(f"attached {argument} to the next message ({len(state.attachments)} attached)")


def _help(_state: ChatState, _argument: str) -> None:
    click.echo(HELP, err=True)


def _exit(state: ChatState, _argument: str) -> None:
    state.done = True


COMMANDS: dict[str, Callable[[ChatState, str], None]] = {
    "help": _help,
    "model": _model,
    "system": _system,
    "attach": _attach,
    "exit": _exit,
    "quit": _exit,
}
"""Slash commands that act on the chat (``/retry`` is handled by the loop)."""


def _history_file() -> Path:
    return default_store_path().parent / "chat_history"


def terminal_lines(history: Path) -> Iterator[str]:
    """Messages typed at a terminal, through prompt-toolkit."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory
    from prompt_toolkit.key_binding import KeyBindings

    bindings = KeyBindings()

    @bindings.add("escape", "enter")
    def _newline(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    history.parent.mkdir(parents=True, exist_ok=True)
    prompt: PromptSession[str] = PromptSession(
        history=FileHistory(str(history)),
        key_bindings=bindings,
        enable_history_search=False,
        prompt_continuation="… ",
    )
    while True:
        try:
            yield prompt.prompt("> ")
        except KeyboardInterrupt:
            continue
        except EOFError:
            return


MAX_LINE = 16 * 1024 * 1024
"""The longest message read from a piped stdin line."""


def piped_lines() -> Iterator[str]:
    """Messages read from a stdin that is not a terminal: one per line, each
    UTF-8 text of at most :data:`MAX_LINE` bytes (a usage error names the
    line otherwise: bytes that are not text are never guessed at)."""
    stdin = sys.stdin.buffer
    for n in itertools.count(1):
        raw = stdin.readline(MAX_LINE + 1)
        if not raw:
            return
        if len(raw) > MAX_LINE:
            raise Failure(f"stdin line {n} is longer than {MAX_LINE} bytes", EXIT_USAGE)
        try:
            yield raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError as exc:
            raise Failure(
                f"stdin line {n} is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset "
                f"{exc.start})",
                EXIT_USAGE,
            ) from None


def chat_loop(state: ChatState, lines: Iterator[str]) -> None:
    """Send each message, run each command, until the lines end or ``/exit``."""
    for line in lines:
        text = line.strip()
        if not text:
            continue
        if text.startswith("/") and not text.startswith("//"):
            name, _, argument = text[1:].partition(" ")
            if name == "retry":
                again = _retry(state)
                if again is None:
                    _say("nothing to retry yet")
                    continue
                _answer(state, again)
                continue
            else:
                command = COMMANDS.get(name)
                if command is None:
                    _say(f"unknown command /{name} (/help lists them)")
                    continue
                try:
                    command(state, argument.strip())
                except (ConfigError, UnsupportedError, Failure) as exc:
                    _say(f"elelem: {exc.format_message() if isinstance(exc, Failure) else exc}")
                if state.done:
                    return
                continue
        elif text.startswith("//"):
            text = text[1:]
        message = user_message(text, state.attachments)
        state.attachments = []
        _answer(state, message)


def _retry(state: ChatState) -> Message | None:
    """The latest message again, its attachments included, with the answer it
    had rewound (kept in the log, shown as replaced, never sent again)."""
    session = state.session
    if not session.stored:
        return None
    return session.conversation.rewind_last_asked("retry")


def _answer(state: ChatState, message: Message | str) -> None:
    try:
        awaiting_line(state.session, state.session.answer(message))
    except KeyboardInterrupt:
        return
    except ElelemError as exc:
        # The chat goes on: the error is the answer's last line, and the
        # log keeps what arrived.
        _say(f"elelem: {describe(exc)}")


@click.command("chat")
@continue_option
@attach_option
@model_options
@tool_options
@limit_options
@debug_option
@guarded
def chat_command(continue_: str | None, attachments: tuple[str, ...], **params: Any) -> None:
    """Talk with a model (/help lists the commands): history and Ctrl-R search,
    multi-line pastes; Ctrl-C stops the current answer and keeps what arrived;
    Ctrl-D (or /exit) leaves."""
    store = store_from_env(persist=not params["no_store"])
    if "-" in attachments:
        raise Failure("chat -a takes a PATH or URL: stdin carries the messages", EXIT_USAGE)
    first = [load_attachment(spec) for spec in attachments]  # go with the first message
    session = open_session(store, continue_, params)
    interactive = sys.stdin is not None and sys.stdin.isatty()
    lines = terminal_lines(_history_file()) if interactive else piped_lines()
    # The MCP servers connect before the greeting: one that cannot is the
    # command's one error line.
    with session.toolset or Toolset():
        click.echo(
            f"chat with {sanitize_line(session.model)} in conversation "
            f"{sanitize_line(session.conversation.id)}"
            " (Ctrl-C stops an answer, Ctrl-D leaves, /help for more)",
            err=True,
        )
        chat_loop(ChatState(session, first), lines)
    if interactive:
        click.echo(err=True)


__all__ = ["COMMANDS", "HELP", "ChatState", "chat_command", "chat_loop"]
