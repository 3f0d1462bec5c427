"""The usage line `elelem approve` and `elelem resume` print under the answer
(no `--json`) counts what their `--json` turn line counts and what their
usage limits bound: the continued run's own requests and the sampling served
during it, priced alone, never the whole turn (docs/cli.md, "Usage limits"
and the `turn` event).

The model is a priced one (Anthropic's claude-sonnet-4-5, $0.0001 for each
response of 10 tokens in and 5 out) served by a loopback stand-in of the
Messages API (tests/toolloop_wires.py).  The tool is a function (the
default run), or (marked slow: a server process per command) a real MCP
server (tests/mcp_sampling_server.py) whose `limerick` asks the client to
sample, served by `-m test` (10 in, 23 out, $0).  Each run stops at its tool step
(`--defer`), so the turn holds three runs: `ask`'s, `approve`'s and
`resume`'s."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli_helpers import KEY, base_env
from elelem.cli import main
from elelem.testing.servers import LoopbackServer
from toolloop_wires import anthropic_calls, anthropic_text

SAMPLING_SERVER = f"{sys.executable} {Path(__file__).parent / 'mcp_sampling_server.py'}"
MODEL = "claude-sonnet-4-5"
WEATHER = 'def get_weather(city: str) -> str:\n    """The weather."""\n    return "18C"\n'


def invoke(env: dict[str, str], *args: str) -> Any:
    out = CliRunner().invoke(main, list(args), env=env)
    assert out.exit_code == 0, out.stderr
    return out


def usage_line(stdout: str) -> str:
    (line,) = [line for line in stdout.splitlines() if line.startswith("usage: ")]
    return line


def turn_total(stdout: str) -> dict[str, Any]:
    turn = json.loads(stdout.splitlines()[-1])
    assert turn["type"] == "turn"
    return dict(turn["usage"]["total"])


def three_runs(tmp_path: Path, tool: str, *json_flag: str) -> tuple[list[Any], list[int]]:
    """`ask --defer`, then `approve --defer`, then `resume` of one turn
    (each with ``json_flag``), the model calling ``tool`` (a function, or
    the MCP server's `limerick`) once in each of the first two runs: each
    command's output, and how many requests each sent to the model."""
    tmp_path.mkdir()
    if tool == "limerick":
        tools = ["--mcp", SAMPLING_SERVER, "--mcp-sampling-model", "test"]
        arguments = {"topic": "a"}
    else:
        (tmp_path / "tools.py").write_text(WEATHER)
        tools = ["--functions", str(tmp_path / "tools.py")]
        arguments = {"city": "a"}
    replies = [
        anthropic_calls([("c1", tool, arguments)], n=1, model=MODEL),
        anthropic_calls([("c2", tool, arguments)], n=2, model=MODEL),
        anthropic_text("The answer.", n=3, model=MODEL),
    ]
    with LoopbackServer(replies) as server:
        env = {**base_env(tmp_path), "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY}
        outs, sent = [], []
        for command in (
            ["ask", "-m", f"anthropic:{MODEL}", *tools, "--defer", "poems"],
            ["approve", "last", "--all", *tools, "--defer"],
            ["resume", "last", "--all", *tools],
        ):
            before = len(server.requests)
            outs.append(invoke(env, *command, *json_flag))
            sent.append(len(server.requests) - before)
    return outs, sent


ZERO = {"cache_read": 0, "cache_write": 0, "reasoning": 0, "hosted": {}, "raw": None}


@pytest.mark.parametrize(
    ("tool", "line"),
    [
        ("get_weather", "usage: 10 in · 5 out · $0.0001"),
        pytest.param("limerick", "usage: 20 in · 28 out · $0.0001", marks=pytest.mark.slow),
    ],
    ids=["function", "mcp-sampling"],
)
def test_approve_and_resume_lines_count_the_continued_run_as_json_does(
    tmp_path: Path, tool: str, line: str
) -> None:
    """Each continued run sent one request (10 in, 5 out: $0.0001), and
    with the MCP tool had one limerick sampled (10 in, 23 out: $0): its line
    says exactly the `--json` line's total and prices that run alone, though
    its turn by then holds two or three responses (and one or two sampling
    requests)."""
    shown, shown_sent = three_runs(tmp_path / "shown", tool)
    as_json, json_sent = three_runs(tmp_path / "json", tool, "--json")
    assert shown_sent == json_sent == [1, 1, 1]
    # ask: a fresh turn, no sampling yet (the call waits for approval).
    assert turn_total(as_json[0].stdout) == {"input": 10, "output": 5, **ZERO}
    assert usage_line(shown[0].stdout) == "usage: 10 in · 5 out · $0.0001"
    continued = ("approve", "resume")
    totals = [turn_total(out.stdout) for out in as_json[1:]]
    counted = [f"usage: {t['input']} in · {t['output']} out · $0.0001" for t in totals]
    assert dict(zip(continued, counted, strict=True)) == {"approve": line, "resume": line}
    said = [usage_line(out.stdout) for out in shown[1:]]
    assert dict(zip(continued, said, strict=True)) == {"approve": line, "resume": line}
    assert "The answer." in shown[2].stdout
