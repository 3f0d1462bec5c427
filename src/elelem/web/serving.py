"""The HTTP server side of ``elelem serve``: uvicorn, with the bounds the
viewer needs against a hostile page or peer.

- A connection must send each request head within ``head_timeout`` seconds
  of opening or of its previous response: a half-sent request no longer
  holds its connection open for ever.
- A request head is at most 16 KiB; at most :data:`MAX_CONNECTIONS`
  connections are served at once (503 past that).
- The request body's bounds (size while reading, time) are the app's:
  :func:`elelem.web.app.create_app`.
"""

from __future__ import annotations

import asyncio
import ipaddress
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

HEAD_TIMEOUT = 10.0
"""Seconds a connection has to send a request's head."""

MAX_CONNECTIONS = 64
"""Connections served at once."""

MAX_HEAD = 16 * 1024
"""The largest request head read."""


class HeadDeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request's head.

    uvicorn's keep-alive timer is cancelled by any byte received, and is not
    armed before the first request at all, so a peer sending half a head
    held its connection for ever.  Here a timer of ``timeout_keep_alive``
    seconds is armed when the connection opens and after each response, and
    cancelled only by a whole head; when it fires on a connection still
    waiting for one, the connection is closed.  A slow response is never
    cut: the timer is off while a request is served.
    """

    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._arm()

    def handle_events(self) -> None:
        super().handle_events()
        if self.conn.their_state is not h11.IDLE:
            self._disarm()  # a whole head arrived

    def on_response_complete(self) -> None:
        self._arm()  # before the next cycle, which may bring a head at once
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._head_timer = self.loop.call_later(self.timeout_keep_alive, self._late)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _late(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def server_config(app: Any, *, head_timeout: float = HEAD_TIMEOUT) -> uvicorn.Config:
    """The uvicorn configuration ``elelem serve`` runs ``app`` with."""
    return uvicorn.Config(
        app,
        http=HeadDeadlineProtocol,
        timeout_keep_alive=head_timeout,  # type: ignore[arg-type]  # a float works (call_later)
        limit_concurrency=MAX_CONNECTIONS,
        h11_max_incomplete_event_size=MAX_HEAD,
        log_level="warning",
        lifespan="off",
        access_log=False,
        timeout_graceful_shutdown=1,
    )


def is_loopback(host: str) -> bool:
    """True when ``host`` (an address or ``localhost``) is reachable from
    this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_allowed(value: str, port: int) -> bool:
    """True when a request's ``Host`` header names this server as only this
    machine's own pages do: ``localhost`` or an IP address, with ``port``.
    A DNS name is refused: a hostile page can point one at 127.0.0.1 (DNS
    rebinding) and would then be same-origin with the viewer."""
    name, sep, given = value.rpartition(":")
    if not sep or given != str(port):
        return False
    if name == "localhost":
        return True
    try:
        ipaddress.ip_address(name[1:-1] if name.startswith("[") and name.endswith("]") else name)
    except ValueError:
        return False
    return True


__all__ = [
    "HEAD_TIMEOUT",
    "MAX_CONNECTIONS",
    "HeadDeadlineProtocol",
    "host_allowed",
    "is_loopback",
    "server_config",
]
