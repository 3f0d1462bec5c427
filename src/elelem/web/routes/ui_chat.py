"""A stock ``useChat`` page's backend: ``POST /api/ui-chat`` takes the body
the AI SDK's ``DefaultChatTransport`` posts (``{id, messages, trigger,
messageId}``, plus the transport's ``body``: ``model``, ``conversation``,
``aiVersion``: 6 for a page on ``ai`` 6, 7 by default) and answers with the
UI message stream, plus the transient parts of what the log recorded
(:mod:`elelem.web.dated`: a call's times, the usage lines), which a page's
``onData`` reads and no message keeps: the parts a stock page keeps are the
same as without them.

The stored conversation is the history: the chat's ``id`` names it (the
first request creates it; a ``conversation`` field names one explicitly),
and of the posted messages only the last is read.

- The user's message (``submit-message``) is a new turn (a tool loop with
  ``elelem serve --functions``, whose calls wait for approval: the stream
  ends with a ``tool-approval-request`` for each).
- The assistant's message, its approvals answered by
  ``addToolApprovalResponse`` (tool parts ``approval-responded``), resumes
  the stopped run: the answers are checked as :func:`elelem.resume` checks
  them, before anything is stored (400 naming what is wrong; 409 when the
  run waits for nothing any more or is being resumed), and the stream goes
  on in the same message: ``tool-output-available`` for each approved call
  (run once), ``tool-output-denied`` for each refused one, then the answer.
- ``regenerate-message`` sends the last turn's message again (a rewind
  overlay, as the viewer's Retry).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Literal

import msgspec
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from elelem.conversation import Conversation, ConversationNotFound
from elelem.errors import DecodeError
from elelem.render.sanitize import sanitize_line
from elelem.turns.deferred import check_resume
from elelem.turns.pending import ResumeError, pending
from elelem.vocabulary import ConversationId, Message
from elelem.web.approvals import ResumeRequest, releasing, resume_pairs
from elelem.web.asgi import UIMessageStreamResponse
from elelem.web.bodies import MAX_CHAT_BODY, decoded
from elelem.web.chat import turn_pairs
from elelem.web.messages import approvals_from_ui, messages_from_ui
from elelem.web.routes.talk import CONVERSATION_HEADER, kept_if_begun, no_such_model
from elelem.web.site import Site

MAX_CHATS = 10_000
"""How many chat ids the server remembers the conversation of (the oldest
forgotten first; a page naming ``conversation`` needs none)."""


class UIChatRequest(msgspec.Struct, forbid_unknown_fields=False):
    """The body ``DefaultChatTransport`` posts, with the fields a page adds
    through the transport's ``body``."""

    id: str
    messages: list[Any]
    trigger: str = "submit-message"
    messageId: str | None = None
    model: str | None = None
    conversation: str | None = None
    aiVersion: Literal[6, 7] = 7  # a page's field: the AI SDK's camelCase


def _refused(text: str, status: int = 400) -> Response:
    return PlainTextResponse(sanitize_line(text), status_code=status)


def routes(site: Site) -> list[Route]:
    """The ``useChat`` route over ``site``."""
    chats: OrderedDict[str, str] = OrderedDict()  # chat id -> conversation id

    def conversation_of(data: UIChatRequest) -> Conversation | None:
        named = data.conversation or chats.get(data.id)
        if named is None:
            return None
        return Conversation.open(site.store, ConversationId(named))

    def remember(chat: str, conversation: Conversation) -> None:
        chats[chat] = conversation.id
        chats.move_to_end(chat)
        while len(chats) > MAX_CHATS:
            chats.popitem(last=False)

    def answer(conversation: Conversation, data: UIChatRequest) -> Response:
        """Resume ``conversation`` with the approvals the page answered."""
        try:
            approvals = approvals_from_ui(data.messages[-1])
        except DecodeError as exc:
            return _refused(f"bad chat request: {exc}")
        if conversation.id in site.resuming:
            return _refused("this run is being resumed already", 409)
        if site.deliver is not None:
            # Its calls run on its workers, which this stream cannot follow.
            return _refused("a durable run is answered on its page (POST /api/resume)", 409)
        try:
            check_resume(conversation, approvals, {}, site.tool_names)
        except ResumeError as exc:
            code = 409 if pending(conversation) is None else 400
            return _refused(f"cannot resume: {exc}", code)
        site.resuming.add(conversation.id)
        request = ResumeRequest(conversation.id, approvals=approvals, model=data.model)

        pairs = resume_pairs(
            conversation, site.make_client, data.model, request, site.tools, site.run_scope,
            site.limits,
        )  # fmt: skip
        return UIMessageStreamResponse(
            releasing(site.resuming, conversation.id, pairs),
            headers={CONVERSATION_HEADER: conversation.id},
            redactor=site.redactor,
            ai_version=data.aiVersion,
            log=conversation,
            log_in_kept_parts=False,  # a stock page keeps what it kept without the log
        )

    async def chat(request: Request) -> Response:
        data = await decoded(request, UIChatRequest, MAX_CHAT_BODY, "chat", site.body_timeout)
        if isinstance(data, Response):
            return data
        if not data.messages or not isinstance(data.messages[-1], dict):
            return _refused("bad chat request: no message to answer")
        chosen = data.model or site.model
        if data.model:
            refused = None
            if data.model.strip() not in site.in_process:
                refused = no_such_model(site.make_client, data.model)
            if refused is not None:
                return _refused(refused)
        try:
            conversation = conversation_of(data)
        except ConversationNotFound:
            return _refused("no such conversation", 404)
        last = data.messages[-1]
        if last.get("role") not in ("user", "assistant"):
            return _refused(
                "bad chat request: the last message must be the user's or the assistant's"
            )
        if last.get("role") == "assistant":
            if conversation is None:
                return _refused("no conversation of this chat waits for approvals", 409)
            return answer(conversation, data)
        if not chosen:
            return _refused("bad chat request: a model is needed")
        user_input: Message | str
        try:
            if data.trigger == "regenerate-message":
                again = conversation.rewind_last_asked("retry") if conversation else None
                if again is None:
                    return _refused("bad chat request: nothing to regenerate yet")
                user_input = again
            elif data.trigger == "submit-message":
                # Files the model's provider holds are sent by their id.
                provider = chosen.partition(":")[0] if ":" in chosen else None
                given = messages_from_ui([last], provider=provider)
                if len(given) != 1:
                    return _refused("bad chat request: the message has no text and no file")
                user_input = given[0]
            else:
                return _refused(f"bad chat request: unknown trigger {data.trigger!r}")
        except DecodeError as exc:
            return _refused(f"bad chat request: {exc}")
        new = conversation is None
        if conversation is None:
            conversation = Conversation.create(site.store)
        elif pending(conversation) is not None:
            return _refused(
                "this conversation waits for its calls to be approved or given results", 409
            )
        remember(data.id, conversation)
        model = site.model_for(chosen)
        stream = turn_pairs(
            conversation, site.make_client, model, user_input, False, site.tools, site.run_scope,
            site.limits,
        )  # fmt: skip
        if new:
            stream = kept_if_begun(site, conversation, stream)
        return UIMessageStreamResponse(
            stream,
            headers={CONVERSATION_HEADER: conversation.id},
            redactor=site.redactor,
            ai_version=data.aiVersion,
            log=conversation,
            log_in_kept_parts=False,  # a stock page keeps what it kept without the log
        )

    return [Route("/api/ui-chat", chat, methods=["POST"])]


__all__ = ["MAX_CHATS", "UIChatRequest", "routes"]
