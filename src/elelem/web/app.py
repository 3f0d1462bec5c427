"""The local viewer behind ``elelem serve``: a Starlette app over a store.

Every request must carry the access token (``?token=…``, compared in constant
time, :mod:`elelem.web.gate`); links of the app keep it.  Pages are
server-rendered by :mod:`elelem.web.html` with a Content-Security-Policy that
allows no inline script and no ``unsafe-inline``; the only script is the
app's own static ``chat.js``, which shows a streamed answer rendered by the
one Markdown renderer (``/api/render``) as each text block completes.  Chat
runs a turn of a stored conversation through the turn engine (so what is
shown is stored) and relays it as the AI SDK UI message stream.

:func:`create_app` only assembles: the shared state is an
:class:`elelem.web.site.Site`, and each route group is a module under
:mod:`elelem.web.routes`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from starlette.applications import Starlette
from starlette.types import ASGIApp

from elelem.conversation import Store
from elelem.redaction import Redactor
from elelem.turns.limits import UsageLimits
from elelem.web.bodies import BODY_TIMEOUT, MAX_CHAT_BODY
from elelem.web.chat import RunScope, no_scope
from elelem.web.gate import TokenGate, new_token
from elelem.web.routes import blobs, frames, render, static, talk, ui_chat, views
from elelem.web.routes.talk import CONVERSATION_HEADER
from elelem.web.site import Deliver, Site


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
    in_process: Mapping[str, Any] | None = None,
    deliver: Deliver | None = None,
    run_scope: RunScope = no_scope,
    limits: UsageLimits | None = None,
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
    secrets in force and every secret the process holds, a
    :class:`~elelem.redaction.ProcessRedactor`); ``models`` are the
    model picker's suggestions (by default every known model, as ``elelem
    models`` lists them); ``clock`` gives the time relative dates are shown
    against.  ``tools`` (``elelem serve --functions``) are what a chat turn
    may call and what an approved call runs with: each call waits for the
    page's Approve or Deny (:mod:`elelem.web.approvals`).  ``in_process``
    maps a model name the chat form may give to a model answering in-process
    (``elelem serve`` maps ``test`` to ``-m test``'s model).  ``deliver``
    (``elelem serve --temporal``) hands the page's decisions to the durable
    run that waits for them instead of resuming the run here (see
    docs/durable.md).  Every chat run (a turn, a resumed run) runs inside
    ``run_scope(conversation, client)`` (``elelem serve --mcp`` binds its
    servers' requests to the run there), bounded by ``limits`` (``elelem
    serve --max-requests`` …; a limit reached ends the run's stream with
    its error, what the run did kept).
    """
    site = Site(
        store,
        token=token,
        model=model,
        client=client,
        redactor=redactor,
        models=models,
        clock=clock,
        body_timeout=body_timeout,
        tools=tools,
        in_process=in_process,
        deliver=deliver,
        run_scope=run_scope,
        limits=limits,
    )
    routes = [
        *render.routes(site),
        *views.routes(site),
        *static.routes(site),
        *blobs.routes(site),
        *frames.routes(site),
        *talk.routes(site),
        *ui_chat.routes(site),
    ]
    return TokenGate(Starlette(routes=routes), token, port)


__all__ = [
    "BODY_TIMEOUT",
    "CONVERSATION_HEADER",
    "MAX_CHAT_BODY",
    "TokenGate",
    "create_app",
    "new_token",
]
