"""The viewer's static files: the stylesheet (built by
:func:`elelem.web.html.stylesheet`) and the chat's two scripts."""

from __future__ import annotations

from importlib import resources

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from elelem.web import html
from elelem.web.site import Site

STATIC: dict[str, str] = {
    "elelem.css": "text/css",
    "chat-parts.js": "text/javascript",
    "chat.js": "text/javascript",
}
"""The files served under ``/static/``, with their media types."""


def routes(site: Site) -> list[Route]:
    """The ``/static/{name}`` route (``site`` is unused: the files are the
    same for every site)."""

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        media = STATIC.get(name)
        if media is None:
            return PlainTextResponse("not found", status_code=404)
        if name == "elelem.css":
            return Response(html.stylesheet(), media_type=media)
        data = (resources.files("elelem.web") / "static" / name).read_bytes()
        return Response(data, media_type=media)

    return [Route("/static/{name}", static)]


__all__ = ["STATIC", "routes"]
