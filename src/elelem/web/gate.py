"""The viewer's gate: the access token, the ``Host``/``Origin`` checks and
the security headers every response carries (:class:`TokenGate`)."""

from __future__ import annotations

import hmac
import secrets

from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from elelem.web.serving import host_allowed

SECURITY_HEADERS = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
}
"""Headers every response of the viewer carries (unless a route set its own)."""


def new_token() -> str:
    """A fresh random access token."""
    return secrets.token_urlsafe(24)


TOKEN_PAGE = (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">'
    "<title>elelem: the access token is needed</title></head><body>"
    "<h1>This page needs its access token</h1>"
    "<p>Open the URL <code>elelem serve</code> printed when it started: it carries "
    "<code>?token=…</code>. The token is kept in elelem's home, so a URL printed before a "
    "restart still opens; to see it again, run <code>elelem serve</code> (or give your own "
    "with <code>elelem serve --token TOKEN</code>).</p></body></html>"
)
"""What a browser asking for a page without the token is shown (a 403)."""


def _wants_a_page(scope: Scope) -> bool:
    """A browser's page load (a GET asking for HTML), not the chat API."""
    if scope.get("method") != "GET":
        return False
    accept = dict(scope.get("headers", [])).get(b"accept", b"")
    return b"text/html" in accept


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
            page = _wants_a_page(scope)
            await self._secured(
                HTMLResponse(TOKEN_PAGE, status_code=403)
                if page
                else PlainTextResponse("missing or wrong access token", status_code=403)
            )(scope, receive, send)
            return

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                headers += [
                    (k.encode(), v.encode())
                    for k, v in SECURITY_HEADERS.items()
                    if k.encode() not in present
                ]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_secured)

    @staticmethod
    def _secured(response: Response) -> Response:
        for name, value in SECURITY_HEADERS.items():
            response.headers[name] = value
        response.headers["content-security-policy"] = "default-src 'none'"
        return response


__all__ = ["SECURITY_HEADERS", "TOKEN_PAGE", "TokenGate", "new_token"]
