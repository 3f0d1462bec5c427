"""``GET /c/{cid}/suggestions/{event}``: Google's search suggestions of a
stored grounded search (``searchEntryPoint.renderedContent``, HTML Google
composed and requires shown with the answer) as a document of its own, for
the sandboxed frame the stored page and the live chat both draw.

Served from the log only (the hosted-activity event named, holding the
suggestions; anything else is a 404), redacted, under a policy of its own:
nothing loads, no script runs, the ``<style>`` Google wrote is allowed by its
hash (never ``unsafe-inline``), the document is sandboxed even when opened
alone (the frame's own ``sandbox``), and only the viewer's pages may frame
it.  A frame of its own, not ``srcdoc``: a srcdoc frame inherits its
parent's policy, and the live chat's policy was written before the
suggestions arrived.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

from elelem.conversation import ConversationNotFound, HostedBody
from elelem.vocabulary import ConversationId
from elelem.web import html
from elelem.web.site import Site
from elelem.web.ui_chunks import search_entry_point


def suggestions_policy(page: html.Page) -> str:
    """The suggestions document's policy: its styles by hash, nothing else."""
    styles = " ".join(page.style_hashes) or "'none'"
    return (
        f"default-src 'none'; style-src {styles}; img-src data:; base-uri 'none'; "
        f"form-action 'none'; frame-ancestors 'self'; sandbox {html.ENTRY_POINT_SANDBOX}"
    )


def routes(site: Site) -> list[Route]:
    """The search suggestions route over ``site``'s store."""

    async def suggestions(request: Request) -> Response:
        cid = ConversationId(request.path_params["cid"])
        wanted = request.path_params["event"]
        try:
            events = site.store.load(cid)
        except ConversationNotFound:
            return PlainTextResponse("no such conversation", status_code=404)
        for event in events:
            if event.id == wanted and isinstance(event.body, HostedBody):
                entry = search_entry_point(event.body.activity)
                if entry is None:
                    break
                document = site.redact(entry)
                page = html.Page()
                page.allow_styles_of(document)
                response = HTMLResponse(document)
                response.headers["content-security-policy"] = suggestions_policy(page)
                response.headers["x-frame-options"] = "SAMEORIGIN"
                return response
        return PlainTextResponse("no search suggestions here", status_code=404)

    return [Route("/c/{cid}/suggestions/{event}", suggestions)]


__all__ = ["routes", "suggestions_policy"]
