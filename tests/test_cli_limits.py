"""The usage-limit options of `elelem ask` and `chat` (elelem.cli.flags
`limit_options`): `--max-requests`, `--max-input-tokens`,
`--max-output-tokens`, `--max-total-tokens`, `--max-tool-calls`, `--max-cost`
are the turn's `UsageLimits`; a turn that reaches one ends with one line and
exit 4, what it did kept, and the sampling an MCP server had served counts
in them (the sampling server is a real MCP server process)."""

from __future__ import annotations

import json
import sys
import urllib.request
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli_helpers import base_env, run, serving
from elelem.cli import main
from elelem.cli.exits import EXIT_LIMIT
from elelem.cli.flags import limits_of
from elelem.turns.limits import UsageLimits
from test_mcp_elicit_terminal import tool_results
from test_mcp_server_requests import server_requests
from web_helpers import ai7_reader_ready, read_with_ai

SAMPLING_SERVER = f"{sys.executable} {Path(__file__).parent / 'mcp_sampling_server.py'}"
WEATHER = 'def get_weather(city: str) -> str:\n    """The weather."""\n    return "18C"\n'


def invoke(env: dict[str, str], *args: str, stdin: str = "") -> Any:
    return CliRunner().invoke(main, list(args), env=env, input=stdin)


def exported(env: dict[str, str]) -> list[dict[str, Any]]:
    out = invoke(env, "export", "last")
    assert out.exit_code == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_the_options_are_the_library_limits() -> None:
    params = {"limit_requests": 3, "limit_output_tokens": 10, "limit_cost": 0.1}
    assert limits_of(params) == UsageLimits(requests=3, output_tokens=10, cost=Decimal("0.1"))
    assert limits_of({"limit_requests": None, "limit_cost": None}) is None


def test_max_requests_ends_a_tool_loop_before_its_second_request(tmp_path: Path) -> None:
    (tmp_path / "tools.py").write_text(WEATHER)
    env = base_env(tmp_path)
    out = invoke(env, "ask", "-m", "test", "--functions", str(tmp_path / "tools.py"),
                 "--max-requests", "1", "--json", "hi")  # fmt: skip
    assert out.exit_code == EXIT_LIMIT == 4
    assert out.stderr.splitlines() == [
        'called get_weather(city="a") → 18C',
        "elelem: usage limit requests=1 exceeded before-request: 2 (what the turn did is kept)",
    ]
    turn = json.loads(out.stdout.splitlines()[-1])
    assert (turn["type"], turn["end"], turn["usage"]["run"]["output"]) == (
        "turn",
        "usage-limit",
        17,
    )
    # Kept: the one response and the call's result.
    events = exported(env)[1:]
    assert [e["kind"] for e in events].count("response") == 1
    assert tool_results(env) == {"get_weather": ["18C"]}


