"""``elelem ask|chat`` with tools that run: --functions, --tool, --mcp,
--max-steps and --approve (in a real terminal), each call a status line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pexpect
import pytest

from cli_helpers import ELELEM, KEY, base_env, run
from elelem.testing.servers import LoopbackServer
from toolloop_wires import WIRES, Wire, anthropic_calls, anthropic_text

HERE = Path(__file__).parent
MODEL = "anthropic:claude-test"

TOOLS_PY = '''
"""Weather tools for the CLI test."""
from typing import Literal

def get_weather(city: str, unit: Literal["C", "F"] = "C") -> str:
    """The weather in a city."""
    return "18°C" if city == "Paris" else "\\x1b[31mred\\x1b[0m"

def _private() -> None:
    pass

from os.path import join  # imported, not defined here: not a tool
'''


def env_for(tmp: Path, server: LoopbackServer) -> dict[str, str]:
    return {**base_env(tmp), "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY,
            "PYTHONPATH": str(HERE)}  # fmt: skip


def test_ask_functions_runs_the_loop_and_shows_each_call(tmp_path: Path) -> None:
    path = tmp_path / "tools.py"
    path.write_text(TOOLS_PY)
    calls = [("c1", "get_weather", {"city": "Paris"}), ("c2", "get_weather", {"city": "Oslo"})]
    with LoopbackServer([anthropic_calls(calls), anthropic_text("18°C in Paris.")]) as server:
        out = run(
            env_for(tmp_path, server), "ask", "-m", MODEL, "--functions", str(path), "Weather?"
        )
    assert out.returncode == 0, out.stderr
    assert "18°C in Paris." in out.stdout
    lines = [line for line in out.stderr.splitlines() if line.startswith("called ")]
    # The tool's output is untrusted: the escape sequence is stripped.
    assert lines == [
        'called get_weather(city="Paris") → 18°C',
        'called get_weather(city="Oslo") → red',
    ]
    tools = json.loads(server.requests[0].body)["tools"]
    assert [t["name"] for t in tools] == ["get_weather"]
    assert tools[0]["input_schema"]["properties"]["unit"] == {"enum": ["C", "F"], "default": "C"}
    sent = json.loads(server.requests[1].body)["messages"][-1]["content"]
    assert [b["content"] for b in sent] == ["18°C", "\x1b[31mred\x1b[0m"]  # stored and sent exact


def test_ask_tool_module_function_and_max_steps(tmp_path: Path) -> None:
    replies = [anthropic_calls([("c1", "lookup", {"key": "k"})], n=1),
               anthropic_calls([("c2", "lookup", {"key": "j"})], n=2)]  # fmt: skip
    with LoopbackServer(replies) as server:
        out = run(env_for(tmp_path, server), "ask", "-m", MODEL, "--tool", "toolloop_kill:lookup",
                  "--max-steps", "1", "look")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert 'called lookup(key="k") → value of k' in out.stderr
    assert len(server.requests) == 2
    second = json.loads(server.requests[1].body)
    assert second["messages"][-1]["content"][0]["content"] == "value of k"


def test_ask_mcp_server_tools(tmp_path: Path) -> None:
    server_cmd = f"{sys.executable} {HERE / 'mcp_weather_server.py'}"
    calls = [("c1", "get_weather", {"city": "Paris"})]
    with LoopbackServer([anthropic_calls(calls), anthropic_text("It is 18°C.")]) as server:
        out = run(env_for(tmp_path, server), "ask", "-m", MODEL, "--mcp", server_cmd, "Paris?")
    assert out.returncode == 0, out.stderr
    assert 'called get_weather(city="Paris") → 18°C' in out.stderr
    assert "It is 18°C." in out.stdout


def test_bad_tool_options_are_usage_errors(tmp_path: Path) -> None:
    env = base_env(tmp_path, ANTHROPIC_API_KEY=KEY)
    out = run(env, "ask", "-m", MODEL, "--tool", "nosuchmodule:f", "hi")
    assert out.returncode == 2
    assert "--tool nosuchmodule:f: cannot import nosuchmodule" in out.stderr
    out = run(env, "ask", "-m", MODEL, "--tool", "os.path:join", "hi")
    assert out.returncode == 2
    assert "--tool os.path:join: tool 'join': *p parameters cannot be described" in out.stderr
    broken = (
        f"{sys.executable} -c \"import sys; sys.stderr.write('\\x1b[31mboom\\n'); sys.exit(2)\""
    )
    out = run(env, "ask", "-m", MODEL, "--mcp", broken, "hi")
    assert out.returncode == 2 and "could not be started" in out.stderr
    assert "boom" in out.stderr and "\x1b" not in out.stderr  # the server's stderr, sanitized
    env["PYTHONPATH"] = str(HERE)
    out = run(env, "ask", "-m", MODEL, "--approve", "--tool", "toolloop_kill:lookup", "hi")
    assert (
        out.returncode == 2 and "--approve asks on a terminal, and stdin is not one" in out.stderr
    )


def test_approve_asks_on_the_terminal_and_a_refusal_reaches_the_model(tmp_path: Path) -> None:
    path = tmp_path / "tools.py"
    path.write_text(TOOLS_PY)
    calls = [("c1", "get_weather", {"city": "Paris"}), ("c2", "get_weather", {"city": "Oslo"})]
    with LoopbackServer(
        [anthropic_calls(calls), anthropic_text("Only Paris.")], lifetime=120
    ) as server:
        child = pexpect.spawn(
            ELELEM,
            ["ask", "-m", MODEL, "--functions", str(path), "--approve", "Weather?"],
            env={**env_for(tmp_path, server), "TERM": "xterm-256color"},
            encoding="utf-8",
            timeout=30,
        )
        try:
            child.expect_exact('run get_weather(city="Paris")? [y/N]')
            child.sendline("y")
            child.expect_exact('run get_weather(city="Oslo")? [y/N]')
            child.sendline("n")
            child.expect_exact("Only Paris.")
            child.expect(pexpect.EOF)
            shown = child.before
        finally:
            child.close(force=True)
        assert child.exitstatus == 0
    sent = json.loads(server.requests[1].body)["messages"][-1]["content"]
    assert [(b["content"], b.get("is_error", False)) for b in sent] == [
        ("18°C", False),
        ("refused: the user did not approve this call", True),
    ]
    assert shown is not None


@pytest.mark.parametrize("wire", WIRES[1:], ids=[w.shape for w in WIRES[1:]])
def test_ask_functions_on_every_other_shape(wire: Wire, tmp_path: Path) -> None:
    path = tmp_path / "tools.py"
    path.write_text(TOOLS_PY)
    calls = [("c1", "get_weather", {"city": "Paris"})]
    with LoopbackServer([wire.calls(calls), wire.text("18°C in Paris.")]) as server:
        env = {**base_env(tmp_path), **wire.env(server), "PYTHONPATH": str(HERE)}
        out = run(env, "ask", "-m", wire.model, "--functions", str(path), "Weather?")
    assert out.returncode == 0, out.stderr
    assert "18°C in Paris." in out.stdout
    assert 'called get_weather(city="Paris") → 18°C' in out.stderr
    assert len(server.requests) == 2


def test_decorated_tools_in_a_functions_file_are_kept_with_their_settings(
    tmp_path: Path,
) -> None:
    # issue #33: @elelem.tool(...) functions were silently left out.
    from elelem.cli.tools import functions_in

    path = tmp_path / "tools.py"
    path.write_text(
        "import elelem\n\n\n"
        "def plain(city: str) -> str:\n    '''Plain.'''\n    return city\n\n\n"
        "@elelem.tool(idempotent=True, timeout=5)\n"
        "def careful(city: str) -> str:\n    '''Careful.'''\n    return city\n\n\n"
        "@elelem.tool\n"
        "def bare(city: str) -> str:\n    '''Bare.'''\n    return city\n"
    )
    tools = functions_in(path)
    assert [(t.name, t.idempotent, t.timeout) for t in tools] == [
        ("plain", False, 60.0),
        ("careful", True, 5),
        ("bare", False, 60.0),
    ]
