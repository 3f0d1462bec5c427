"""The chat API: ``POST /api/chat`` runs a turn of a stored conversation
(or a new one) through the turn engine and relays it as the UI message
stream; ``POST /api/resume`` resumes a run waiting on approvals or results
(or, for a durable run, hands the decisions to it: 202)
(:mod:`elelem.web.approvals`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from elelem.conversation import Conversation, ConversationNotFound
from elelem.errors import ConfigError
from elelem.render.sanitize import sanitize_line
from elelem.turns.deferred import check_resume, stopped_model
from elelem.turns.pending import ResumeError, pending
from elelem.vocabulary import ConversationId
from elelem.web.approvals import MAX_RESUME_BODY, ResumeRequest, releasing, resume_pairs
from elelem.web.asgi import AwaitingApproval, Pair, UIMessageStreamResponse
from elelem.web.bodies import MAX_CHAT_BODY, decoded
from elelem.web.chat import ChatRefused, ChatRequest, turn_input, turn_input_new, turn_pairs
from elelem.web.site import Site

CONVERSATION_HEADER = "x-elelem-conversation"
"""The response header naming the conversation a chat stream is stored in."""


def no_such_model(make: Callable[[], Any], chosen: str) -> str | None:
    """Why ``chosen`` (each model of a fallback list) names no model of the
    client's catalog (an unknown provider, an address that is none), else
    None: refused before a stream starts, as a 400 and not a 200 whose
    stream carries the error.  A missing key is the stream's to report."""
    catalog = getattr(make(), "catalog", None)
    if catalog is None:  # a client of the caller's without a catalog
        return None
    listed = catalog.aliases.get(chosen.strip(), chosen)
    for address in listed.split(","):
        try:
            catalog.resolve(address.strip())
        except ConfigError as exc:
            return sanitize_line(str(exc))
    return None


def routes(site: Site) -> list[Route]:
    """The chat and resume routes over ``site``."""
    resuming = site.resuming

    async def chat(request: Request) -> Response:
        data = await decoded(request, ChatRequest, MAX_CHAT_BODY, "chat", site.body_timeout)
        if isinstance(data, Response):
            return data
        chosen = data.model or site.model
        if not chosen:
            return PlainTextResponse(
                "bad chat request: a model and some text are needed", status_code=400
            )
        in_process = chosen.strip() in site.in_process
        refused = None if in_process else no_such_model(site.make_client, chosen)
        if refused is not None:
            return PlainTextResponse(refused, status_code=400)  # the command line's words
        try:
            if data.conversation:
                conversation = Conversation.open(site.store, ConversationId(data.conversation))
                user_input = turn_input(conversation, data)
            else:
                user_input = turn_input_new(data)
                conversation = Conversation.create(site.store)
        except ConversationNotFound:
            return PlainTextResponse("no such conversation", status_code=404)
        except ChatRefused as exc:
            return PlainTextResponse(f"bad chat request: {exc}", status_code=400)
        if pending(conversation) is not None:
            # Its calls are answered first (a retry or an edit rewinds them).
            return PlainTextResponse(
                "this conversation waits for its calls to be approved or given results: "
                "answer them above, or retry or edit the turn",
                status_code=409,
            )
        model = site.model_for(chosen)
        stream = turn_pairs(
            conversation, site.make_client, model, user_input, data.web_search, site.tools,
            site.run_scope, site.limits,
        )  # fmt: skip
        if not data.conversation:
            stream = kept_if_begun(site, conversation, stream)
        return UIMessageStreamResponse(
            stream,
            headers={CONVERSATION_HEADER: conversation.id},
            redactor=site.redactor,
            log=conversation,
        )

    async def go_on(request: Request) -> Response:
        data = await decoded(request, ResumeRequest, MAX_RESUME_BODY, "resume", site.body_timeout)
        if isinstance(data, Response):
            return data
        try:
            conversation = Conversation.open(site.store, ConversationId(data.conversation))
        except ConversationNotFound:
            return PlainTextResponse("no such conversation", status_code=404)
        if conversation.id in resuming:
            return PlainTextResponse("this run is being resumed already", status_code=409)
        # The stopped turn's model unless one is given; an in-process one
        # (serve's `test`) is found by the address its turn stored.
        chosen = data.model or stopped_model(conversation)
        model = site.model_for(chosen) if chosen else None
        refused = None
        if data.model and isinstance(model, str):
            refused = no_such_model(site.make_client, data.model)
        if refused is not None:
            return PlainTextResponse(f"cannot resume: {refused}", status_code=400)
        # A durable run's approved calls run on its workers, with their tools.
        tool_names = site.tool_names if site.deliver is None else None
        try:
            check_resume(conversation, data.approvals, data.results, tool_names)
        except ResumeError as exc:
            # Decided already (a second click, a replayed request): nothing to do.
            code = 409 if pending(conversation) is None else 400
            return PlainTextResponse(f"cannot resume: {sanitize_line(str(exc))}", status_code=code)
        if site.deliver is not None:
            await site.deliver(conversation.id, dict(data.approvals), dict(data.results))
            # The run goes on on its workers; its page shows the log as it grows.
            return PlainTextResponse("sent to the durable run", status_code=202)
        # Taken before the first await, so a second request sees it: the
        # event loop runs one handler at a time up to there.
        resuming.add(conversation.id)

        pairs = resume_pairs(
            conversation, site.make_client, model, data, site.tools, site.run_scope, site.limits
        )
        return UIMessageStreamResponse(
            releasing(resuming, conversation.id, pairs),
            headers={CONVERSATION_HEADER: conversation.id},
            redactor=site.redactor,
            log=conversation,
        )

    return [
        Route("/api/chat", chat, methods=["POST"]),
        Route("/api/resume", go_on, methods=["POST"]),
    ]


async def kept_if_begun(
    site: Site, conversation: Conversation, pairs: AsyncIterator[Pair | AwaitingApproval]
) -> AsyncIterator[Pair | AwaitingApproval]:
    """``pairs`` of a new conversation's first turn; a turn refused before it
    began (an unknown model, a missing key) leaves no empty conversation."""
    try:
        async for pair in pairs:
            yield pair
    finally:
        if site.store.info(conversation.id).turns == 0:
            site.store.delete(conversation.id)


__all__ = ["CONVERSATION_HEADER", "kept_if_begun", "no_such_model", "routes"]
