"""A tool loop killed mid-step (SIGKILL, a real subprocess) and the resumed run
that finds the unanswered calls and settles them."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from elelem import Client
from elelem.conversation import Conversation, SQLiteStore
from elelem.testing.servers import LoopbackServer
from elelem.turns.toolloop import INTERRUPTED, RERUN_NOTE, run, unanswered
from test_tool_loop import summary
from toolloop_kill import HANG, charge, lookup
from toolloop_wires import anthropic_calls, anthropic_text

HERE = Path(__file__).parent
CALLS = [("toolu_look", "lookup", {"key": "k1"}), ("toolu_pay", "charge", {"amount": 5})]


def test_sigkill_mid_step_then_the_resumed_run_settles_the_calls(tmp_path: Path) -> None:
    db, markers = tmp_path / "log.db", tmp_path / "markers"
    markers.mkdir()
    with LoopbackServer([anthropic_calls(CALLS)]) as server:
        env = {**os.environ, HANG: "1", "ELELEM_TEST_MARKERS": str(markers)}
        env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
        child = subprocess.Popen(
            [sys.executable, str(HERE / "toolloop_kill.py"), str(db), server.url],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert child.stdout is not None
            conv_id = child.stdout.readline().strip()
            deadline = time.monotonic() + 30
            while {p.name for p in markers.iterdir()} != {"lookup", "charge"}:
                assert time.monotonic() < deadline, "the child never reached its tools"
                assert child.poll() is None, "the child ended before its tools ran"
                time.sleep(0.02)
            child.send_signal(signal.SIGKILL)
            assert child.wait(10) == -signal.SIGKILL
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
    # The killed run left the calls in the log, unanswered.
    conv = Conversation.open(SQLiteStore(db), conv_id)
    assert [c.id for c in unanswered(conv)] == ["toolu_look", "toolu_pay"]
    assert summary(conv)[-1] == ("response", 1, "tool-calls")
    with LoopbackServer([anthropic_text("Looked it up; the payment was interrupted.")]) as server:

        async def main() -> Any:
            env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "k",
                   "ELELEM_CONFIG": "/nonexistent/elelem.toml"}  # fmt: skip
            async with Client(env=env) as client:
                return await run(
                    conv, client, "anthropic:claude-test", None, tools=[lookup, charge]
                )

        result = asyncio.run(main())
    assert result.text == "Looked it up; the payment was interrupted."
    assert summary(conv) == [
        ("turn-start", 1, "user"),
        ("user", 1, "text", "look and pay"),
        ("assistant", 1, "call", "toolu_look", "lookup", {"key": "k1"}),
        ("assistant", 1, "call", "toolu_pay", "charge", {"amount": 5}),
        ("response", 1, "tool-calls"),
        # Settled in the turn that made the calls: the idempotent one ran
        # again, and its result says so (issue #33).
        ("user", 1, "result", "toolu_look", RERUN_NOTE + "value of k1", False),
        ("user", 1, "result", "toolu_pay", INTERRUPTED, True),
        ("turn-start", 2, "continuation"),
        ("assistant", 2, "text", "Looked it up; the payment was interrupted."),
        ("response", 2, "stop"),
    ]
    sent = server.requests[0].body.decode()
    assert "value of k1" in sent and "not marked idempotent" in sent
    assert unanswered(conv) == ()
