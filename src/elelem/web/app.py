"""The local viewer behind ``elelem serve``: a Starlette app over a store.

Every request must carry the access token (``?token=…``, compared in constant
time); links of the app keep it.  Pages are server-rendered by
:mod:`elelem.web.html` with a Content-Security-Policy that allows no inline
script and no ``unsafe-inline``; the only script is the app's own static
``chat.js``, which shows a streamed answer rendered by the one Markdown
renderer (``/api/render``) as each text block completes.  Chat runs a turn
of a stored conversation through the turn engine (so what is shown is
stored) and relays it as the AI SDK UI message stream.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import datetime
from importlib import resources
from typing import Any, TypeVar, cast
from urllib.parse import quote

import anyio
import msgspec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from elelem.conversation import Conversation, ConversationNotFound, Store
from elelem.providers.costs import events_cost
from elelem.redaction import Redactor
from elelem.render.sanitize import sanitize_line
from elelem.turns.deferred import check_resume
from elelem.turns.pending import ResumeError, pending
from elelem.turns.toolloop import ToolLoop
from elelem.vocabulary import ConversationId
from elelem.vocabulary.json import decode_json
from elelem.web import html, pages
from elelem.web.approvals import ResumeRequest, pending_form, resume_pairs
from elelem.web.asgi import Pair, UIMessageStreamResponse
from elelem.web.chat import (
    ChatRefused,
    ChatRequest,
    composer,
    turn_input,
    turn_input_new,
    turn_pairs,
)
from elelem.web.markup import markdown_html
from elelem.web.serving import host_allowed

STATIC: dict[str, str] = {"elelem.css": "text/css", "chat.js": "text/javascript"}
CONVERSATION_HEADER = "x-elelem-conversation"
T = TypeVar("T")

MAX_CHAT_BODY = 32 << 20
"""A chat request's largest body (attachments travel in it, base64)."""

BODY_TIMEOUT = 10.0
"""Seconds a request's body has to arrive."""

_SECURITY_HEADERS = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
}


def new_token() -> str:
    """A fresh random access token."""
    return secrets.token_urlsafe(24)


class TokenGate:
    """ASGI middleware: a request without the right ``token`` query parameter
    is refused (403) before it reaches the app; every response gets the
    security headers.  With ``port`` (the port served), a ``Host`` that is
    not ``localhost`` or an IP address with that port is refused too (a DNS
    name could be rebound to this machine by a hostile page), and so is an
    ``Origin`` other than the request's own."""

    def __init__(self, app: ASGIApp, token: str, port: int | None = None) -> None:
        self.app = app
        self._token = token.encode()
        self._port = port

    def _misdirected(self, scope: Scope) -> str | None:
        if self._port is None:
            return None
        headers = dict(scope.get("headers", []))
        host = headers.get(b"host", b"").decode("latin-1")
        if not host_allowed(host, self._port):
            return "wrong Host header: open the URL elelem serve printed"
        origin = headers.get(b"origin")
        if origin is not None and origin.decode("latin-1") != f"http://{host}":
            return "cross-origin request refused"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        problem = self._misdirected(scope)
        if problem is not None:
            refusal = PlainTextResponse(problem, status_code=403)
            await self._secured(refusal)(scope, receive, send)
            return
        given = b""
        for pair in scope.get("query_string", b"").split(b"&"):
            name, _, value = pair.partition(b"=")
            if name == b"token":
                given = value
        if not hmac.compare_digest(given, self._token):
            refusal = PlainTextResponse("missing or wrong access token", status_code=403)
            await self._secured(refusal)(scope, receive, send)
            return

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                headers += [
                    (k.encode(), v.encode())
                    for k, v in _SECURITY_HEADERS.items()
                    if k.encode() not in present
                ]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_secured)

    @staticmethod
    def _secured(response: Response) -> Response:
        for name, value in _SECURITY_HEADERS.items():
            response.headers[name] = value
        response.headers["content-security-policy"] = "default-src 'none'"
        return response


