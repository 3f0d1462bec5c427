"""The one WebSocket driver of live sessions (the ``live`` extra: ``websockets``).

A :class:`LiveConnection` carries one session of a sans-IO
:class:`~elelem.wire.live.LiveProtocol`: it opens the socket with the
endpoint's credentials (its key, a signer's bearer token refreshed when due:
Vertex AI, Entra ID), sends the protocol's opening frames and each command's
frames, and hands every server frame to the protocol.  Its steps are
written once, as generators of socket calls
(:class:`~elelem.transport.faces.Io`), which the live session runs async
(``websockets``' asyncio client, :func:`~elelem.transport.faces.awaiting`)
or blocking in the calling thread (its sync client,
:func:`~elelem.transport.faces.blocking`).

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
from elelem.transport.faces import Effects, Io
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


class LiveConnection:
    """One live session's socket (see the module docstring): its steps
    (:meth:`connecting`, :meth:`sending`, :meth:`receiving`,
    :meth:`closing`) run async, or with ``blocking`` in the calling thread."""

    socket: Any = None

    def __init__(
        self,
        protocol: LiveProtocol,
        endpoint: Endpoint,
        model: str,
        *,
        blocking: bool,
        timeouts: Timeouts | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.protocol = protocol
        self.endpoint = endpoint
        self.url = protocol.url(endpoint.base_url, model)
        self.blocking = blocking
        self.timeouts = timeouts or Timeouts()
        self.limits = limits or Limits()
        self.sent = 0  # client frames sent on this connection
        self.ended: type[Exception] = websockets_module("websockets.exceptions").ConnectionClosed

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.protocol.name}, {_host(self.url)})"

    def connecting(self, settings: LiveSettings) -> Effects[None]:
        """Open the socket and send the session's opening frames."""
        client = websockets_module(
            "websockets.sync.client" if self.blocking else "websockets.asyncio.client"
        )
        if refresh_due(self.endpoint):
            # A token fetch blocks on the network: async, in a worker thread.
            yield Io(self, "_refresh", async_method="_refresh_off_loop")
        options = {
            "additional_headers": handshake_headers(self.endpoint, self.url),
            "open_timeout": self.timeouts.connect or None,
            "max_size": self.limits.frame,
            "compression": None,
        }
        try:
            socket = yield Io(client, "connect", (self.url,), options)
        except Exception as exc:  # noqa: BLE001 - typed below, never swallowed
            raise refused(exc, self.endpoint, self.url) from None
        # The blocking client's connection is entered as its context manager
        # (websockets' form), held open past this step: closing() closes it.
        self.socket = socket.__enter__() if self.blocking else socket
        yield from self._writing(self.protocol.open(settings))

    def _refresh(self) -> None:
        self.endpoint.signer.refresh(datetime.now(UTC))  # type: ignore[union-attr]

    async def _refresh_off_loop(self) -> None:
        import anyio.to_thread

        await anyio.to_thread.run_sync(self._refresh)

    def sending(self, command: LiveCommand) -> Effects[None]:
        """Send ``command``'s frames."""
        yield from self._writing(self.protocol.send(command))

    def _writing(self, frames: Sequence[str]) -> Effects[None]:
        try:
            for frame in frames:
                yield Io(self.socket, "send", (frame,))
                self.sent += 1
        except self.ended as exc:
            raise (closed(exc, self.endpoint, self.limits.frame) or _gone(self.endpoint)) from None

    def receiving(self) -> Effects[Sequence[LiveOutput] | None]:
        """What the next server frame means; None once the server closed normally."""
        try:
            frame = yield Io(self.socket, "recv")
        except self.ended as exc:
            error = closed(exc, self.endpoint, self.limits.frame)
            if error is None:
                return None
            raise error from None
        return self.protocol.receive(frame)

    def closing(self) -> Effects[None]:
        """Close the socket (normally)."""
        if self.socket is not None:
            yield Io(self.socket, "close")


def _gone(endpoint: Endpoint) -> TransportError:
    return TransportError(f"{endpoint.provider} live: the session was closed", retryable=True)


__all__ = [
    "LiveConnection",
    "closed",
    "handshake_headers",
    "refused",
    "websockets_module",
]
