"""Hostile local MCP servers: start-up has a deadline, a stdout line a
limit, a tool result a size, and non-JSON output costs no traceback
(issue #33).  The servers are real processes speaking raw JSON-RPC."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from elelem.tools import MCPServer, MCPServerError

SERVER = str(Path(__file__).parent / "mcp_hostile_server.py")


def hostile(mode: str, **options: float) -> MCPServer:
    return MCPServer.stdio(sys.executable, [SERVER, mode], name=mode, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(("mode", "step"), [("silent", "the handshake"), ("no-list", "tools/list")])
def test_a_server_that_never_answers_meets_the_startup_deadline(mode: str, step: str) -> None:
    with pytest.raises(MCPServerError) as caught, hostile(mode, startup_timeout=1.0):
        pass  # pragma: no cover - the connection fails
    assert str(caught.value) == (
        f"MCP server {mode!r} could not be started: no answer to {step} within 1.0 s"
    )


def test_a_line_past_the_line_limit_fails_the_connection() -> None:
    async def main() -> None:
        async with hostile("long-line", startup_timeout=20.0, max_line=1024 * 1024):
            pass  # pragma: no cover - the connection fails

    with pytest.raises(MCPServerError) as caught:
        asyncio.run(main())
    assert str(caught.value) == (
        "MCP server 'long-line' could not be started: it wrote a line longer than "
        "1048576 bytes on stdout"
    )


def test_a_result_past_the_result_limit_is_cut_and_says_so() -> None:
    async def main() -> tuple[int, str]:
        async with hostile("big-result", max_result=100_000) as server:
            (tool,) = server.tools
            outcome = await tool.call("{}")
            return len(outcome.content), outcome.content[-120:]

    size, tail = asyncio.run(main())
    note = "\n[elelem: the result was cut to its first 100000 of 3000000 characters]"
    assert tail.endswith(note)
    assert size == 100_000 + len(note)


def test_lines_that_are_not_json_rpc_are_counted_not_logged(
    capfd: pytest.CaptureFixture[str],
) -> None:
    async def main() -> tuple[list[str], int]:
        async with hostile("noise") as server:
            return [t.name for t in server.tools], server.stdout_noise

    assert asyncio.run(main()) == (["dump"], 2000)
    assert "Traceback" not in capfd.readouterr().err


def test_an_mcp_tool_named_like_a_function_is_a_usage_error(tmp_path: Path) -> None:
    from cli_helpers import KEY, MODEL, base_env, run

    functions = tmp_path / "tools.py"
    functions.write_text('def dump() -> str:\n    """Dump."""\n    return "x"\n')
    env = base_env(tmp_path, ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL="http://127.0.0.1:9")
    server = f"{sys.executable} {SERVER} big-result"
    result = run(env, "ask", "-m", MODEL, "--functions", str(functions), "--mcp", server, "hi")
    assert (result.returncode, result.stderr) == (
        2,
        "elelem: two tools are named 'dump' (each of --functions, --tool and --mcp "
        "needs its own names)\n",
    )
