"""MCP server processes for the tests: start one on a free 127.0.0.1 port,
wait until it listens, stop it (and its children) at the end."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

NODE_MODULES = Path(__file__).parent / "mcp_node" / "node_modules"

EVERYTHING = str(NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js")
"""npm's server-everything (pinned in tests/mcp_node), a server nobody on elelem wrote."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"server {process.args!r} did not listen on {port}") from None
            time.sleep(0.05)


@contextlib.contextmanager
def serve(
    command: Sequence[str], port: int, *, env: Mapping[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``command`` (a server listening on ``port``) for the block."""
    process = subprocess.Popen(
        list(command),
        env=dict(env) if env is not None else None,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for_port(port, process)
        yield process
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
