"""What the log recorded, on the stock ``useChat`` route (``POST
/api/ui-chat``): the transient ``data-*`` parts of :mod:`elelem.web.dated`
(a call's times, each response's usage line) reach a page that listens
with ``onData``, with the log's exact values, and change nothing a stock
page keeps.  Read by the real ``ai`` 6 and ``ai`` 7 packages' own
``AbstractChat`` (what ``useChat`` wraps, tests/web_node/usechat_ondata.mjs),
over a real uvicorn server and a loopback Anthropic provider speaking the
Messages API's streamed events
(https://docs.anthropic.com/en/api/messages-streaming); the store's clock
ticks half a second a commit, so every recorded time is exact."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import elelem
from elelem.conversation import SQLiteStore, Store
from elelem.testing.asgi import ASGIServer
from elelem.testing.servers import LoopbackServer
from elelem.web.app import create_app
from test_web_usechat import ANTHROPIC, CALL, TOKEN, answer, charge, ran
from web_helpers import NODE_DIR, ai7_reader_ready, ai_reader_ready


class Ticking:
    """The store's clock: each commit half a second after the one before."""

    def __init__(self) -> None:
        self._ticks = itertools.count()

    def __call__(self) -> datetime:
        return datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=0.5 * next(self._ticks))


@pytest.fixture(scope="module")
def provider() -> Iterator[LoopbackServer]:
    with LoopbackServer(answer, lifetime=300) as server:
        yield server


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return SQLiteStore(tmp_path / "log.db", clock=Ticking())


@pytest.fixture(params=[pytest.param("ai", marks=pytest.mark.slow), "ai7"])
def reader(request: pytest.FixtureRequest) -> tuple[str, str]:
    """(node, package): ai 7 under Node 22; ai 6 in the slow run."""
    package = str(request.param)
    return (ai7_reader_ready() if package == "ai7" else ai_reader_ready()), package


def chat_with(reader: tuple[str, str], url: str, text: str, approved: bool) -> dict[str, Any]:
    """``text`` sent by ``reader``'s AbstractChat, each approval answered
    ``approved``: {messages, data, errors, finishes}."""
    node, package = reader
    given = {
        "url": url,
        "body": {"aiVersion": 7 if package == "ai7" else 6},
        "text": text,
        "approved": approved,
    }
    done = subprocess.run(
        [node, str(NODE_DIR / "usechat_ondata.mjs"), json.dumps(given), package],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_PROXY": "127.0.0.1"},
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def test_on_data_gets_the_logs_times_and_lines_and_the_kept_parts_are_unchanged(
    store: Store, provider: LoopbackServer, reader: tuple[str, str]
) -> None:
    ran.clear()

    def client() -> elelem.Client:
        return elelem.Client(env=ANTHROPIC.env(provider))

    app = create_app(
        store, token=TOKEN, model=ANTHROPIC.model, client=client, models=[], tools=[charge]
    )
    with ASGIServer(app) as server:
        got = chat_with(reader, f"{server.url}/api/ui-chat?token={TOKEN}", "charge 42", True)
    assert got["errors"] == [] and got["finishes"] == 2
    assert ran == [42]
    # What the chat keeps: exactly the parts it kept before the log's parts
    # were sent (test_web_usechat.py), no data part among them.
    user, assistant = got["messages"]
    assert [user["role"], user["parts"]] == ["user", [{"type": "text", "text": "charge 42"}]]
    assert assistant["parts"] == [
        {"type": "step-start"},
        {
            "type": "tool-charge",
            "toolCallId": CALL,
            "state": "output-available",
            "input": {"amount": 42},
            "output": "charged 42",
            "approval": {"id": CALL, "approved": True},
        },
        {"type": "step-start"},
        {"type": "text", "text": "Done: charged 42.", "state": "done"},
    ]
    assert assistant["metadata"]["finishReason"] == "stop"
    # What onData was given, in order: the calling step's line (for its
    # call's fold), then, in the resumed stream, the call's recorded times
    # (its result stored alone, four commits later) and the answer's line.
    notes = [
        {"kind": "usage", "text": "usage: 10 in · 5 out"},
        {"kind": "cost", "text": "cost unknown"},  # the loopback model has no price
        {"kind": "model", "text": "claude-test"},
    ]
    assert got["data"] == [
        {
            "type": "data-response-line",
            "data": {"toolCallId": CALL, "notes": notes},
            "transient": True,
        },
        {
            "type": "data-tool-time",
            "data": {
                "toolCallId": CALL,
                "calledAt": "2026-01-01T00:00:01.000000Z",
                "answeredAt": "2026-01-01T00:00:03.000000Z",
            },
            "transient": True,
        },
        {
            "type": "data-response-line",
            "data": {"toolCallId": None, "notes": notes},
            "transient": True,
        },
    ]
