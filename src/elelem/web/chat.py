"""The chat of ``elelem serve``: what the page's script posts, how it becomes
a turn of a stored conversation, and the chat box's HTML.

A chat request sends new text (with attachments), or asks to **retry** the
last turn (its user message sent again) or to **edit** a turn (new text sent
in its place).  Retry and edit never change stored events: they write a
:class:`~elelem.conversation.Rewind` overlay, so the replaced turns stay in
the log (shown as replaced) and are never sent again, then run a new turn
through the turn engine, relayed as the UI message stream.  Whatever is
wrong with a request is a 400 naming it, before anything is stored.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

import msgspec

from elelem.conversation import Conversation, Rewind
from elelem.errors import ElelemError
from elelem.turns.drive import send as send_turn
from elelem.turns.limits import UsageLimits
from elelem.turns.toolloop import run as run_loop
from elelem.vocabulary import DocumentBlock, ImageBlock, Message, Part, TextBlock, WebSearch
from elelem.web.asgi import AwaitingApproval, CallObserver, Observer, Pair, relay, with_approvals
from elelem.web.html import line

MAX_FILES = 10


class ChatFile(msgspec.Struct, forbid_unknown_fields=True):
    """An attachment the page read: its name, media type and base64 bytes."""

    name: str
    media_type: str
    data: str


class ChatRequest(msgspec.Struct, forbid_unknown_fields=False):
    """What the chat script posts: the text and its attachments, the model,
    the conversation to continue, whether the provider may search the web,
    and ``retry`` (send the last turn's message again) or ``edit_turn`` (send
    ``text`` in place of that turn's message)."""

    text: str = ""
    model: str | None = None
    conversation: str | None = None
    web_search: bool = False
    files: list[ChatFile] = []
    retry: bool = False
    edit_turn: int | None = None


class ChatRefused(ElelemError, ValueError):
    """A chat request that cannot run, with the reason the page shows."""


def attachment(file: ChatFile) -> Part:
    """The image or document block of an attachment (by its media type)."""
    try:
        data = base64.b64decode(file.data, validate=True)
    except binascii.Error as exc:
        raise ChatRefused(f"attachment {file.name!r} is not base64: {exc}") from None
    try:
        if file.media_type.startswith("image/"):
            return ImageBlock.from_bytes(data, file.media_type, filename=file.name)
        return DocumentBlock.from_bytes(data, file.media_type, filename=file.name)
    except (ElelemError, ValueError) as exc:
        raise ChatRefused(f"attachment {file.name!r}: {exc}") from None


def user_message(text: str, files: Sequence[ChatFile]) -> Message | str:
    """The user input of a new turn: the text, or a message with the
    attachments after it."""
    if len(files) > MAX_FILES:
        raise ChatRefused(f"at most {MAX_FILES} attachments per message")
    if not text.strip() and not files:
        raise ChatRefused("a model and some text are needed")
    if not files:
        return text
    content: list[Part] = [TextBlock(text)] if text.strip() else []
    content.extend(attachment(f) for f in files)
    return Message(role="user", content=tuple(content), source="user")


def turn_input(conversation: Conversation, request: ChatRequest) -> Message | str:
    """The input of the turn ``request`` asks for; a retry or an edit first
    rewinds the turn it replaces (and any after it)."""
    if request.retry:
        again = conversation.rewind_last_asked("retry")
        if again is None:
            raise ChatRefused("nothing to retry yet")
        return again
    if request.edit_turn is not None:
        if request.edit_turn not in conversation.asked():
            raise ChatRefused(f"turn {request.edit_turn} has no message to edit")
        message = user_message(request.text, request.files)
        conversation.add_overlay(Rewind(request.edit_turn, "edit"))
        return message
    return user_message(request.text, request.files)


def turn_input_new(request: ChatRequest) -> Message | str:
    """The first turn's input of a new conversation (nothing to retry or
    edit yet)."""
    if request.retry or request.edit_turn is not None:
        raise ChatRefused("nothing to retry or edit in a new conversation")
    return user_message(request.text, request.files)


RunScope = Callable[[Conversation, Any], AbstractAsyncContextManager[None]]
"""What a run of the chat (a turn, or a resumed run) runs inside, given its
conversation and client: ``elelem serve --mcp`` binds its MCP servers'
requests (recorded in the conversation, sampling served) to the run."""


def no_scope(_conversation: Conversation, _client: Any) -> AbstractAsyncContextManager[None]:
    """The :data:`RunScope` that adds nothing."""
    return contextlib.nullcontext()


def turn_pairs(
    conversation: Conversation,
    make_client: Callable[[], Any],
    model: str | Any,
    user_input: Message | str,
    web_search: bool,
    tools: Sequence[Any] = (),
    scope: RunScope = no_scope,
    limits: UsageLimits | None = None,
) -> AsyncIterator[Pair | AwaitingApproval]:
    """The pairs of one turn as the turn engine stores them, bounded by
    ``limits`` (a limit reached ends the stream with its error).  With ``tools``
    (``elelem serve --functions``) the turn is a tool loop whose calls wait
    for the page's approval: the run stops ``awaiting-approval``, the
    stream ends with a ``tool-approval-request`` for each call and the
    page shows the calls (:mod:`elelem.web.approvals`); the run runs
    inside ``scope``."""
    hosted = (WebSearch(),) if web_search else ()

    async def run(on_chunk: Observer, on_call: CallObserver) -> None:
        async with make_client() as client, scope(conversation, client):
            if not tools:
                await send_turn(
                    conversation, client, model, user_input,
                    on_chunk=on_chunk, hosted_tools=hosted, limits=limits,
                )  # fmt: skip
                return
            await run_loop(
                conversation, client, model, user_input,
                tools=tools, approve="defer", on_chunk=on_chunk, on_call=on_call,
                hosted_tools=hosted, limits=limits,
            )  # fmt: skip

    return with_approvals(conversation, relay(run)) if tools else relay(run)


def composer(models: Sequence[str], *, focus: bool = False) -> str:
    """The chat box under a conversation (or alone, for a new chat): the
    text, attachments (button, or dropped on the box), the model picker, web
    search, and Send (Stop while an answer streams); with ``focus`` the text
    box has the focus when the page opens (``/`` and a new chat)."""
    options = "".join(f'<option value="{line(m)}"></option>' for m in models)
    return (
        '<section id="chat" class="composer" aria-label="Chat">'
        '<div id="live" aria-live="polite"></div>'
        '<form id="chat-form">'
        '<ul id="chat-files" class="files" aria-label="Attachments"></ul>'
        '<label class="visually-hidden" for="chat-text">Message</label>'
        f'<textarea id="chat-text" name="text" rows="2"{" autofocus" if focus else ""} '
        'placeholder="Message (Enter sends, Shift+Enter adds a line)"></textarea>'
        '<div class="row">'
        '<input type="file" id="chat-attach" class="visually-hidden" multiple '
        'aria-label="Attach files">'
        '<label for="chat-attach" class="button attach">Attach</label>'
        '<label for="chat-model">Model</label>'
        '<input id="chat-model" name="model" list="chat-models" autocomplete="off">'
        f'<datalist id="chat-models">{options}</datalist>'
        '<label class="check"><input type="checkbox" id="chat-web-search"> web search</label>'
        '<span id="chat-status" role="status"></span>'
        '<button type="button" id="chat-stop" hidden>Stop</button>'
        '<button type="submit" id="chat-send" class="primary">Send</button>'
        "</div></form></section>"
    )


__all__ = [
    "ChatFile",
    "ChatRefused",
    "ChatRequest",
    "RunScope",
    "composer",
    "no_scope",
    "turn_input",
    "turn_input_new",
    "turn_pairs",
    "user_message",
]
