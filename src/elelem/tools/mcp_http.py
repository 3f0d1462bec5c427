"""The HTTP transports of remote MCP servers, with what the SDK's lack.

The ``mcp`` SDK speaks Streamable HTTP (``streamable_http_client``) and the
older HTTP+SSE transport (``sse_client``); elelem hands each an HTTP client
of its own whose transport

- bounds every JSON reply to ``max_body`` bytes, like a stdio line (the
  SDK reads a reply whole: a 300 MB ``initialize`` answer took 1.3 GB);
  an SSE event is bounded by the SDK's own ``max_sse_event_size``, set to
  the same number;
- notes the last HTTP error the server answered (status, reason and its
  ``WWW-Authenticate`` challenge), which the SDK turns into "Server returned
  an error response": :meth:`HTTPNotes.explain` says what it was; and a 404
  to a request that carried a session id (:attr:`HTTPNotes.session_lost`),
  after which the client must start a new session.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx2

from elelem.errors import MCPServerError

MAX_BODY = 16 * 1024 * 1024
"""The largest JSON reply (one JSON-RPC message) read from a server."""


class BodyTooLarge(MCPServerError, httpx2.StreamError):
    """A reply longer than the bound (an ``httpx2.StreamError`` too: the SDK
    then answers the request it was for with an error)."""


class HTTPNotes:
    """What the HTTP exchange saw that the session cannot."""

    def __init__(self, url: str, max_body: int = MAX_BODY) -> None:
        self.url = url
        self.max_body = max_body
        self.status: int | None = None
        self.reason = ""
        self.challenge: str | None = None
        self.failure: str | None = None
        self.session_lost = False

    def saw(self, request: httpx2.Request, response: httpx2.Response) -> None:
        """Keep what an error reply says (the last one wins)."""
        if response.status_code >= 400:
            self.status = response.status_code
            self.reason = response.reason_phrase
            self.challenge = response.headers.get("www-authenticate")
        if response.status_code == 404 and "mcp-session-id" in request.headers:
            # The spec's word that the server no longer knows the session.
            self.session_lost = True

    def explain(self) -> str | None:
        """The last HTTP error, in words (None when there was none)."""
        if self.failure is not None:
            return self.failure
        if self.status is None:
            return None
        text = f"HTTP {self.status} {self.reason}".rstrip() + f" from {self.url}"
        if self.status in (401, 403):
            text += ": the server asks for authorization"
            if self.challenge:
                text += f" (WWW-Authenticate: {self.challenge})"
            text += (
                f"; sign in with `elelem mcp login {self.url}`, or give it a token with a "
                "header (MCPServer.http(url, headers=...))"
            )
        return text


class _BoundedBody(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, notes: HTTPNotes) -> None:
        self._inner = inner
        self._notes = notes

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self._inner:
            seen += len(chunk)
            if seen > self._notes.max_body:
                raise _too_large(self._notes)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


def _too_large(notes: HTTPNotes) -> BodyTooLarge:
    notes.failure = f"a reply from {notes.url} was longer than {notes.max_body} bytes"
    return BodyTooLarge(notes.failure)


class _NotingTransport(httpx2.AsyncBaseTransport):
    def __init__(self, notes: HTTPNotes) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._notes = notes

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        self._notes.saw(request, response)
        if response.headers.get("content-type", "").lower().startswith("application/json"):
            length = response.headers.get("content-length", "")
            if length.isdigit() and int(length) > self._notes.max_body:
                await response.aclose()
                raise _too_large(self._notes)
            response.stream = _BoundedBody(response.stream, self._notes)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def http_client(
    notes: HTTPNotes,
    headers: Mapping[str, str] | None = None,
    timeout: httpx2.Timeout | None = None,
    auth: httpx2.Auth | None = None,
) -> httpx2.AsyncClient:
    """An HTTP client for one server, its replies bounded and noted."""
    return httpx2.AsyncClient(
        headers=dict(headers or {}),
        timeout=timeout or httpx2.Timeout(30.0, read=300.0),
        auth=auth,
        transport=_NotingTransport(notes),
    )


@contextlib.asynccontextmanager
async def streamable_http(
    url: str, notes: HTTPNotes, headers: Mapping[str, str], auth: httpx2.Auth | None = None
) -> AsyncIterator[Any]:
    """The (read, write) streams of a Streamable HTTP endpoint."""
    from mcp.client.streamable_http import streamable_http_client

    async with (
        http_client(notes, headers, auth=auth) as http,
        streamable_http_client(url, http_client=http, max_sse_event_size=notes.max_body) as streams,
    ):
        yield streams


@contextlib.asynccontextmanager
async def legacy_sse(
    url: str, notes: HTTPNotes, headers: Mapping[str, str], auth: httpx2.Auth | None = None
) -> AsyncIterator[Any]:
    """The (read, write) streams of an HTTP+SSE endpoint (the transport of
    the 2024-11-05 revision, still served by older servers)."""
    from mcp.client.sse import sse_client

    def factory(
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
    ) -> httpx2.AsyncClient:
        return http_client(notes, headers, timeout, auth)

    async with sse_client(
        url, headers=dict(headers), httpx_client_factory=factory, auth=auth
    ) as streams:
        yield streams


__all__ = ["MAX_BODY", "BodyTooLarge", "HTTPNotes", "http_client", "legacy_sse", "streamable_http"]