def create_app(
    store: Store,
    *,
    token: str,
    model: str | None = None,
    client: Callable[[], Any] | None = None,
    redactor: Redactor | None = None,
    models: Sequence[str] | None = None,
    clock: Callable[[], datetime] | None = None,
    port: int | None = None,
    body_timeout: float = BODY_TIMEOUT,
    tools: Sequence[Any] = (),
) -> ASGIApp:
    """The viewer over ``store``, behind ``token``.

    With ``port`` (what ``elelem serve`` serves on) the ``Host`` and
    ``Origin`` of every request are checked (see :class:`TokenGate`).  A
    chat request's body is read up to :data:`MAX_CHAT_BODY` bytes (413 past
    it, the declared length checked before reading) and within
    ``body_timeout`` seconds (408 after).

    ``model`` is the chat form's default model address; ``client`` makes the
    :class:`elelem.Client` a chat turn runs through (one per turn; by default
    ``Client()`` with the user's catalog and keys); ``redactor`` is applied to
    every page and every chat stream (a store written before redaction existed
    may hold an echoed key, a model may echo one; ``elelem serve`` passes the
    secrets in force); ``models`` are the
    model picker's suggestions (by default every known model, as ``elelem
    models`` lists them); ``clock`` gives the time relative dates are shown
    against.  ``tools`` (``elelem serve --functions``) are what a chat turn
    may call and what an approved call runs with: each call waits for the
    page's Approve or Deny (:mod:`elelem.web.approvals`).
    """
    chat_models = list(models) if models is not None else _known_models()
    tool_names = set(ToolLoop(tools).tools)  # two tools of one name: a ValueError now
    resuming: set[str] = set()  # conversations a resume is running on
    redact = redactor.redact if redactor is not None else str

    def now() -> datetime:
        return clock() if clock is not None else datetime.now().astimezone()

    def link(path: str) -> str:
        return f"{quote(path)}?token={token}"

    def page_response(
        title: str,
        body: str,
        page: html.Page,
        *,
        chat: bool = False,
        meta: dict[str, str] | None = None,
    ) -> HTMLResponse:
        document = html.document(
            title, body, link=link, page=page, script="/static/chat.js" if chat else None, meta=meta
        )
        response = HTMLResponse(redact(document))
        response.headers["content-security-policy"] = html.content_security_policy(
            page, static=True, chat=chat
        )
        return response

    def chat_meta(conversation: str | None) -> dict[str, str]:
        return {"elelem-model": model or "", "elelem-conversation": conversation or ""}

    costs: dict[tuple[str, int], str | None] = {}

    def entries() -> list[pages.Entry]:
        """The conversations with a turn, newest first, each with its cost
        (computed once per conversation state)."""
        out = []
        for info in store.list_conversations(limit=200):
            if info.turns == 0:
                continue  # an empty conversation is nothing to open
            key = (info.id, info.events)
            if key not in costs:
                cost = events_cost(store.load(info.id))
                costs[key] = cost.describe() if cost.responses else None
            out.append(pages.Entry(info, costs[key]))
        return out

    def frame(
        listed: list[pages.Entry],
        main: str,
        *,
        query: str | None = None,
        current: str | None = None,
    ) -> str:
        side = pages.sidebar(
            listed, link=link, token=token, now=now(), query=query, current=current
        )
        return f'<a class="skip" href="#main">Skip to the content</a><div class="app">{side}{main}</div>'

    async def index(request: Request) -> Response:
        query = request.query_params.get("q") or None
        hits = store.search(query, limit=50) if query else []
        listed = entries()
        main = pages.listing(listed, link=link, now=now(), query=query, hits=hits)
        return page_response("elelem conversations", frame(listed, main, query=query), html.Page())

    async def show(request: Request) -> Response:
        cid = ConversationId(request.path_params["cid"])
        try:
            info = store.info(cid)
        except ConversationNotFound:
            return PlainTextResponse("no such conversation", status_code=404)
        page = html.Page()
        conversation = Conversation.open(store, cid)
        body = html.conversation(
            info, conversation.events, link=link, page=page, fetch=store.get_blob
        )
        waiting = pending(conversation)
        if waiting is not None:
            body += pending_form(waiting, tool_names)
        main = f'<main id="main" class="main conversation">{body}{composer(chat_models)}</main>'
        return page_response(
            info.title or info.id,
            frame(entries(), main, current=info.id),
            page,
            chat=True,
            meta=chat_meta(info.id),
        )

    async def new_chat(request: Request) -> Response:
        main = (
            '<main id="main" class="main conversation new">'
            '<header class="conv-head"><h1>New chat</h1></header>'
            f"{composer(chat_models)}</main>"
        )
        return page_response(
            "elelem chat", frame(entries(), main), html.Page(), chat=True, meta=chat_meta(None)
        )

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        media = STATIC.get(name)
        if media is None:
            return PlainTextResponse("not found", status_code=404)
        if name == "elelem.css":
            return Response(html.stylesheet(), media_type=media)
        data = (resources.files("elelem.web") / "static" / name).read_bytes()
        return Response(data, media_type=media)

    async def chat(request: Request) -> Response:
        data = await _decoded(request, ChatRequest, MAX_CHAT_BODY, "chat", body_timeout)
        if isinstance(data, Response):
            return data
        chosen = data.model or model
        if not chosen:
            return PlainTextResponse(
                "bad chat request: a model and some text are needed", status_code=400
            )
        try:
            if data.conversation:
                conversation = Conversation.open(store, ConversationId(data.conversation))
                user_input = turn_input(conversation, data)
            else:
                user_input = turn_input_new(data)
                conversation = Conversation.create(store)
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
        make = client if client is not None else _default_client
        return UIMessageStreamResponse(
            turn_pairs(conversation, make, chosen, user_input, data.web_search, tools),
            headers={CONVERSATION_HEADER: conversation.id},
            redactor=redactor,
        )

    async def go_on(request: Request) -> Response:
        data = await _decoded(request, ResumeRequest, MAX_CHAT_BODY, "resume", body_timeout)
        if isinstance(data, Response):
            return data
        try:
            conversation = Conversation.open(store, ConversationId(data.conversation))
        except ConversationNotFound:
            return PlainTextResponse("no such conversation", status_code=404)
        if conversation.id in resuming:
            return PlainTextResponse("this run is being resumed already", status_code=409)
        try:
            check_resume(conversation, data.approvals, data.results, tool_names)
        except ResumeError as exc:
            # Decided already (a second click, a replayed request): nothing to do.
            code = 409 if pending(conversation) is None else 400
            return PlainTextResponse(f"cannot resume: {sanitize_line(str(exc))}", status_code=code)
        # Taken before the first await, so a second request sees it: the
        # event loop runs one handler at a time up to there.
        resuming.add(conversation.id)
        make = client if client is not None else _default_client

        async def pairs() -> AsyncIterator[Pair]:
            try:
                async for pair in resume_pairs(conversation, make, data.model, data, tools):
                    yield pair
            finally:
                resuming.discard(conversation.id)

        return UIMessageStreamResponse(
            pairs(), headers={CONVERSATION_HEADER: conversation.id}, redactor=redactor
        )

    async def render(request: Request) -> Response:
        data = await _decoded(request, RenderRequest, MAX_RENDER_BODY, "render", body_timeout)
        if isinstance(data, Response):
            return data
        fragment = markdown_html(data.text)
        return HTMLResponse(redact(fragment))

    routes = [
        Route("/api/render", render, methods=["POST"]),
        Route("/", index),
        Route("/c/{cid}", show),
        Route("/chat", new_chat),
        Route("/static/{name}", static),
        Route("/api/chat", chat, methods=["POST"]),
        Route("/api/resume", go_on, methods=["POST"]),
    ]
    return TokenGate(Starlette(routes=routes), token, port)