def test_max_output_tokens_ends_the_answer_that_went_over(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    out = invoke(env, "ask", "-m", "test", "--max-output-tokens", "20", "hi there")
    assert out.exit_code == 4
    assert "Test answer to: hi there" in out.stdout  # what arrived is shown
    assert "stopped by the usage limit output_tokens" in out.stdout
    assert out.stderr.splitlines()[-1] == (
        "elelem: usage limit output_tokens=20 exceeded after-response: 21 "
        "(what the turn did is kept)"
    )
    # A bound the answer stays within changes nothing.
    ok = invoke(env, "ask", "-m", "test", "--max-output-tokens", "21", "--max-cost", "0",
                "--max-total-tokens", "29", "--max-input-tokens", "8", "hi there")  # fmt: skip
    assert ok.exit_code == 0, ok.stderr


def test_max_tool_calls_answers_the_calls_over_it(tmp_path: Path) -> None:
    (tmp_path / "tools.py").write_text(WEATHER)
    env = base_env(tmp_path)
    out = invoke(env, "ask", "-m", "test", "--functions", str(tmp_path / "tools.py"),
                 "--max-tool-calls", "1", "--max-steps", "3", "hi")  # fmt: skip
    # The test model calls each tool once: one call is within the bound.
    assert out.exit_code == 0, out.stderr
    again = invoke(env, "ask", "-m", "test", "--functions", str(tmp_path / "tools.py"),
                   "--max-tool-calls", "1", "-c", "last", "again")  # fmt: skip
    assert again.exit_code == 0, again.stderr  # each turn has its own bound


def test_in_chat_a_limit_ends_the_turn_and_the_chat_goes_on(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    out = invoke(env, "chat", "-m", "test", "--max-output-tokens", "3", stdin="one\ntwo\n")
    assert out.exit_code == 0, out.stderr
    limit = "elelem: usage limit output_tokens=3 exceeded after-response: 20"
    lines = out.stderr.splitlines()
    assert lines[1:] == [f"{limit} (what the turn did is kept)"] * 2
    assert out.stdout.count("Test answer to: ") == 2


def test_sampling_served_to_an_mcp_server_counts_in_the_turn(tmp_path: Path) -> None:
    """The run's first response generates 29 tokens and the limerick's
    sampling 23: 52 is over 40, so the sampler withholds the answer (the
    server is told which limit, the request recorded with what it used),
    and the run's check after the tool step ends the turn."""
    env = base_env(tmp_path)
    out = run(env, "ask", "-m", "test", "--mcp", SAMPLING_SERVER, "--mcp-sampling-model",
              "test", "--max-output-tokens", "40", "poems")  # fmt: skip
    assert out.returncode == 4, out.stderr
    assert out.stderr.splitlines()[-1] == (
        "elelem: usage limit output_tokens=40 exceeded after-tools: 52 (what the turn did is kept)"
    )
    (limerick,) = tool_results(env)["limerick"]
    # The server gives up on the call, saying what the client answered.
    assert limerick.endswith(
        ": refused by the usage limits: usage limit output_tokens=40 exceeded after-response: 52"
    ), limerick
    (request,) = server_requests(env)
    assert (request["method"], request["outcome"]) == ("sampling/createMessage", "refused")
    assert request["usage"]["output"] == 23


@pytest.mark.parametrize("flag", ["--max-requests", "--max-output-tokens", "--max-cost"])
def test_a_bad_limit_is_a_usage_error(tmp_path: Path, flag: str) -> None:
    out = invoke(base_env(tmp_path), "ask", "-m", "test", flag, "-1", "hi")
    assert out.exit_code == 2
    assert "-1" in out.stderr and flag in out.stderr


def _deferred(tmp_path: Path) -> tuple[dict[str, str], list[str]]:
    """A run of the test model stopped for the approval of its one call."""
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "tools.py").write_text(WEATHER)
    env = base_env(tmp_path)
    tools = ["-m", "test", "--functions", str(tmp_path / "tools.py")]
    out = invoke(env, "ask", *tools, "--defer", "hi")
    assert out.exit_code == 0, out.stderr
    assert out.stderr.splitlines()[-1].startswith("awaiting-approval: elelem approve c_")
    return env, tools


@pytest.mark.parametrize("command", ["approve", "resume"])
def test_approve_and_resume_bound_the_run_they_continue(tmp_path: Path, command: str) -> None:
    """The options of `ask`, the same exit 4 and line: the continued run's
    one response (31 tokens, the call's result read back) is over 30."""
    env, tools = _deferred(tmp_path)
    out = invoke(env, command, "last", "--all", *tools, "--max-output-tokens", "30", "--json")
    assert out.exit_code == EXIT_LIMIT, out.stderr
    assert out.stderr.splitlines() == [
        'called get_weather(city="a") → 18C',
        "elelem: usage limit output_tokens=30 exceeded after-response: 31 "
        "(what the turn did is kept)",
    ]
    turn = json.loads(out.stdout.splitlines()[-1])
    assert (turn["end"], turn["usage"]["run"]["output"]) == ("usage-limit", 31)
    assert tool_results(env) == {"get_weather": ["18C"]}
    # Bounds the continued run stays within (one request, one call) change nothing.
    env, tools = _deferred(tmp_path / "within")
    ok = invoke(env, command, "last", "--all", *tools, "--max-output-tokens", "31",
                "--max-requests", "1", "--max-tool-calls", "1", "--max-cost", "0")  # fmt: skip
    assert ok.exit_code == 0, ok.stderr
    assert "The tools answered: " in ok.stdout


def test_limits_are_refused_for_a_durable_run(tmp_path: Path) -> None:
    """A run sent to its durable workers goes on under their limits: a bound
    given here would bind nothing, so it is refused before anything is sent."""
    env, _tools = _deferred(tmp_path)
    out = invoke(env, "resume", "last", "--all", "--temporal", "127.0.0.1:9",
                 "--max-requests", "1")  # fmt: skip
    assert out.exit_code == 2
    assert out.stderr == (
        "elelem: the usage-limit options apply to a run continued here, "
        "not to one sent to --temporal or --dbos\n"
    )


def _post(base: str, token: str, route: str, body: object) -> tuple[str, list[dict[str, Any]]]:
    """POST ``body`` to ``route``: the conversation header and the UI chunks."""
    request = urllib.request.Request(
        f"{base}{route}?token={token}",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        conv = response.headers["x-elelem-conversation"]
        text = response.read().decode()
    return conv, [json.loads(x[6:]) for x in text.splitlines() if x.startswith("data: {")]


USAGE = {"input": 8, "output": 21, "reasoning": 0, "cacheRead": 0, "cacheWrite": 0, "hosted": {}}
"""What each run of "hi there" to the test model used (the run's metadata)."""


def test_serve_bounds_each_chat_run(tmp_path: Path) -> None:
    """`serve` takes the same options: each chat run is bounded; the one
    that goes over ends with the limit's error chunk, its answer kept."""
    env = base_env(tmp_path)
    with serving(env, "-m", "test", "--max-output-tokens", "20") as (base, token):
        runs = [_post(base, token, "/api/chat", {"text": "hi there"})[1] for _ in range(2)]
    for chunks in runs:  # the second run counts from 0 again: its own bound
        text = "".join(c["delta"] for c in chunks if c["type"] == "text-delta")
        assert text == "Test answer to: hi there"
        kinds = [c["type"] for c in chunks[-4:]]
        assert kinds == ["finish-step", "error", "data-response-line", "finish"]
        assert chunks[-3]["errorText"] == "usage limit output_tokens=20 exceeded after-response: 21"
        # The answer's line as the log stored it (the page writes it under
        # the answer, live: elelem.web.dated).
        assert chunks[-2]["data"] == {
            "toolCallId": None,
            "notes": [
                {"kind": "usage", "text": "usage: 8 in · 21 out"},
                {"kind": "cost", "text": "$0.00"},
                {"kind": "model", "text": "test-model"},
            ],
        }
        # The finish says the run did not stop of itself: `other` to the AI
        # SDK, elelem's `usage-limit` in the metadata.
        assert chunks[-1] == {
            "type": "finish",
            "finishReason": "other",
            "messageMetadata": {"finishReason": "usage-limit", "usage": USAGE},
        }
    # What the run did is kept.
    assert [e["kind"] for e in exported(env)[1:]].count("response") == 1


def test_the_ai_package_reads_a_run_a_limit_ended(tmp_path: Path) -> None:
    """The page's stream of a run the limit ended, read by the `ai` package
    the page speaks (7, under Node 22): valid, the limit's line its error
    and the finish `other`, elelem's `usage-limit` in the metadata."""
    node = ai7_reader_ready()
    env = base_env(tmp_path)
    with serving(env, "-m", "test", "--max-output-tokens", "20") as (base, token):
        url = f"{base}/api/chat?token={token}"
        (got,) = read_with_ai(node, [{"url": url, "body": {"text": "hi there"}}], "ai7")
    assert got["invalid"] is None
    assert got["errors"] == ["usage limit output_tokens=20 exceeded after-response: 21"]
    assert got["message"]["metadata"]["finishReason"] == "usage-limit"
    assert got["message"]["metadata"]["usage"] == USAGE
    finish = [c for c in got["chunks"] if c["type"] == "finish"]
    assert finish == [
        {
            "type": "finish",
            "finishReason": "other",
            "messageMetadata": {"finishReason": "usage-limit", "usage": USAGE},
        }
    ]


def test_serve_counts_the_sampling_of_an_approved_call(tmp_path: Path) -> None:
    """The sampling an MCP server asks for while a run of the page goes on
    counts in that run's limits, and only the run's own usage with it: the
    run resumed by Approve counts from its decision (the 29 tokens of the
    response that asked for approval are the stopped run's), so the
    limerick's 23 are within 40 and served; the response after the calls
    goes over, 104 + 23 = 127, counted the same way, and the run ends with
    the limit's error chunk."""
    env = base_env(tmp_path)
    args = ["-m", "test", "--mcp", SAMPLING_SERVER, "--mcp-sampling-model", "test",
            "--max-output-tokens", "40"]  # fmt: skip
    with serving(env, *args) as (base, token):
        conv, asked = _post(base, token, "/api/chat", {"text": "poems"})
        calls = [c["toolCallId"] for c in asked if c["type"] == "tool-approval-request"]
        assert calls == ["call_test_1_1", "call_test_1_2", "call_test_1_3"]
        _, went_on = _post(base, token, "/api/resume",
                           {"conversation": conv, "approvals": dict.fromkeys(calls, True)})  # fmt: skip
    assert went_on[-3] == {
        "type": "error",
        "errorText": "usage limit output_tokens=40 exceeded after-response: 127",
    }
    assert went_on[-2]["type"] == "data-response-line"  # the answer's line (web.dated)
    assert went_on[-2]["data"]["notes"][0] == {"kind": "usage", "text": "usage: 306 in · 104 out"}
    assert went_on[-1]["finishReason"] == "other"
    assert went_on[-1]["messageMetadata"]["finishReason"] == "usage-limit"
    assert tool_results(env)["limerick"] == ["test-model: Test answer to: A limerick on a"]
    (request,) = server_requests(env)
    assert (request["method"], request["outcome"], request["usage"]["output"]) == (
        "sampling/createMessage",
        "served",
        23,
    )


def test_approve_ends_at_the_tool_step_whose_sampling_went_over(tmp_path: Path) -> None:
    """A resumed run's sampling counts as a fresh run's does: the approved
    limerick's 23 tokens are over 20, so the sampler withholds the answer
    (counting the continued run's 23, not the stopped run's 29 with them)
    and the check after the tool step ends the run there, before another
    request is sent."""
    env = base_env(tmp_path)
    mcp = ["-m", "test", "--mcp", SAMPLING_SERVER, "--mcp-sampling-model", "test"]
    asked = invoke(env, "ask", *mcp, "--defer", "poems")
    assert asked.exit_code == 0, asked.stderr
    out = invoke(env, "approve", "last", "--all", *mcp, "--max-output-tokens", "20", "--json")
    assert out.exit_code == EXIT_LIMIT, out.stderr
    assert out.stderr.splitlines()[-1] == (
        "elelem: usage limit output_tokens=20 exceeded after-tools: 23 (what the turn did is kept)"
    )
    turn = json.loads(out.stdout.splitlines()[-1])
    assert (turn["end"], turn["usage"]["run"]["output"]) == ("usage-limit", 0)
    limit = "usage limit output_tokens=20 exceeded after-response: 23"
    assert tool_results(env)["limerick"][0].endswith(f": refused by the usage limits: {limit}")
    (request,) = server_requests(env)
    assert (request["outcome"], request["usage"]["output"]) == ("refused", 23)
    # No request after the tool step: the turn's responses are the stopped run's one.
    assert [e["kind"] for e in exported(env)[1:]].count("response") == 1


@pytest.mark.parametrize("command", ["approve", "resume"])
def test_approve_checks_the_tool_call_limit_before_the_approved_calls(
    tmp_path: Path, command: str
) -> None:
    """As a fresh run does before a tool step: the approved call would be
    the continued run's first, over 0, so it is not run (the tool's side
    effect never happens) and is answered with the limit's error; the
    decision and that answer are kept, and the turn waits no more."""
    env, tools = _deferred(tmp_path)
    ran = tmp_path / "ran"
    (tmp_path / "tools.py").write_text(
        "from pathlib import Path\n\n\n"
        'def get_weather(city: str) -> str:\n    """The weather."""\n'
        f"    Path({str(ran)!r}).write_text(city)\n"
        '    return "18C"\n'
    )
    out = invoke(env, command, "last", "--all", *tools, "--max-tool-calls", "0", "--json")
    assert out.exit_code == EXIT_LIMIT, out.stderr
    assert out.stderr.splitlines() == [
        "elelem: usage limit tool_calls=0 exceeded before-tools: 1 (what the turn did is kept)"
    ]
    assert not ran.exists()
    turn = json.loads(out.stdout.splitlines()[-1])
    assert (turn["end"], turn["usage"]["run"]["output"]) == ("usage-limit", 0)
    assert tool_results(env) == {
        "get_weather": ["not run: the usage limit tool_calls=0 was reached"]
    }
    kinds = [e["kind"] for e in exported(env)[1:]]
    assert kinds[-3:] == ["awaiting", "decision", "message"], kinds
    # Nothing waits: the call is answered, so approving again runs nothing.
    again = invoke(env, command, "last", "--all", *tools)
    assert again.exit_code == 2
    assert again.stderr.endswith(" awaits nothing\n"), again.stderr
    assert not ran.exists()


def test_the_json_turn_line_of_approve_reports_the_continued_runs_sampling(
    tmp_path: Path,
) -> None:
    """approve reports what it bounds: the continued run's usage, its
    sampling too.  The stopped turn already holds a served sampling request
    (23 output tokens, spliced from a real run's export before the stop);
    the approved limerick asks for another (23): the line's sampling is that
    one, not the turn's 46, and its total the run's 104 with it."""
    mcp = ["-m", "test", "--mcp", SAMPLING_SERVER, "--mcp-sampling-model", "test"]
    earlier = base_env(tmp_path / "earlier")
    assert invoke(earlier, "ask", *mcp, "poems").exit_code == 0
    served = [e for e in exported(earlier)[1:] if e["kind"] == "server-request"]
    assert [e["body"]["usage"]["output"] for e in served] == [23]
    stopped = base_env(tmp_path / "stopped")
    assert invoke(stopped, "ask", *mcp, "--defer", "poems").exit_code == 0
    header, *events = exported(stopped)
    at = next(n for n, e in enumerate(events) if e["kind"] == "awaiting")
    events[at:at] = served
    for seq, event in enumerate(events, 1):
        event["seq"] = seq
    header["events"] = len(events)
    export = tmp_path / "stopped.jsonl"
    export.write_text(
        "".join(
            json.dumps(x, separators=(",", ":"), ensure_ascii=False) + "\n"
            for x in (header, *events)
        )
    )
    env = base_env(tmp_path / "approving")
    assert invoke(env, "import", str(export)).exit_code == 0
    out = invoke(env, "approve", "last", "--all", *mcp, "--json")
    assert out.exit_code == 0, out.stderr
    usage = json.loads(out.stdout.splitlines()[-1])["usage"]
    outputs = {name: usage[name]["output"] for name in ("run", "sampling", "total")}
    assert outputs == {"run": 104, "sampling": 23, "total": 127}
    assert (usage["sampling"]["input"], usage["total"]["input"]) == (10, 316)
    # The turn holds both sampling requests: the line counts the later one.
    requests = [
        e["body"]["usage"]["output"] for e in exported(env)[1:] if e["kind"] == "server-request"
    ]
    assert requests == [23, 23]
