"""The stdio transport of local MCP servers, with the bounds the SDK's lacks.

The ``mcp`` SDK's ``stdio_client`` joins a server's stdout into lines with
no limit (one endless line grows memory without end, and each chunk copies
the line so far) and logs a traceback for every line that is not JSON-RPC
(a chatty server filled stderr with megabytes of them).  This transport
speaks the same newline-delimited JSON-RPC to the SDK's client
(``mcp.client.Client``):

- a line longer than ``max_line`` bytes ends the connection; the transport's
  :attr:`Bounds.failure` says so, and every request then fails;
- a line that is not JSON-RPC is counted in :attr:`Bounds.noise` (the MCP
  spec forbids it; a server's banner is the usual culprit), never logged;
- at the end stdin is closed, the server gets two seconds to exit, then its
  process group is terminated and, after two more, killed — the spec's
  shutdown order, as the SDK does it.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import IO, Any

import anyio

MAX_LINE = 16 * 1024 * 1024
"""The longest stdout line (one JSON-RPC message) read from a server."""

STARTUP_TIMEOUT = 30.0
"""Seconds a server has to answer each start-up step (the handshake, ``tools/list``).
Here rather than in :mod:`elelem.tools.mcp`, so that the command's
``--mcp-startup-timeout`` default does not import the MCP client."""

GRACE = 2.0
"""Seconds a server has to exit after its stdin closes, then after SIGTERM."""


class Bounds:
    """What the transport saw that the session cannot: a failure that ended
    the connection, and how many stdout lines were not JSON-RPC."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self.max_line = max_line
        self.failure: str | None = None
        self.noise = 0


@contextlib.asynccontextmanager
async def bounded_stdio(
    command: str,
    args: Sequence[str],
    *,
    env: Mapping[str, str] | None,
    cwd: str | None,
    errlog: IO[str],
    bounds: Bounds,
) -> AsyncIterator[tuple[Any, Any]]:
    """Start ``command args`` and yield the (read, write) streams of its
    JSON-RPC messages, for the SDK's client (``mcp.client.Client``)."""
    from mcp.client.stdio import get_default_environment
    from mcp.shared.message import SessionMessage

    process = await anyio.open_process(
        [command, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=errlog,
        env={**get_default_environment(), **(env or {})},
        cwd=cwd,
        start_new_session=True,  # its own process group: the shutdown reaches its children
    )
    to_session, read_stream = anyio.create_memory_object_stream[Any](0)
    write_stream, from_session = anyio.create_memory_object_stream[Any](0)

    async def read() -> None:
        assert process.stdout is not None
        async with to_session:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                async for line in _lines(process.stdout, bounds):
                    message = _message(line)
                    if message is None:
                        bounds.noise += 1
                    else:
                        await to_session.send(SessionMessage(message))

    async def write() -> None:
        assert process.stdin is not None
        async with from_session:
            try:
                async for outgoing in from_session:
                    text = outgoing.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(text.encode() + b"\n")
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                await to_session.aclose()  # the session sees the end, not a hang

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read)
        tasks.start_soon(write)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):  # never leave the server running
                await _stop(process)
                for stream in (read_stream, write_stream, to_session, from_session):
                    await stream.aclose()
            tasks.cancel_scope.cancel()


async def _lines(stdout: Any, bounds: Bounds) -> AsyncIterator[bytes]:
    """The non-blank lines of ``stdout``, each held once (no copy of the
    line so far per chunk); past ``bounds.max_line`` the reading stops."""
    pending = bytearray()
    async for chunk in _chunks(stdout):
        searched = len(pending)
        pending += chunk
        start = 0
        while (end := pending.find(b"\n", max(start, searched))) >= 0:
            line = bytes(pending[start:end])
            start = end + 1
            if len(line) > bounds.max_line:
                break
            if line.strip():
                yield line
        else:
            del pending[:start]
            if len(pending) <= bounds.max_line:
                continue
        bounds.failure = f"it wrote a line longer than {bounds.max_line} bytes on stdout"
        return


async def _chunks(stdout: Any) -> AsyncIterator[bytes]:
    with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, OSError):
        while True:
            yield await stdout.receive()


def _message(line: bytes) -> Any:
    """The JSON-RPC message of ``line``, or None when it is none."""
    from mcp.types import jsonrpc_message_adapter
    from pydantic import ValidationError

    try:
        return jsonrpc_message_adapter.validate_json(line, by_name=False)
    except (ValidationError, ValueError):
        return None


async def _stop(process: Any) -> None:
    from mcp.os.posix.utilities import terminate_posix_process_tree

    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    if not await _exited(process, GRACE):
        await terminate_posix_process_tree(process, GRACE)
        await _exited(process, GRACE)
    with (
        anyio.move_on_after(GRACE),  # a child that kept the pipes must not hold us
        contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError),
    ):
        await process.aclose()  # the pipes and the transport under them


async def _exited(process: Any, seconds: float) -> bool:
    # Polled, not process.wait(): that also waits for the pipes' EOF, which a
    # child that inherited them holds open.
    deadline = anyio.current_time() + seconds
    while process.returncode is None:
        if anyio.current_time() >= deadline:
            return False
        await anyio.sleep(0.01)
    return True


__all__ = ["GRACE", "MAX_LINE", "Bounds", "bounded_stdio"]
