"""The one WebSocket driver of live sessions (the ``live`` extra: ``websockets``).

A :class:`LiveConnection` (async) or :class:`SyncLiveConnection` (blocking,
in the calling thread) carries one session of a sans-IO
:class:`~elelem.wire.live.LiveProtocol`: it opens the socket with the
endpoint's credentials (its key, a signer's bearer token refreshed when due:
Vertex AI, Entra ID), sends the protocol's opening frames and each command's
frames, and hands every server frame to the protocol.  Both shells do the
same steps over the same helpers; only the socket calls differ.

The contract:

- connecting is bounded by ``Timeouts.connect``; a refused upgrade (401,
  403, 404, …) is the typed error of its status, its body redacted;
- one frame is bounded by ``Limits.frame``: past it, a
  ``LimitExceededError``;
- the server closing normally (1000) ends the session (``receive`` returns
  None); any other close, or a dropped socket, is a retryable
  :class:`~elelem.errors.TransportError` naming the close code and reason
  (redacted: a server may echo what it was sent);
- secrets: the headers go only to the handshake; every error text passes
  through the endpoint's redactor.

``websockets`` was chosen over ``wsproto`` by measurement
(``benchmarks/live_events.py``, benchmarks/README.md): its C-accelerated
frame reader costs less per server event than wsproto's pure-Python one
under the same asyncio protocol, and its asyncio and blocking clients are
the two shells this driver needs, with no socket code of elelem's own.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from elelem.errors import (
    AuthenticationError,
    ConfigError,
    ConnectTimeoutError,
    LimitExceededError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    StreamError,
    TransportError,
    install_line,
)
from elelem.transport.config import Timeouts
from elelem.transport.endpoint import Endpoint
from elelem.transport.limits import Limits
from elelem.wire.live import LiveCommand, LiveOutput, LiveProtocol, LiveSettings

_BY_STATUS: dict[int, type[StreamError]] = {
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    429: RateLimitError,
}


def websockets_module(name: str) -> Any:
    """A module of ``websockets`` (the ``live`` extra), or a ConfigError naming it."""
    try:
        return importlib.import_module(name)
    except ImportError:
        raise ConfigError(
            f"live sessions need the websockets package: {install_line('live')}"
        ) from None


def handshake_headers(endpoint: Endpoint, url: str) -> dict[str, str]:
    """The handshake's headers: the endpoint's, its key, a signer's token."""
    headers = endpoint.request_headers({})
    signer = endpoint.signer
    if signer is not None:
        parts = urlsplit(url)
        signed = signer.sign("GET", parts.path, parts.query, headers, b"", datetime.now(UTC))
        headers.update({k.lower(): v for k, v in signed.items()})
    return headers


def refresh_due(endpoint: Endpoint) -> bool:
    """Whether the endpoint's signer must fetch a fresh token first."""
    due = getattr(endpoint.signer, "due", None)
    return bool(due is not None and due(datetime.now(UTC)))


def refused(exc: Exception, endpoint: Endpoint, url: str) -> StreamError:
    """The typed error of a connection that did not open."""
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    if status is not None:
        body = bytes(getattr(response, "body", b"") or b"")
        cls = _BY_STATUS.get(int(status), ServerError if int(status) >= 500 else StreamError)
        text = endpoint.redact(body.decode("utf-8", "replace"))[:500]
        return cls(
            f"{endpoint.provider} live {status}: {text or 'the upgrade was refused'}",
            status=int(status),
            body=endpoint.redact_bytes(body),
        )
    if isinstance(exc, TimeoutError):
        return ConnectTimeoutError(
            f"{endpoint.provider} live: connecting to {_host(url)} timed out"
        )
    message = endpoint.redact(f"{type(exc).__name__}: {exc}")
    return TransportError(f"{endpoint.provider} live: could not connect to {_host(url)}: {message}")


def closed(exc: Exception, endpoint: Endpoint, frame_limit: int) -> StreamError | None:
    """None for a normal close; else the error of the close (retryable)."""
    rcvd = getattr(exc, "rcvd", None)
    code = getattr(rcvd, "code", None)
    reason = endpoint.redact(str(getattr(rcvd, "reason", "") or ""))
    if code == 1000:
        return None
    if code == 1009 or "message too big" in str(exc).lower():
        return LimitExceededError(
            f"{endpoint.provider} live: a frame over the frame limit",
            limit="Limits.frame",
            value=frame_limit,
        )
    said = f" {code}" + (f" ({reason})" if reason else "") if code is not None else ""
    return TransportError(f"{endpoint.provider} live: the connection closed{said}", retryable=True)


