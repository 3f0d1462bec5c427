"""What every route of the viewer shares: the store, the token its links
carry, the chat defaults, the redactor, the clock, and the page frame (the
sidebar of conversations around a page's content).  :func:`elelem.web.app.
create_app` makes one :class:`Site`; each route module under
:mod:`elelem.web.routes` makes its routes from it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from typing import Any
from urllib.parse import quote

from starlette.responses import HTMLResponse

from elelem.conversation import Store
from elelem.providers.costs import events_cost
from elelem.redaction import Redactor
from elelem.turns.limits import UsageLimits
from elelem.turns.toolloop import ToolLoop
from elelem.web import html, pages
from elelem.web.chat import RunScope, no_scope

Deliver = Callable[[str, dict[str, bool], dict[str, str]], Awaitable[None]]
"""Hands a stopped run's decisions to the durable run that waits for them
(``elelem serve --temporal``): the conversation id, the approvals, the
external results."""

CHAT_SCRIPTS = ("/static/chat-parts.js", "/static/chat.js")
"""The chat's scripts, in the order they run: the parts of an answer as the
stored page draws them, then the chat that streams them."""


class Site:
    """The viewer's shared state and page helpers (see :func:`elelem.web.app.
    create_app` for what each argument means)."""

    def __init__(
        self,
        store: Store,
        *,
        token: str,
        model: str | None,
        client: Callable[[], Any] | None,
        redactor: Redactor | None,
        models: Sequence[str] | None,
        clock: Callable[[], datetime] | None,
        body_timeout: float,
        tools: Sequence[Any],
        in_process: Mapping[str, Any] | None = None,
        deliver: Deliver | None = None,
        run_scope: RunScope = no_scope,
        limits: UsageLimits | None = None,
    ) -> None:
        self.store = store
        self.run_scope = run_scope
        self.limits = limits
        self.deliver = deliver
        self.token = token
        self.model = model
        self.redactor = redactor
        self.body_timeout = body_timeout
        self.tools = tools
        self.chat_models = list(models) if models is not None else _known_models()
        # Two tools of one name: a ValueError now, not at the first call.
        self.tool_names = set(ToolLoop(tools).tools)
        self.make_client: Callable[[], Any] = client if client is not None else _default_client
        self._clock = clock
        self.in_process = dict(in_process or {})
        # Conversations a resume is running on (/api/resume, /api/ui-chat):
        # a second one is refused, never run beside it.
        self.resuming: set[str] = set()
        self._costs: dict[tuple[str, int], str | None] = {}

    def model_for(self, name: str) -> Any:
        """The model a chat turn runs with for the address ``name``: an
        in-process model of that name (``elelem serve``'s ``test``) or
        address (``test:test-model``, as a stored turn names it), else the
        address itself, for the client to resolve."""
        name = name.strip()
        if name in self.in_process:
            return self.in_process[name]
        for model in self.in_process.values():
            # A stored turn names its in-process model by address (test:test-model).
            if getattr(model, "address", None) == name:
                return model
        return name

    def redact(self, text: str) -> str:
        """``text`` with the secrets in force masked."""
        return self.redactor.redact(text) if self.redactor is not None else text

    def now(self) -> datetime:
        """The time relative dates are shown against."""
        return self._clock() if self._clock is not None else datetime.now().astimezone()

    def link(self, path: str) -> str:
        """``path`` as a link of the app (carrying the token)."""
        return f"{quote(path)}?token={self.token}"

    def page_response(
        self,
        title: str,
        body: str,
        page: html.Page,
        *,
        chat: bool = False,
        meta: dict[str, str] | None = None,
    ) -> HTMLResponse:
        """A whole HTML page, redacted, with its Content-Security-Policy
        (the chat script allowed when ``chat``)."""
        document = html.document(
            title,
            body,
            link=self.link,
            page=page,
            scripts=CHAT_SCRIPTS if chat else (),
            meta=meta,
        )
        response = HTMLResponse(self.redact(document))
        response.headers["content-security-policy"] = html.content_security_policy(
            page, static=True, chat=chat
        )
        return response

    def chat_meta(self, conversation: str | None) -> dict[str, str]:
        """The ``<meta>`` values the chat script reads."""
        return {"elelem-model": self.model or "", "elelem-conversation": conversation or ""}

    def entries(self) -> list[pages.Entry]:
        """The conversations with a turn, newest first, each with its cost
        (computed once per conversation state)."""
        out = []
        for info in self.store.list_conversations(limit=200):
            if info.turns == 0:
                continue  # an empty conversation is nothing to open
            key = (info.id, info.events)
            if key not in self._costs:
                cost = events_cost(self.store.load(info.id))
                self._costs[key] = cost.describe() if cost.responses else None
            out.append(pages.Entry(info, self._costs[key]))
        return out

    def frame(
        self,
        listed: list[pages.Entry],
        main: str,
        *,
        query: str | None = None,
        current: str | None = None,
    ) -> str:
        """``main`` beside the sidebar listing ``listed``."""
        side = pages.sidebar(
            listed, link=self.link, token=self.token, now=self.now(), query=query, current=current
        )
        return f'<a class="skip" href="#main">Skip to the content</a><div class="app">{side}{main}</div>'


def _known_models() -> list[str]:
    from elelem.providers.models import known_models

    return [f"{provider}:{name}" for provider, name in known_models(None)]


def _default_client() -> Any:
    from elelem.client import Client

    return Client()


__all__ = ["CHAT_SCRIPTS", "Deliver", "Site"]
