"""Deferred approvals and external tool results: a run stops "awaiting" with
its pending calls in the log, and resume continues it in any process —
nothing lost, no call run twice, a SIGKILL between the two included."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import elelem
from cli_helpers import KEY, base_env, run
from elelem.conversation import Awaiting, Conversation, Decision, SQLiteStore
from elelem.testing import TestModel
from elelem.testing.servers import LoopbackServer
from elelem.tools import ExternalTool
from elelem.turns.pending import AwaitingError, ResumeError, pending
from elelem.turns.toolloop import INTERRUPTED, unanswered
from test_test_model import rows
from toolloop_wires import WIRES, Wire, anthropic_calls, anthropic_text

HERE = Path(__file__).parent
THREE = WIRES[:3]
ran: list[str] = []


@elelem.tool
def delete_file(path: str) -> str:
    """Delete a file."""
    ran.append(path)
    return f"deleted {path}"


def user_location() -> str:
    """Where the user is (the browser knows)."""
    raise AssertionError("never run in-process")


LOCATION = ExternalTool.of(user_location)
CALLS = [("call_del", "delete_file", {"path": "a.txt"}), ("call_loc", "user_location", {})]


@pytest.mark.parametrize("wire", THREE, ids=[w.shape for w in THREE])
def test_a_run_awaits_then_resumes_in_a_new_client(wire: Wire, tmp_path: Path) -> None:
    ran.clear()
    db = tmp_path / "log.db"
    conv = Conversation.create(SQLiteStore(db))
    with LoopbackServer([wire.calls(CALLS), wire.text("Deleted; you are in Oslo.")]) as server:

        async def first() -> Any:
            async with elelem.Client(env=wire.env(server)) as client:
                return await elelem.run(
                    conv, client, wire.model, "go", tools=[delete_file, LOCATION], approve="defer"
                )

        stopped = asyncio.run(first())
        assert (stopped.end, ran, len(server.requests)) == ("awaiting-approval", [], 1)
        # What the run waits for is in the log, readable by another process.
        again = Conversation.open(SQLiteStore(db), conv.id)
        waiting = pending(again)
        assert waiting is not None
        ids = {c.name: c.id for c in waiting.calls}
        assert conv.events[-1].body == Awaiting(
            approval=(ids["delete_file"],), results=(ids["user_location"],)
        )
        assert (
            waiting.state,
            [c.name for c in waiting.approval],
            [c.name for c in waiting.results],
        ) == (
            "awaiting-approval",
            ["delete_file"],
            ["user_location"],
        )

        async def second() -> Any:
            async with elelem.Client(env=wire.env(server)) as client:
                return await elelem.resume(
                    again, client,
                    approvals={ids["delete_file"]: True},
                    results={ids["user_location"]: {"city": "Oslo"}},
                    tools=[delete_file, LOCATION],
                )  # fmt: skip

        done = asyncio.run(second())
        sent = server.requests[1].body.decode()
    assert (done.end, done.text, ran) == ("completed", "Deleted; you are in Oslo.", ["a.txt"])
    assert "deleted a.txt" in sent and "Oslo" in sent
    assert [r for r in rows(again) if r[2] == "result"] == [
        ("user", None, "result", ids["delete_file"], "deleted a.txt", False),
        ("user", None, "result", ids["user_location"], '{"city":"Oslo"}', False),
    ]
    assert pending(again) is None and unanswered(again) == ()
    assert [e.kind for e in again.events].count("decision") == 1


def test_a_refusal_and_the_checks_before_anything_is_stored(tmp_path: Path) -> None:
    ran.clear()
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    with elelem.SyncClient(env={}) as client:
        elelem.run_sync(conv, client, TestModel(), "go", tools=[delete_file], approve="defer")
        waiting = pending(conv)
        assert waiting is not None
        (call,) = waiting.approval
        stored = len(conv.events)
        with pytest.raises(ResumeError, match=rf"calls await approval: {call.id} \(delete_file\)"):
            elelem.resume_sync(conv, client, TestModel(), tools=[delete_file])
        with pytest.raises(ResumeError, match="names 'nope', which awaits no approval"):
            elelem.resume_sync(conv, client, TestModel(), approvals={"nope": True, call.id: True})
        with pytest.raises(ResumeError, match="must be True or False"):
            elelem.resume_sync(conv, client, TestModel(), approvals={call.id: "yes"})  # type: ignore[dict-item]
        assert len(conv.events) == stored
        # Running on instead of resuming is refused: the calls are not settled as a crash's.
        with pytest.raises(AwaitingError, match="awaiting-approval"):
            elelem.run_sync(conv, client, TestModel(), "other", tools=[delete_file])
        # So is a plain new turn: it would leave the waiting call answered by no one.
        with pytest.raises(AwaitingError, match="awaiting-approval"):
            elelem.send_sync(conv, client, TestModel(), "something else")
        assert len(conv.events) == stored
        result = elelem.resume_sync(
            conv, client, TestModel(), approvals={call.id: False}, tools=[delete_file]
        )
        with pytest.raises(ResumeError, match="waits for no approval"):
            elelem.resume_sync(conv, client, TestModel(), approvals={call.id: True})
    assert ran == []
    assert result.text == '{"delete_file": "refused: the user did not approve this call"}'
    decision = [e.body for e in conv.events if isinstance(e.body, Decision)]
    assert decision == [Decision(refused=(call.id,))]


def child(args: list[str], markers: Path, hang: bool = False) -> subprocess.Popen[str]:
    env = {**os.environ, "ELELEM_TEST_MARKERS": str(markers)}
    if hang:
        env["ELELEM_TEST_HANG"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
    return subprocess.Popen(
        [sys.executable, str(HERE / "deferred_kill.py"), *args],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )


def kill(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGKILL)
    assert process.wait(10) == -signal.SIGKILL


def charges(markers: Path) -> int:
    path = markers / "charge"
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_sigkill_between_awaiting_and_resume_loses_nothing(tmp_path: Path) -> None:
    db, markers = tmp_path / "log.db", tmp_path / "markers"
    markers.mkdir()
    replies = [anthropic_calls([("toolu_pay", "charge", {"amount": 5})]), anthropic_text("Paid.")]
    with LoopbackServer(replies) as server:
        first = child(["run", str(db), server.url], markers)
        try:
            assert first.stdout is not None
            conv_id = first.stdout.readline().strip()
            assert first.stdout.readline().strip() == "awaiting-approval"
            kill(first)  # between awaiting and resume
        finally:
            if first.poll() is None:
                first.kill()
                first.wait()
        assert charges(markers) == 0
        second = child(["resume", str(db), server.url, conv_id, "toolu_pay"], markers)
        out, _ = second.communicate(timeout=60)
        assert second.returncode == 0
        assert out.strip() == "Paid."
        assert len(server.requests) == 2
        assert "charged 5" in server.requests[1].body.decode()
    assert charges(markers) == 1
    conv = Conversation.open(SQLiteStore(db), conv_id)
    assert [e.kind for e in conv.events] == [
        "turn-start", "message", "message", "response",
        "awaiting", "decision", "message", "message", "response",
    ]  # fmt: skip
    assert {e.turn for e in conv.events} == {1}


def test_sigkill_while_resuming_never_runs_the_call_twice(tmp_path: Path) -> None:
    db, markers = tmp_path / "log.db", tmp_path / "markers"
    markers.mkdir()
    replies = [anthropic_calls([("toolu_pay", "charge", {"amount": 5})])]
    with LoopbackServer(replies) as server:
        first = child(["run", str(db), server.url], markers)
        assert first.stdout is not None
        conv_id = first.stdout.readline().strip()
        assert first.stdout.readline().strip() == "awaiting-approval"
        kill(first)
        second = child(["resume", str(db), server.url, conv_id, "toolu_pay"], markers, hang=True)
        try:
            deadline = time.monotonic() + 30
            while charges(markers) == 0:
                assert time.monotonic() < deadline and second.poll() is None
                time.sleep(0.02)
            kill(second)  # the decision is stored, the call was running
        finally:
            if second.poll() is None:
                second.kill()
                second.wait()
    conv = Conversation.open(SQLiteStore(db), conv_id)
    assert [e.kind for e in conv.events][-2:] == ["awaiting", "decision"]
    assert pending(conv) is None
    with LoopbackServer([anthropic_text("The payment was interrupted.")]) as server:
        env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "k"}
        with elelem.SyncClient(env={**env, "ELELEM_CONFIG": "/nonexistent"}) as client:
            from deferred_kill import charge

            result = elelem.run_sync(conv, client, "anthropic:claude-test", None, tools=[charge])
        sent = json.loads(server.requests[0].body)["messages"]
    assert charges(markers) == 1  # settled, not run again
    assert result.text == "The payment was interrupted."
    assert sent[-1]["content"][0]["content"] == INTERRUPTED


CHARGE_PY = '''
"""Payment tools for the CLI test."""
import os
from pathlib import Path

def charge(amount: int) -> str:
    """Charge a card (never repeat)."""
    with (Path(os.environ["ELELEM_TEST_MARKERS"]) / "charge").open("a") as out:
        out.write("ran\\n")
    return f"charged {amount}"
'''


def test_the_cli_defers_then_approves_in_a_later_process(tmp_path: Path) -> None:
    tools, markers = tmp_path / "pay.py", tmp_path / "markers"
    tools.write_text(CHARGE_PY)
    markers.mkdir()
    pay = [("toolu_pay", "charge", {"amount": 5})]
    replies = [anthropic_calls(pay), anthropic_text("Paid.")]
    with LoopbackServer(replies) as server:
        env = {**base_env(tmp_path), "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY,
               "ELELEM_TEST_MARKERS": str(markers)}  # fmt: skip
        model = ["-m", "anthropic:claude-test", "--functions", str(tools)]
        asked = run(env, "ask", *model, "--defer", "pay 5")
        assert asked.returncode == 0, asked.stderr
        last = asked.stderr.splitlines()[-1]
        assert last.startswith("awaiting-approval: elelem approve c_")
        conv_id = last.rsplit(" ", 1)[1]
        assert charges(markers) == 0
        refused = run(env, "resume", conv_id, *model)
        assert refused.returncode == 2
        assert "call toolu_pay awaits approval: give --yes toolu_pay" in refused.stderr
        both = run(env, "approve", conv_id, "--yes", "toolu_pay", "--no", "toolu_pay", *model)
        assert (both.returncode, both.stderr) == (
            2,
            "elelem: call 'toolu_pay' is given both --yes and --no\n",
        )
        twice = run(
            env,
            "resume",
            conv_id,
            "--no",
            "toolu_pay",
            "--result",
            "x=1",
            "--result",
            "x=2",
            *model,
        )
        assert (twice.returncode, twice.stderr) == (2, "elelem: --result 'x' is given twice\n")
        no_tool = run(env, "approve", conv_id, "--yes", "toolu_pay", "-m", "anthropic:claude-test")
        assert no_tool.returncode == 2
        assert "the approved call of charge needs its tool" in no_tool.stderr
        approved = run(env, "approve", conv_id, "--yes", "toolu_pay", *model)
        assert approved.returncode == 0, approved.stderr
        assert len(server.requests) == 2
    assert approved.stdout.startswith("Paid.")
    assert "called charge(amount=5) → charged 5" in approved.stderr
    assert charges(markers) == 1
    again = run(env, "approve", conv_id, "--yes", "toolu_pay", *model)
    assert again.returncode == 2 and f"conversation {conv_id} awaits nothing" in again.stderr


def test_a_stopped_and_resumed_run_shows_in_the_log(tmp_path: Path) -> None:
    from elelem.render.markdown import conversation_markdown

    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    with elelem.SyncClient(env={}) as client:
        elelem.run_sync(
            conv, client, TestModel(), "go", tools=[delete_file, LOCATION], approve="defer"
        )
        waiting = pending(conv)
        assert waiting is not None
        ids = {c.name: c.id for c in waiting.calls}
        elelem.resume_sync(
            conv, client, TestModel(), tools=[delete_file, LOCATION],
            approvals={ids["delete_file"]: False}, results={ids["user_location"]: "Oslo"},
        )  # fmt: skip
    text = conversation_markdown(conv.info, conv.events)
    assert "*awaiting approval of 1 call, results of 1 call*" in text
    assert "*resumed: refused 1 call, 1 result given*" in text


def test_a_hosted_mcp_approval_request_is_deferred_too(tmp_path: Path) -> None:
    from elelem.testing.servers import Reply, Send, sse_body
    from test_hosted_mcp import CALL_ITEM, REQUEST_ITEM, response

    def reply(frames: list[dict[str, Any]]) -> Reply:
        return Reply(script=(Send(sse_body([(f["type"], json.dumps(f)) for f in frames])),))

    text = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "Shortened.", "annotations": []}]}  # fmt: skip
    replies = [reply(response(REQUEST_ITEM)), reply(response(CALL_ITEM, text, rid="resp_2"))]
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    responses = THREE[1]
    with LoopbackServer(replies) as server:

        async def main() -> tuple[Any, Any]:
            async with elelem.Client(env=responses.env(server)) as client:
                stopped = await elelem.run(
                    conv, client, responses.model, "shorten it", approve="defer"
                )
                waiting = pending(conv)
                assert waiting is not None and waiting.calls == ()
                (asked,) = waiting.approvals
                done = await elelem.resume(conv, client, approvals={asked.id: True})
                return stopped, done

        stopped, done = asyncio.run(main())
        second = json.loads(server.requests[1].body)
    assert (stopped.end, done.end, done.text) == ("awaiting-approval", "completed", "Shortened.")
    assert {
        "type": "mcp_approval_response",
        "approval_request_id": "mcpr_1",
        "approve": True,
    } in second["input"]


def test_the_awaiting_and_decision_events_round_trip_an_export(tmp_path: Path) -> None:
    from elelem.conversation.export import export_conversation, import_conversation

    store = SQLiteStore(tmp_path / "log.db")
    conv = Conversation.create(store)
    with elelem.SyncClient(env={}) as client:
        elelem.run_sync(conv, client, TestModel(), "go", tools=[delete_file], approve="defer")
        waiting = pending(conv)
        assert waiting is not None
        elelem.resume_sync(conv, client, TestModel(), tools=[delete_file],
                           approvals={waiting.approval[0].id: False})  # fmt: skip
    data = export_conversation(store, conv.id)
    other = SQLiteStore(tmp_path / "other.db")
    imported = import_conversation(other, data)
    again = Conversation.open(other, imported.id)
    assert [e.body for e in again.events] == [e.body for e in conv.events]
    assert export_conversation(other, imported.id) == data