async def _bounded_body(request: Request, limit: int, seconds: float) -> bytes | Response:
    """The request's body, read while it stays within ``limit`` bytes and
    ``seconds``; else the refusal to send (the rest is never read)."""
    declared = request.headers.get("content-length")
    # ASCII digits only, and few: '²' (a Latin-1 header byte) is a digit to
    # str.isdigit but no number to int, which refuses 4,300 digits too.
    number = declared is not None and declared.isascii() and declared.isdigit()
    if declared is not None and (not number or len(declared) > 18 or int(declared) > limit):
        return PlainTextResponse("request too large", status_code=413)
    pieces: list[bytes] = []
    held = 0
    try:
        with anyio.fail_after(seconds):
            async for piece in request.stream():
                held += len(piece)
                if held > limit:
                    return PlainTextResponse("request too large", status_code=413)
                pieces.append(piece)
    except TimeoutError:
        return PlainTextResponse("request body too slow", status_code=408)
    return b"".join(pieces)


class RenderRequest(msgspec.Struct, forbid_unknown_fields=True):
    """Markdown the chat script has streamed so far, to show rendered."""

    text: str


MAX_RENDER_BODY = 4 << 20


async def _decoded(
    request: Request, kind: type[T], limit: int, what: str, seconds: float = BODY_TIMEOUT
) -> T | Response:
    """The request's JSON body as ``kind`` (read as :func:`_bounded_body`
    reads it), or the refusal to send (413, 408, 400)."""
    raw = await _bounded_body(request, limit, seconds)
    if isinstance(raw, Response):
        return raw
    try:
        return cast(T, decode_json(raw, type=kind))
    except msgspec.DecodeError as exc:
        return PlainTextResponse(f"bad {what} request: {exc}", status_code=400)


def _known_models() -> list[str]:
    from elelem.providers.models import known_models

    return [f"{provider}:{name}" for provider, name in known_models(None)]


def _default_client() -> Any:
    from elelem.client import Client

    return Client()


__all__ = [
    "CONVERSATION_HEADER",
    "TokenGate",
    "create_app",
    "new_token",
]
