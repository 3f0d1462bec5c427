"""``GET /blob/{sha256}``: an image of the store opened whole (a thumbnail's
click), served only when its bytes are a raster image of
:data:`elelem.web.folds.SHOWN_IMAGES` by their magic bytes, whatever the
block that holds it claimed; anything else is a 404, so the route serves no
HTML, SVG or script of a model's or a tool's making."""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from elelem.errors import BlobMissingError
from elelem.vocabulary.sniff import media_type_of_bytes
from elelem.web.folds import SHOWN_IMAGES
from elelem.web.site import Site

_SHA256 = re.compile(r"[0-9a-f]{64}")

BLOB_POLICY = "default-src 'none'; sandbox"
"""The policy of an image opened whole: the browser's own image page and
nothing else; sandboxed, no script."""


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
        response = Response(data, media_type=media)
        response.headers["content-security-policy"] = BLOB_POLICY
        response.headers["content-disposition"] = "inline"
        return response

    return [Route("/blob/{sha}", blob)]


__all__ = ["BLOB_POLICY", "routes"]
