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
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from elelem.conversation import SQLiteStore, Store
from elelem.testing.servers import LoopbackServer
from test_web_usechat import APPROVED, CALL, TOKEN, provider, ran, reader, serving
from web_helpers import run_node

__all__ = ["provider", "reader"]  # fixtures, used by name


class Ticking:
    """The store's clock: each commit half a second after the one before."""

    def __init__(self) -> None:
        self._ticks = itertools.count()

    def __call__(self) -> datetime:
        return datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=0.5 * next(self._ticks))


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return SQLiteStore(tmp_path / "log.db", clock=Ticking())


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
    (got,) = run_node(node, "usechat_ondata.mjs", given, package)
    return got


def test_on_data_gets_the_logs_times_and_lines_and_the_kept_parts_are_unchanged(
    store: Store, provider: LoopbackServer, reader: tuple[str, str]
) -> None:
    ran.clear()
    with serving(store, provider) as server:
        got = chat_with(reader, f"{server.url}/api/ui-chat?token={TOKEN}", "charge 42", True)
    assert got["errors"] == [] and got["finishes"] == 2
    assert ran == [42]
    # What the chat keeps: exactly the parts it kept before the log's parts
    # were sent (test_web_usechat.py), no data part among them.
    user, assistant = got["messages"]
    assert [user["role"], user["parts"]] == ["user", [{"type": "text", "text": "charge 42"}]]
    assert assistant["parts"] == APPROVED
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
