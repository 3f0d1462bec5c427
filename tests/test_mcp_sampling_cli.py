"""`--mcp-sampling-model MODEL` (elelem.cli.sampling): a real MCP server's
sampling requests served by the named model during `elelem ask`, on a
2026-07-28 connection (the request rides the call's `input_required`
result and the call is sent again with the answer); and the capabilities
npm's server-everything sees elelem declare, by its exact tool list."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from cli_helpers import base_env, run
from mcp_servers import EVERYTHING
from test_mcp_elicit_terminal import tool_results
from test_mcp_server_requests import server_requests

SERVER = f"{sys.executable} {Path(__file__).parent / 'mcp_sampling_server.py'}"
LABEL = SERVER if len(SERVER) <= 60 else SERVER[:59] + "…"


def test_ask_serves_sampling_with_the_named_model(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    out = run(env, "ask", "-m", "test", "--mcp", SERVER, "--mcp-sampling-model", "test", "poems")
    assert out.returncode == 0, out.stderr
    assert f"sampled test-model for {LABEL}" in out.stderr.splitlines()
    results = tool_results(env)
    # The stateless revision: served through the call's input_required round.
    assert results["limerick"] == ["test-model: Test answer to: A limerick on a"]
    # A server that sends a standalone request mid-call has no channel for
    # it on 2026-07-28: the SDK's server refuses to send it (its words).
    assert results["haiku"] == [
        "refused a: Cannot send 'sampling/createMessage': this transport context has no "
        "back-channel for server-initiated requests."
    ]
    # Recorded in the log, what it used counted in the turn's usage line.
    assert server_requests(env) == [
        {
            "server": LABEL,
            "method": "sampling/createMessage",
            "outcome": "served",
            "detail": {
                "messages": [["user", "A limerick on a"]],
                "system": None,
                "max_tokens": 80,
                "text": "Test answer to: A limerick on a",
            },
            "provider": "test",
            "model": "test-model",
            "usage": {"input": 10, "output": 23, "cache_read": 0, "cache_write": 0,
                      "reasoning": 0, "hosted": {}, "raw": None},
        }
    ]  # fmt: skip


def test_without_a_sampling_model_sampling_is_not_declared(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    out = run(env, "ask", "-m", "test", "--mcp", SERVER, "poems")
    assert out.returncode == 0, out.stderr
    assert "sampled" not in out.stderr
    results = tool_results(env)
    assert results["limerick"] == [
        f"MCP error from {LABEL}: Client did not declare the sampling capability required "
        "by resolver '__main__:ask_limerick'"
    ]


@pytest.mark.parametrize(
    ("value", "line"),
    [
        ("", "elelem: --mcp-sampling-model is empty: give provider:model or an alias"),
        ("nosuch:model", "elelem: --mcp-sampling-model nosuch:model: unknown provider 'nosuch'"),
    ],
)
def test_a_bad_sampling_model_fails_before_any_server_starts(
    tmp_path: Path, value: str, line: str
) -> None:
    out = run(base_env(tmp_path), "ask", "-m", "test", "--mcp", SERVER,
              "--mcp-sampling-model", value, "poems")  # fmt: skip
    assert (out.returncode, out.stderr.count("\n")) == (2, 1), out.stderr
    assert out.stderr.startswith(line)


@pytest.mark.skipif(
    shutil.which("node") is None or not Path(EVERYTHING).exists(),
    reason="server-everything runs on Node, from tests/mcp_node (npm ci)",
)
def test_server_everything_offers_every_tool_a_client_without_tasks_can_use() -> None:
    from elelem.tools import MCPServer
    from elelem.tools.mcp_asks import decline
    from elelem.tools.mcp_sampling import SampleAnswer, SamplingRequest

    async def sample(request: SamplingRequest) -> SampleAnswer:
        return SampleAnswer("sampled", "m")

    with MCPServer.stdio("node", [EVERYTHING, "stdio"], elicit=decline, sample=sample) as server:
        offered = sorted(t.name for t in server.tools)
        skipped = dict(server.skipped)
    # 19 tools at most: 12 always, get-roots-list (roots), the two
    # elicitation tools (elicitation), trigger-sampling-request (sampling),
    # simulate-research-query (a task-only tool: not offered, said why),
    # and two that need the client to run sampling and elicitation as tasks
    # (tasks.requests.sampling/elicitation), which elelem does not declare.
    assert offered == [
        "echo", "get-annotated-message", "get-env", "get-resource-links",
        "get-resource-reference", "get-roots-list", "get-structured-content", "get-sum",
        "get-tiny-image", "gzip-file-as-resource",
        "read_resource",  # elelem's own: the server has resources
        "toggle-simulated-logging", "toggle-subscriber-updates",
        "trigger-elicitation-request", "trigger-long-running-operation",
        "trigger-sampling-request", "trigger-url-elicitation",
    ]  # fmt: skip
    assert skipped == {
        "simulate-research-query": "it runs only as a task (execution.taskSupport: required), "
        "which elelem does not run"
    }


@pytest.mark.parametrize("answer", [pytest.param("y", marks=pytest.mark.slow), "n"])
def test_approve_asks_before_each_sampling_request(tmp_path: Path, answer: str) -> None:
    import pexpect

    from cli_helpers import ELELEM

    env = base_env(tmp_path)
    child = pexpect.spawn(
        ELELEM,
        ["ask", "-m", "test", "--approve", "--mcp", SERVER, "--mcp-sampling-model", "test", "p"],
        env={**env, "TERM": "dumb"},
        encoding="utf-8",
        timeout=90,
    )
    try:
        for _ in range(3):  # the tool calls' approvals first, in any order
            asked = child.expect([r"run haiku.*\[y/N\]: ", r"run limerick.*\[y/N\]: ",
                                  r"run read_resource.*\[y/N\]: "])  # fmt: skip
            child.sendline("y" if asked == 1 else "n")
        child.expect_exact(
            f'let {LABEL} ask test-model: "A limerick on a" (at most 80 tokens)? [y/N]: '
        )
        child.sendline(answer)
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, child.before
    served = "test-model: Test answer to: A limerick on a"
    refused = f"MCP error from {LABEL}: the user did not approve this sampling request"
    assert tool_results(env)["limerick"] == [served if answer == "y" else refused]
