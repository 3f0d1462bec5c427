"""A stock ``useChat`` page approving a deferred call in a real headless
Chromium: ai 7's own ``AbstractChat`` (what ``useChat`` wraps) with its
``DefaultChatTransport`` and ``lastAssistantMessageIsCompleteWithApprovalResponses``,
bundled by esbuild (tests/web_node/usechat_page.mjs) and run in a page of
``elelem serve`` (same origin), against ``POST /api/ui-chat`` on a real
uvicorn server on 127.0.0.1 with a loopback Anthropic provider.

The approval request arrives, the page approves it with
``addToolApprovalResponse`` (a click), the chat sends the answer back by
itself, the tool runs exactly once and the answer streams into the same
message."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from elelem.conversation import Conversation, SQLiteStore, Store
from elelem.testing.servers import LoopbackServer
from test_web_ui import wait_for
from test_web_usechat import TOKEN, answer, ran, serving
from web_helpers import NODE_DIR, ai_reader_ready


@pytest.fixture(scope="module")
def provider() -> Iterator[LoopbackServer]:
    with LoopbackServer(answer, lifetime=300) as server:
        yield server


@pytest.fixture(scope="module")
def page_script(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The page's script: usechat_page.mjs and ai 7, bundled by esbuild."""
    ai_reader_ready()  # npm ci: ai 7 and esbuild, pinned in the lock file
    out = tmp_path_factory.mktemp("usechat") / "page.js"
    done = subprocess.run(
        [
            str(NODE_DIR / "node_modules" / ".bin" / "esbuild"),
            "usechat_page.mjs",
            "--bundle",
            "--format=iife",
            "--platform=browser",
            f"--outfile={out}",
            "--log-level=error",
        ],
        cwd=NODE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return out.read_text()


def parts(driver: Any) -> list[tuple[str, str, str, str]]:
    """(role, type, state, text) of every part the page shows."""
    return [
        tuple(p)
        for p in driver.execute_script(
            "return [...document.querySelectorAll('#usechat .part')].map(p =>"
            " [p.dataset.role, p.dataset.type, p.dataset.state || '',"
            "  p.firstChild && p.firstChild.nodeType === 3 ? p.firstChild.data : ''])"
        )
    ]


def test_a_stock_usechat_page_approves_a_deferred_call(
    provider: LoopbackServer, browser: Any, page_script: str, tmp_path: Path
) -> None:
    ran.clear()
    store: Store = SQLiteStore(tmp_path / "log.db")
    with serving(store, provider) as server:
        browser.get(f"{server.url}/chat?token={TOKEN}")
        assert browser.execute_script(
            page_script + "\nreturn window.elelemUseChat(arguments[0]);",
            f"/api/ui-chat?token={TOKEN}",
        )
        browser.execute_script("window.elelemChat.sendMessage({text: 'charge 42'});")
        # The button once the stream has ended: the page draws itself anew on
        # every change of its state, so a button found mid-stream can be gone
        # when clicked.
        approve = wait_for(
            lambda: (
                browser.execute_script("return document.getElementById('usechat').dataset")[
                    "status"
                ]
                == "ready"
                and browser.find_elements("css selector", "#usechat button.approve")
            ),
            "the approval request",
        )[0]
        assert ran == []
        assert parts(browser) == [
            ("user", "text", "", "charge 42"),
            ("assistant", "step-start", "", ""),
            ("assistant", "tool-charge", "approval-requested", '{"amount":42}'),
        ]
        approve.click()

        def answered() -> bool:
            status = browser.execute_script("return document.getElementById('usechat').dataset")
            shown = parts(browser)
            return status["status"] == "ready" and shown[-1][3] == "Done: charged 42."

        wait_for(answered, "the answer after the approval")
        shown = parts(browser)
        error = browser.execute_script("return document.getElementById('usechat').dataset.error")
    assert error is None
    assert shown == [
        ("user", "text", "", "charge 42"),
        ("assistant", "step-start", "", ""),
        ("assistant", "tool-charge", "output-available", '"charged 42"'),
        ("assistant", "step-start", "", ""),
        ("assistant", "text", "done", "Done: charged 42."),
    ]
    assert ran == [42]
    (info,) = store.list_conversations()
    notices = [type(e.body).__name__ for e in Conversation.open(store, info.id).events]
    assert notices.count("Awaiting") == 1 and notices.count("Decision") == 1
