"""A real uvicorn server for an ASGI app on 127.0.0.1, in a thread (tests, demos).

``with ASGIServer(app) as server: httpx2.get(server.url + "/")`` — the port is
chosen by the system; the server stops and its thread ends on exit.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from typing import Any

import uvicorn

from elelem.transport.closing import Closing


class ASGIServer(Closing):
    """Serve ``app`` with uvicorn on a free loopback port (or on ``sock``,
    bound already) until closed; ``configure`` makes the uvicorn config for
    ``app`` (``elelem.web.serving.server_config`` serves it as ``elelem
    serve`` does), by default a quiet one."""

    def __init__(
        self,
        app: Any,
        *,
        host: str = "127.0.0.1",
        configure: Callable[[Any], uvicorn.Config] | None = None,
        sock: socket.socket | None = None,
    ) -> None:
        if sock is None:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, 0))
        self._sock = sock
        self.host = host
        self.port: int = self._sock.getsockname()[1]
        if configure is not None:
            config = configure(app)
        else:
            config = uvicorn.Config(
                app, log_level="warning", lifespan="off", timeout_graceful_shutdown=1
            )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://{self.host}:{self.port}"

    def start(self) -> ASGIServer:
        """Start serving and wait until the server accepts connections."""
        self._thread.start()
        ready = threading.Event()
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError("the ASGI server stopped while starting")
            ready.wait(0.01)
        return self

    def stop(self) -> None:
        """Ask the server to exit and wait for its thread."""
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        self._sock.close()

    def _enter(self) -> ASGIServer:
        return self.start()

    def _leave(self) -> None:
        self.stop()


__all__ = ["ASGIServer"]
