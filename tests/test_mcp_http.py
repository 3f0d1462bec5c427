"""Remote MCP servers over HTTP, as real server processes (issue #40): a
server that dies mid-call, one that restarts and forgets its session, one
that asks for authorization, one whose reply is too long; and the SDK's log
lines, kept as the server's notes instead of reaching the terminal."""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from elelem.tools import MCPServer, MCPServerError, ToolOutcome
from mcp_servers import EVERYTHING, free_port, serve

WEATHER = str(Path(__file__).parent / "mcp_weather_server.py")


@pytest.fixture
def weather_url() -> Iterator[str]:
    port = free_port()
    with serve([sys.executable, WEATHER, "--http", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


def test_an_older_servers_http_sse_endpoint() -> None:
    port = free_port()

    async def main() -> tuple[str | None, ToolOutcome]:
        async with MCPServer.parse(f"http://127.0.0.1:{port}/sse") as server:
            (weather,) = [t for t in server.tools if t.name == "get_weather"]
            return server.protocol_version, await weather.call('{"city": "Paris"}')

    with serve([sys.executable, WEATHER, "--sse", str(port)], port):
        version, outcome = asyncio.run(main())
    assert (version, outcome) == ("2026-07-28", ToolOutcome("18°C"))


needs_everything = pytest.mark.skipif(
    shutil.which("node") is None or not Path(EVERYTHING).exists(),
    reason="server-everything runs on Node, from tests/mcp_node (npm ci)",
)

DEAD = "MCP server '127.0.0.1' stopped during a call of die: MCPError: Connection closed"


def test_a_server_that_dies_mid_call_ends_nothing_but_its_calls(weather_url: str) -> None:
    async def main() -> tuple[ToolOutcome, ToolOutcome, str | None]:
        async with MCPServer.http(weather_url) as server:
            tools = {t.name: t for t in server.tools}
            died = await tools["die"].call('{"reason": "test"}')
            later = await tools["get_weather"].call('{"city": "Paris"}')
        return died, later, server.failure

    died, later, failure = asyncio.run(main())
    assert died == later == ToolOutcome(DEAD, is_error=True)
    assert failure == DEAD


@pytest.mark.slow
def test_the_blocking_lifetime_survives_a_dying_server_too(weather_url: str) -> None:
    with MCPServer.http(weather_url) as server:
        tools = {t.name: t for t in server.tools}
        died = asyncio.run(tools["die"].call('{"reason": "test"}'))
        later = asyncio.run(tools["get_weather"].call('{"city": "Paris"}'))
    assert died == later == ToolOutcome(DEAD, is_error=True)
    assert server.failure == DEAD


@needs_everything
def test_the_sdks_log_lines_are_the_servers_notes_not_stderr(
    capfd: pytest.CaptureFixture[str],
) -> None:
    port = free_port()
    env = {**os.environ, "PORT": str(port)}

    async def main() -> MCPServer:
        server = MCPServer.http(f"http://127.0.0.1:{port}/mcp")
        with serve(["node", EVERYTHING, "streamableHttp"], port, env=env):
            await server.__aenter__()
        await server.__aexit__(None, None, None)  # its session cannot be ended: it is gone
        return server

    server = asyncio.run(main())
    assert [n for n in server.notes if "Session termination" in n] == [
        "warning: Session termination failed: All connection attempts failed"
    ]
    assert "Session termination" not in capfd.readouterr().err


class _Answers(http.server.BaseHTTPRequestHandler):
    """A loopback endpoint answering every POST with one fixed reply."""

    status = 200
    headers_out: ClassVar[dict[str, str]] = {}
    body = b""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.send_response(self.status)
        for name, value in self.headers_out.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def do_GET(self) -> None:
        self.send_response(405)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@contextlib.contextmanager
def _answering(status: int, headers: dict[str, str], body: bytes) -> Iterator[str]:
    handler = type("Handler", (_Answers,), {"status": status, "headers_out": headers, "body": body})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    finally:
        server.shutdown()
        server.server_close()


CHALLENGE = 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"'


def test_a_401_names_the_status_and_the_servers_challenge() -> None:
    async def main(url: str) -> None:
        async with MCPServer.http(url, name="private"):
            pass  # pragma: no cover - the connection fails

    with (
        _answering(401, {"www-authenticate": CHALLENGE}, b"no") as url,
        pytest.raises(MCPServerError) as caught,
    ):
        asyncio.run(main(url))
    assert str(caught.value) == (
        f"MCP server 'private' could not be started: HTTP 401 Unauthorized from {url}: the "
        f"server asks for authorization (WWW-Authenticate: {CHALLENGE}); sign in with "
        f"`elelem mcp login {url}`, or give it a token with a header "
        "(MCPServer.http(url, headers=...))"
    )


def test_a_reply_past_the_body_limit_fails_the_connection_not_the_memory() -> None:
    reply = {"jsonrpc": "2.0", "id": 0, "result": {"padding": "x" * 2_000_000}}
    body = json.dumps(reply).encode()

    async def main(url: str) -> None:
        async with MCPServer.http(url, name="big", max_body=1_000_000):
            pass  # pragma: no cover - the connection fails

    with (
        _answering(200, {"content-type": "application/json"}, body) as url,
        pytest.raises(MCPServerError) as caught,
    ):
        asyncio.run(main(url))
    assert str(caught.value) == (
        f"MCP server 'big' could not be started: a reply from {url} was longer than 1000000 bytes"
    )


def test_the_default_body_limit_is_the_stdio_line_limit() -> None:
    from elelem.tools.mcp_http import MAX_BODY
    from elelem.tools.mcp_stdio import MAX_LINE

    assert MAX_BODY == MAX_LINE == 16 * 1024 * 1024


def test_a_server_process_that_exits_before_serving_is_a_clear_error() -> None:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait(10)

    async def main() -> None:
        async with MCPServer.http(f"http://127.0.0.1:{port}/mcp", name="gone", startup_timeout=5):
            pass  # pragma: no cover - the connection fails

    with pytest.raises(MCPServerError) as caught:
        asyncio.run(main())
    assert str(caught.value).startswith("MCP server 'gone' could not be started: ")
    assert "ConnectError" in str(caught.value)


@needs_everything
def test_the_cli_reports_the_sdks_warnings_as_its_own_sanitized_lines(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from elelem.cli.tools import Toolset

    port = free_port()
    toolset = Toolset(servers=[MCPServer.http(f"http://127.0.0.1:{port}/mcp")])
    with serve(["node", EVERYTHING, "streamableHttp"], port, env={**os.environ, "PORT": str(port)}):
        toolset.__enter__()
    toolset.__exit__(None, None, None)  # the server is gone: its session cannot be ended
    assert capsys.readouterr().err == (
        "elelem: MCP server 127.0.0.1: warning: Session termination failed: "
        "All connection attempts failed\n"
    )
