"""``GET /blob/{sha256}``: an image of the store opened whole (a thumbnail's
click), as a page of its own showing it at its full size from its own bytes
(a ``data:`` URL, under the pages' policy: a browser's bare image document
styles itself inline, which that policy refuses).  Served only when the
bytes are a raster image of :data:`elelem.web.images.SHOWN_IMAGES` by their
magic bytes, whatever the block holding them claimed; anything else is a
404, so the route shows no HTML, SVG or script of a model's or a tool's
making."""

from __future__ import annotations

import base64
import re

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from elelem.errors import BlobMissingError
from elelem.render.lines import byte_size
from elelem.vocabulary.sniff import image_size, media_type_of_bytes
from elelem.web import html
from elelem.web.images import SHOWN_IMAGES
from elelem.web.site import Site

_SHA256 = re.compile(r"[0-9a-f]{64}")


def routes(site: Site) -> list[Route]:
    """The blob route over ``site``'s store."""

    async def blob(request: Request) -> Response:
        sha = request.path_params["sha"]
        if not _SHA256.fullmatch(sha):
            return PlainTextResponse("no such image", status_code=404)
        try:
            data = site.store.get_blob(sha)
        except BlobMissingError:
            return PlainTextResponse("no such image", status_code=404)
        media = media_type_of_bytes(data)
        if media not in SHOWN_IMAGES:
            return PlainTextResponse("not an image this viewer shows", status_code=404)
        size = image_size(data)
        words = [media, byte_size(len(data))]
        if size is not None:
            words.insert(1, f"{size[0]}\u00d7{size[1]}")
        src = f"data:{media};base64," + base64.b64encode(data).decode("ascii")
        body = (
            '<main id="main" class="whole-image">'
            f'<h1 class="visually-hidden">Image {sha[:12]}</h1>'
            f'<img src="{src}" alt="the whole image">'
            f'<p class="meta">{" · ".join(words)}</p></main>'
        )
        return site.page_response(f"image {sha[:12]}", body, html.Page())

    return [Route("/blob/{sha}", blob)]


__all__ = ["routes"]
