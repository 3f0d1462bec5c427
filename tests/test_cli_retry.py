"""`elelem ask` survives a rate limit visibly: one retry line, exit 0."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import CONVERSATION_LINE, KEY, MODEL, base_env, run, text_reply
from elelem.testing.servers import LoopbackServer, replay, status

RATE_LIMITED = b'{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}'


def test_ask_retries_a_429_with_a_line_and_exits_0(tmp_path: Path) -> None:
    replies = [status(429, RATE_LIMITED, headers={"retry-after": "1"}), replay(text_reply("Hi."))]
    with LoopbackServer(replies) as server:
        env = {**base_env(tmp_path), "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY}
        result = run(env, "ask", "-m", MODEL, "hello")
        assert len(server.requests) == 2
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hi.\n\nusage: 120 in · 9 out · $0.0005\n"
    first, second = result.stderr.splitlines()
    assert first == "retrying in 1.0 s: rate limit"
    assert CONVERSATION_LINE.match(second + "\n")


def test_ask_json_has_the_retry_event(tmp_path: Path) -> None:
    replies = [status(503, b"{}"), replay(text_reply("Hi."))]
    with LoopbackServer(replies) as server:
        env = {**base_env(tmp_path), "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY}
        result = run(env, "ask", "--json", "-m", MODEL, "hello")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    retry = events[0]
    assert {k: retry[k] for k in ("type", "attempt", "kind", "status", "reason")} == {
        "type": "retry",
        "attempt": 1,
        "kind": "server",
        "status": 503,
        "reason": "server error (HTTP 503)",
    }
    assert 0.25 <= retry["delay"] <= 0.5
    assert events[1]["type"] == "response-start"
