"""A tool call of a durable run whose worker died between the call ledger's
``started`` and its result, played without a workflow engine: the step runs
again as a retry would, on the same store, and the tool (idempotent by its
call key) leaves exactly one line whether the dead worker's attempt acted or
not; the result is the tool's own, as in a run nobody killed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import durable_script
from elelem import Client
from elelem.conversation import SQLiteStore
from elelem.durable.steps import LEDGER, Steps
from elelem.durable.wire import CallInput
from elelem.vocabulary import ToolCallBlock

CALL = ToolCallBlock("call_1", "append_line", '{"note": "pay #0"}')
TOOLS = ("durable_script:append_line",)


@pytest.fixture
def steps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Steps:
    monkeypatch.setenv(durable_script.LINES, str(tmp_path / "lines.txt"))
    return Steps(SQLiteStore(tmp_path / "log.db"), Client(env={}))


def _call(conversation: str) -> CallInput:
    return CallInput(conversation, CALL, TOOLS, key="ev1/call_1")


def test_a_call_claimed_by_a_worker_that_died_before_acting_runs_once(
    steps: Steps, tmp_path: Path
) -> None:
    assert steps.ledger.claim("c1", "ev1/call_1") == (False, None)  # the dead worker's claim
    result = asyncio.run(steps.call(_call("c1")))
    assert (result.content, result.is_error) == ("wrote pay #0", False)
    assert durable_script.notes(tmp_path / "lines.txt") == "pay #0\n"
    assert (tmp_path / "lines.txt").read_text() == "pay #0\tkey=c1/ev1/call_1\n"


def test_a_call_whose_worker_died_after_acting_does_not_act_again(
    steps: Steps, tmp_path: Path
) -> None:
    first = asyncio.run(steps.call(_call("c1")))
    store = steps.ledger.store  # the worker died before the result was recorded:
    store._write(lambda: store._exec(f"UPDATE {LEDGER} SET result = NULL"), "forget")
    again = asyncio.run(steps.call(_call("c1")))
    assert again == first
    assert durable_script.notes(tmp_path / "lines.txt") == "pay #0\n"


def test_a_finished_call_returns_its_recorded_result_and_other_keys_act(
    steps: Steps, tmp_path: Path
) -> None:
    first = asyncio.run(steps.call(_call("c1")))
    assert asyncio.run(steps.call(_call("c1"))) == first
    asyncio.run(steps.call(_call("c2")))  # the same call id in another conversation is another call
    assert durable_script.notes(tmp_path / "lines.txt") == "pay #0\npay #0\n"
