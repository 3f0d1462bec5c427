"""`elelem serve --mcp`: an MCP server's tools in the page's chat, each call
run once the page approves it, and the server's requests bound to the run
(elelem.cli.tools `run_scope`): its sampling served by
`--mcp-sampling-model` and recorded in the conversation, its request for
input declined (the page cannot ask) with the reason recorded.  The real
command, `-m test`, real SDK MCP servers asking through 2026-07-28
`input_required` rounds."""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path
from typing import Any

from cli_helpers import base_env, serving
from test_mcp_server_requests import server_requests
from test_web_approvals import chunks, post

HERE = Path(__file__).parent


def chat(base: str, token: str, text: str) -> tuple[str, list[dict[str, Any]]]:
    """A new chat turn of the test model: the conversation and its chunks."""
    request = urllib.request.Request(
        f"{base}/api/chat?token={token}",
        data=json.dumps({"text": text, "model": "test"}).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.headers["x-elelem-conversation"], chunks(response.read().decode())


def approve_only(base: str, token: str, cid: str, got: list[dict[str, Any]], name: str) -> str:
    """Approve the calls of tool ``name``, deny the others: the resumed stream."""
    calls = {c["toolCallId"]: c["toolName"] for c in got if c["type"] == "tool-input-available"}
    assert name in calls.values(), calls
    approvals = {call: tool == name for call, tool in calls.items()}
    status, stream = post(base, {"conversation": cid, "approvals": approvals}, token)
    assert status == 200, stream
    return stream


def results_of(stream: str, name: str, got: list[dict[str, Any]]) -> list[Any]:
    ids = {c["toolCallId"] for c in got if c.get("toolName") == name}
    return [c["output"] for c in chunks(stream)
            if c["type"] == "tool-output-available" and c["toolCallId"] in ids]  # fmt: skip


def test_serve_serves_an_mcp_servers_sampling_in_the_approved_call(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    server = f"{sys.executable} {HERE / 'mcp_sampling_server.py'}"
    with serving(env, "--mcp", server, "--mcp-sampling-model", "test") as (base, token):
        cid, got = chat(base, token, "poems")
        stream = approve_only(base, token, cid, got, "limerick")
    assert results_of(stream, "limerick", got) == ["test-model: Test answer to: A limerick on a"]
    ((method, outcome, usage),) = [
        (r["method"], r["outcome"], r["usage"]) for r in server_requests(env)
    ]
    assert (method, outcome, usage["output"]) == ("sampling/createMessage", "served", 23)


def test_serve_declines_a_request_for_input_with_the_reason_recorded(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    server = f"{sys.executable} {HERE / 'mcp_elicit_server.py'}"
    with serving(env, "--mcp", server) as (base, token):
        cid, got = chat(base, token, "book")
        stream = approve_only(base, token, cid, got, "book_table")
    (answer,) = results_of(stream, "book_table", got)
    assert json.loads(answer) == {"action": "decline", "content": None}
    ((request),) = server_requests(env)
    assert (request["method"], request["outcome"]) == ("elicitation/create", "decline")
    assert request["detail"]["reason"] == "elelem serve asks nobody (the page has no form for it)"
