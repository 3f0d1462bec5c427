"""``POST /api/render``: Markdown the chat script has streamed so far,
rendered by the one Markdown renderer (:func:`elelem.web.markup.markdown_html`)."""

from __future__ import annotations

import msgspec
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from elelem.web.bodies import decoded
from elelem.web.markup import markdown_html
from elelem.web.site import Site

MAX_RENDER_BODY = 4 << 20
"""A render request's largest body."""


class RenderRequest(msgspec.Struct, forbid_unknown_fields=True):
    """Markdown the chat script has streamed so far, to show rendered."""

    text: str


def routes(site: Site) -> list[Route]:
    """The render route over ``site`` (its redactor applies)."""

    async def render(request: Request) -> Response:
        data = await decoded(request, RenderRequest, MAX_RENDER_BODY, "render", site.body_timeout)
        if isinstance(data, Response):
            return data
        return HTMLResponse(site.redact(markdown_html(data.text)))

    return [Route("/api/render", render, methods=["POST"])]


__all__ = ["MAX_RENDER_BODY", "RenderRequest", "routes"]
