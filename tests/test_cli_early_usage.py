"""The usage line under an answer (no `--json`) says what a run spent however
the run ended, even when it ended before anything of it was shown
(docs/cli.md, "Usage limits"): a usage limit, Ctrl-C, or a provider error.
It counts what the `--json` turn line counts: the run's own responses (an
interrupted one's usage so far) and the sampling its MCP servers had served.

A run can spend before its first chunk: `approve` runs the approved call
first, and the real MCP server's `limerick` (tests/mcp_sampling_server.py)
asks the client to sample, served by `-m test` (10 in, 23 out, $0).  The
stopped turn is made with a function of the same name standing in for the
server's tool (one server start fewer).  The provider after the call is a
loopback stand-in of Anthropic's Messages API (tests/toolloop_wires.py;
its errors as https://docs.anthropic.com/en/api/errors spells them)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli_helpers import ELELEM, KEY, base_env
from elelem.cli import main
from elelem.testing.servers import LoopbackServer, Reply, no_headers, status
from toolloop_wires import anthropic_calls

SAMPLING = ["--mcp", f"{sys.executable} {Path(__file__).parent / 'mcp_sampling_server.py'}",
            "--mcp-sampling-model", "test"]  # fmt: skip
STAND_IN = 'def limerick(topic: str) -> str:\n    """A limerick."""\n    return "a poem"\n'
MODEL = "claude-sonnet-4-5"
SAMPLED = "usage: 10 in · 23 out · $0.00\n"
"""The line of a run that spent only the limerick's sampling (priced $0)."""
TOO_LONG = json.dumps(
    {"type": "error", "error": {"type": "invalid_request_error", "message": "too long"}}
).encode()


def invoke(env: dict[str, str], *args: str) -> Any:
    return CliRunner().invoke(main, list(args), env=env)


def stopped_at_limerick(tmp_path: Path, model: str, **extra: str) -> dict[str, str]:
    """A store whose last turn awaits approval of one `limerick` call
    (``extra``: the environment's provider settings)."""
    (tmp_path / "stand_in.py").write_text(STAND_IN)
    env = base_env(tmp_path, **extra)
    out = invoke(env, "ask", "-m", model, "--functions", str(tmp_path / "stand_in.py"),
                 "--defer", "p")  # fmt: skip
    assert out.exit_code == 0, out.stderr
    assert out.stderr.splitlines()[-1].startswith("awaiting-approval: "), out.stderr
    return env


def test_a_limit_that_ends_a_run_before_anything_was_shown_prints_its_usage(
    tmp_path: Path,
) -> None:
    """The approved limerick's sampling (23 out) is over 20: the run ends at
    its tool step, before any response; stdout has the line alone."""
    env = stopped_at_limerick(tmp_path, "test")
    out = invoke(env, "approve", "last", "--all", *SAMPLING, "--max-output-tokens", "20")
    assert out.exit_code == 4, out.stderr
    assert out.stdout == SAMPLED
    assert out.stderr.splitlines()[-1] == (
        "elelem: usage limit output_tokens=20 exceeded after-tools: 23 (what the turn did is kept)"
    )


def test_a_run_that_spent_nothing_before_its_limit_prints_no_line(tmp_path: Path) -> None:
    """The approved call is over --max-tool-calls 0: nothing was sent to a
    model, nothing reported usage, so no line (not a line of zeros)."""
    env = stopped_at_limerick(tmp_path, "test")
    out = invoke(env, "approve", "last", "--all", "--functions",
                 str(tmp_path / "stand_in.py"), "--max-tool-calls", "0")  # fmt: skip
    assert (out.exit_code, out.stdout) == (4, "")


def approve_then(tmp_path: Path, after: Reply, interrupt: bool) -> subprocess.CompletedProcess[str]:
    """`approve` of the stopped limerick (sampled), the request after it
    answered with ``after``; with ``interrupt`` Ctrl-C (SIGINT) once that
    request has arrived."""
    asked = anthropic_calls([("c1", "limerick", {"topic": "a"})], n=1, model=MODEL)
    with LoopbackServer([asked, after]) as server:
        env = stopped_at_limerick(tmp_path, f"anthropic:{MODEL}",
                                  ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=KEY)  # fmt: skip
        args = [ELELEM, "approve", "last", "--all", *SAMPLING]
        with subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, text=True) as child:  # fmt: skip
            if interrupt:
                deadline = time.monotonic() + 60
                while len(server.requests) < 2 and child.poll() is None:
                    assert time.monotonic() < deadline, "the request after the call never came"
                    time.sleep(0.05)
                child.send_signal(signal.SIGINT)
            stdout, stderr = child.communicate(timeout=60)
    return subprocess.CompletedProcess(args, child.returncode, stdout, stderr)


@pytest.mark.slow
def test_ctrl_c_after_the_sampling_before_any_response_prints_its_usage(tmp_path: Path) -> None:
    """Ctrl-C while the request after the approved call waits for its
    response: nothing was shown, the sampling was spent."""
    out = approve_then(tmp_path, no_headers(50), interrupt=True)
    assert out.returncode == 130, out.stderr
    assert out.stdout == SAMPLED
    assert out.stderr.splitlines()[-1] == "elelem: interrupted"


@pytest.mark.slow
def test_a_provider_error_after_the_sampling_prints_its_usage(tmp_path: Path) -> None:
    out = approve_then(tmp_path, status(400, TOO_LONG), interrupt=False)
    assert out.returncode == 1, out.stderr
    assert out.stdout == SAMPLED
    assert out.stderr.splitlines()[-1] == (
        "elelem: invalid-request: anthropic 400 invalid_request_error: too long"
    )


def test_a_provider_error_in_a_tool_loop_counts_the_sampling_in_the_line(tmp_path: Path) -> None:
    """The first response (10 in, 5 out: $0.0001) asks for the limerick,
    whose sampling is served (10 in, 23 out, $0); the second request fails.
    The line that ends what was shown counts both, as its cost prices both."""
    asked = anthropic_calls([("c1", "limerick", {"topic": "a"})], n=1, model=MODEL)
    with LoopbackServer([asked, status(400, TOO_LONG)]) as server:
        env = {**base_env(tmp_path), "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY}
        out = invoke(env, "ask", "-m", f"anthropic:{MODEL}", *SAMPLING, "poems")
    assert out.exit_code == 1, out.stderr
    assert out.stdout.endswith(
        "stopped by an error: kept what arrived\n\nusage: 20 in · 28 out · $0.0001\n"
    ), out.stdout