def _host(url: str) -> str:
    return urlsplit(url).netloc


class _Shell:
    """What both shells hold: the protocol, where it goes and how it signs."""

    def __init__(
        self,
        protocol: LiveProtocol,
        endpoint: Endpoint,
        model: str,
        *,
        timeouts: Timeouts | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.protocol = protocol
        self.endpoint = endpoint
        self.url = protocol.url(endpoint.base_url, model)
        self.timeouts = timeouts or Timeouts()
        self.limits = limits or Limits()
        self.sent = 0  # client frames sent on this connection
        self.ended: type[Exception] = websockets_module("websockets.exceptions").ConnectionClosed

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.protocol.name}, {_host(self.url)})"


class LiveConnection(_Shell):
    """One live session's socket, async (see the module docstring)."""

    socket: Any = None

    async def connect(self, settings: LiveSettings) -> None:
        """Open the socket and send the session's opening frames."""
        client = websockets_module("websockets.asyncio.client")
        if refresh_due(self.endpoint):
            import anyio.to_thread

            await anyio.to_thread.run_sync(self.endpoint.signer.refresh, datetime.now(UTC))  # type: ignore[union-attr]
        try:
            self.socket = await client.connect(
                self.url,
                additional_headers=handshake_headers(self.endpoint, self.url),
                open_timeout=self.timeouts.connect or None,
                max_size=self.limits.frame,
                compression=None,
            )
        except Exception as exc:  # noqa: BLE001 - typed below, never swallowed
            raise refused(exc, self.endpoint, self.url) from None
        await self._write(self.protocol.open(settings))

    async def send(self, command: LiveCommand) -> None:
        """Send ``command``'s frames."""
        await self._write(self.protocol.send(command))

    async def _write(self, frames: Sequence[str]) -> None:
        errors = websockets_module("websockets.exceptions")
        try:
            for frame in frames:
                await self.socket.send(frame)
                self.sent += 1
        except errors.ConnectionClosed as exc:
            raise (closed(exc, self.endpoint, self.limits.frame) or _gone(self.endpoint)) from None

    async def receive(self) -> Sequence[LiveOutput] | None:
        """What the next server frame means; None once the server closed normally."""
        try:
            frame = await self.socket.recv()
        except self.ended as exc:
            error = closed(exc, self.endpoint, self.limits.frame)
            if error is None:
                return None
            raise error from None
        return self.protocol.receive(frame)

    async def close(self) -> None:
        """Close the socket (normally)."""
        if self.socket is not None:
            await self.socket.close()


class SyncLiveConnection(_Shell):
    """One live session's socket, blocking, in the calling thread."""

    socket: Any = None

    def connect(self, settings: LiveSettings) -> None:
        """Open the socket and send the session's opening frames."""
        client = websockets_module("websockets.sync.client")
        if refresh_due(self.endpoint):
            self.endpoint.signer.refresh(datetime.now(UTC))  # type: ignore[union-attr]
        try:
            self.socket = client.connect(
                self.url,
                additional_headers=handshake_headers(self.endpoint, self.url),
                open_timeout=self.timeouts.connect or None,
                max_size=self.limits.frame,
                compression=None,
            ).__enter__()  # held open past this block: closed by close()
        except Exception as exc:  # noqa: BLE001 - typed below, never swallowed
            raise refused(exc, self.endpoint, self.url) from None
        self._write(self.protocol.open(settings))

    def send(self, command: LiveCommand) -> None:
        """Send ``command``'s frames."""
        self._write(self.protocol.send(command))

    def _write(self, frames: Sequence[str]) -> None:
        errors = websockets_module("websockets.exceptions")
        try:
            for frame in frames:
                self.socket.send(frame)
                self.sent += 1
        except errors.ConnectionClosed as exc:
            raise (closed(exc, self.endpoint, self.limits.frame) or _gone(self.endpoint)) from None

    def receive(self, timeout: float | None = None) -> Sequence[LiveOutput] | None:
        """What the next server frame means; None once the server closed normally."""
        try:
            frame = self.socket.recv(timeout)
        except self.ended as exc:
            error = closed(exc, self.endpoint, self.limits.frame)
            if error is None:
                return None
            raise error from None
        return self.protocol.receive(frame)

    def close(self) -> None:
        """Close the socket (normally)."""
        if self.socket is not None:
            self.socket.close()


def _gone(endpoint: Endpoint) -> TransportError:
    return TransportError(f"{endpoint.provider} live: the session was closed", retryable=True)


__all__ = [
    "LiveConnection",
    "SyncLiveConnection",
    "closed",
    "handshake_headers",
    "refused",
    "websockets_module",
]
