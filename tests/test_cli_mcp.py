"""``elelem mcp tools``: a server's tools and a call of one, without a model
(issue #40), against real servers: the weather server written with the
``mcp`` SDK, and npm's server-everything, which nobody on elelem wrote."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from cli_helpers import base_env, run
from mcp_servers import EVERYTHING

WEATHER = f"{sys.executable} {Path(__file__).parent / 'mcp_weather_server.py'}"


def test_the_tools_of_a_server_and_a_call(tmp_path: Path) -> None:
    result = run(
        base_env(tmp_path),
        "mcp", "tools", WEATHER, "--call", "get_weather", '{"city": "Oslo"}',
        "--call", "snapshot", '{"city": "Oslo"}', "--call", "nope", "{}",
    )  # fmt: skip
    name = WEATHER if len(WEATHER) <= 60 else WEATHER[:59] + "…"
    assert result.stdout.splitlines() == [
        f"{name} speaks MCP 2026-07-28",
        "  get_weather  The weather in a city.",
        "  radar  A radar picture of a city, and where to find more.",
        "  snapshot  A camera picture of a city: an image only, with the same data structured.",
        "  die  Crash the server mid-call.",
        "  read_resource  Read a resource of the MCP server "
        f"{name} by its URI (as a resource link in one of its results names it).",
        "get_weather result: 4°C",
        "snapshot result: ",
        "  [image image/png]",
    ]
    assert (result.returncode, result.stderr) == (
        2,
        "nope: no such tool on this server\nelelem: 1 call(s) not made: nope\n",
    )


@pytest.mark.slow
def test_a_server_that_dies_is_a_provider_failure(tmp_path: Path) -> None:
    result = run(base_env(tmp_path), "mcp", "tools", WEATHER, "--call", "die", '{"reason": "x"}')
    assert result.returncode == 1
    assert result.stderr.endswith("stopped during a call of die: MCPError: Connection closed\n"), (
        result.stderr
    )


@pytest.mark.skipif(
    shutil.which("node") is None or not Path(EVERYTHING).exists(),
    reason="server-everything runs on Node, from tests/mcp_node (npm ci)",
)
def test_server_everything_gets_roots_and_elicitation_answers(tmp_path: Path) -> None:
    server = f"node {EVERYTHING} stdio"
    result = run(
        base_env(tmp_path),
        "mcp", "tools", "--elicit", "defaults", server,
        "--call", "get-roots-list", "{}", "--call", "trigger-elicitation-request", "{}",
        "--call", "read_resource", '{"uri": "demo://resource/dynamic/text/2"}',
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].endswith("speaks MCP 2025-11-25")
    tools = [line.split()[0] for line in lines[1:] if line.startswith("  ") and "  " in line[2:]]
    # Roots and elicitation declared: the server offers the tools that use them.
    assert {"get-roots-list", "trigger-elicitation-request", "trigger-url-elicitation"} <= set(
        tools
    )
    assert (
        "  (simulate-research-query not offered: it runs only as a task "
        "(execution.taskSupport: required), which elelem does not run)"
    ) in lines
    assert f"   URI: {Path.cwd().resolve().as_uri()}" in lines  # the working folder
    assert '    "integer": 42,' in lines  # the form's defaults, accepted
    assert "read_resource result: [resource <demo://resource/dynamic/text/2>]" in lines


def test_the_startup_timeout_of_mcp_servers_is_an_option(tmp_path: Path) -> None:
    from cli_helpers import KEY

    silent = f"{sys.executable} {Path(__file__).parent / 'mcp_hostile_server.py'} silent"
    env = base_env(tmp_path, ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL="http://127.0.0.1:9")
    result = run(env, "ask", "--mcp", silent, "--mcp-startup-timeout", "1.5", "hi")
    name = silent if len(silent) <= 60 else silent[:59] + "…"
    # Under load, asyncio's child watcher may add a line of its own when the
    # stopped server is reaped after the loop closed (a known race, not ours).
    line = (
        f"elelem: MCP server '{name}' could not be started: no answer to the handshake within 1.5 s"
    )
    assert (result.returncode, line in result.stderr.splitlines()) == (2, True), result.stderr


def test_ask_starts_with_a_prompt_of_an_mcp_server(tmp_path: Path) -> None:
    import json

    from cli_helpers import KEY, MODEL
    from elelem.testing.servers import LoopbackServer
    from toolloop_wires import anthropic_text

    with LoopbackServer([anthropic_text("Sunny.")]) as provider:
        env = base_env(tmp_path, ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=provider.url)
        result = run(
            env, "ask", "-m", MODEL, "--mcp", WEATHER,
            "--mcp-prompt", "weather:forecast_request city=Oslo", "Be brief.",
        )  # fmt: skip
        wrong = run(env, "ask", "-m", MODEL, "--mcp", WEATHER, "--mcp-prompt", "time:now", "x")
    assert (result.returncode, result.stdout.splitlines()[0]) == (0, "Sunny."), result.stderr
    (request,) = provider.requests
    asked = json.loads(request.body)["messages"][-1]["content"]
    text = asked if isinstance(asked, str) else asked[-1]["text"]
    assert text == "What is the forecast for Oslo?\n\nBe brief."
    assert (wrong.returncode, wrong.stderr) == (
        2,
        "elelem: --mcp-prompt: no MCP server 'time' (servers: 'weather')\n",
    )
