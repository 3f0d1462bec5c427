"""The viewer's pages: the listing (``/``, with search), a conversation
(``/c/{cid}``) and a new chat (``/chat``)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from elelem.conversation import Conversation, ConversationNotFound
from elelem.turns.pending import pending
from elelem.vocabulary import ConversationId
from elelem.web import html, pages
from elelem.web.approvals import pending_form
from elelem.web.chat import composer
from elelem.web.site import Site


def routes(site: Site) -> list[Route]:
    """The page routes over ``site``."""

    async def index(request: Request) -> Response:
        query = request.query_params.get("q") or None
        listed = site.entries()
        if query is not None:
            hits = site.store.search(query, limit=50)
            main = pages.listing(listed, link=site.link, now=site.now(), query=query, hits=hits)
            return site.page_response(
                "elelem conversations", site.frame(listed, main, query=query), html.Page()
            )
        # The home page opens on the chat box, the conversations below it.
        main = (
            '<main id="main" class="main conversation new home">'
            '<header class="conv-head"><h1>New chat</h1></header>'
            f"{composer(site.chat_models, focus=True)}"
            '<section class="listing" aria-labelledby="listed"><h2 id="listed">Conversations</h2>'
            f"{pages.day_groups(listed, link=site.link, now=site.now())}</section></main>"
        )
        return site.page_response(
            "elelem", site.frame(listed, main), html.Page(), chat=True, meta=site.chat_meta(None)
        )

    async def show(request: Request) -> Response:
        cid = ConversationId(request.path_params["cid"])
        try:
            info = site.store.info(cid)
        except ConversationNotFound:
            return PlainTextResponse("no such conversation", status_code=404)
        page = html.Page()
        conversation = Conversation.open(site.store, cid)
        body = html.conversation(
            info, conversation.events, link=site.link, page=page, fetch=site.store.get_blob
        )
        waiting = pending(conversation)
        if waiting is not None:
            body += pending_form(waiting, site.tool_names)
        main = (
            f'<main id="main" class="main conversation">{body}{composer(site.chat_models)}</main>'
        )
        return site.page_response(
            info.title or info.id,
            site.frame(site.entries(), main, current=info.id),
            page,
            chat=True,
            meta=site.chat_meta(info.id),
        )

    async def new_chat(request: Request) -> Response:
        main = (
            '<main id="main" class="main conversation new">'
            '<header class="conv-head"><h1>New chat</h1></header>'
            f"{composer(site.chat_models, focus=True)}</main>"
        )
        return site.page_response(
            "elelem chat",
            site.frame(site.entries(), main),
            html.Page(),
            chat=True,
            meta=site.chat_meta(None),
        )

    return [Route("/", index), Route("/c/{cid}", show), Route("/chat", new_chat)]


__all__ = ["routes"]
