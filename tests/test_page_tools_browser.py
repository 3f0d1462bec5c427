"""Tool activity on the page, in a real headless Chromium over a real
uvicorn server: each tool call folded with its result as one status line
(keyboard-opened, axe-clean), images a real MCP server returned shown as
bounded thumbnails of their own bytes that open whole from the store, an
image whose bytes are not one never shown, the usage of a step that only
called tools inside its fold; live, a call folds as it streams and a
resumed run answers the fold where the call is; an error is written where
it happened, live and stored.  No page runs a script of its content or
breaks its policy."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.keys import Keys

from elelem import SyncClient
from elelem.conversation import Conversation, SQLiteStore, Store
from elelem.errors import ProviderStreamError
from elelem.stream import BlockStart, ResponseStart, TextDelta
from elelem.testing import FunctionModel, TestModel
from elelem.testing.asgi import ASGIServer
from elelem.testing.models import Reply
from elelem.tools import MCPServer
from elelem.turns.toolloop import run_sync
from elelem.vocabulary import ToolResultBlock
from elelem.web.app import create_app
from elelem.web.html import export_html
from elelem.web.ui_chunks import error_text
from test_web_approvals_browser import by, wait_for
from web_helpers import axe_violations

HERE = Path(__file__).resolve().parent
TOKEN = "page-tools-token-0123456789abcdef"
MARK = "document.documentElement.dataset.pwned='1'"
HOSTILE = f"sunny\n<script>{MARK}</script>\x1b[31mred\x1b[0m"
BROKE = ProviderStreamError("test: the model broke off <b>here</b>")


def weather(city: str) -> str:
    """The weather in a city (its answer is hostile)."""
    return f"{city}: {HOSTILE}"


def broken(city: str) -> str:
    """A tool that fails."""
    raise RuntimeError(f"no station in {city}")


async def slow_answer(request: Any) -> Reply:
    """Calls ``weather`` once; once its result is back, answers after a
    pause (the page's live fold is looked at meanwhile)."""
    last = request.messages[-1]
    if not any(isinstance(p, ToolResultBlock) for p in last.content):
        return Reply(calls=[("weather", {"city": "Paris"})])
    await asyncio.sleep(4)
    return Reply(text="Sunny in Paris.")


def breaking(_request: Any) -> Iterator[Any]:
    """Some text, then the provider's error mid-stream."""
    yield ResponseStart("resp_broken", "breaking", None)
    yield BlockStart(0, "text")
    yield TextDelta(0, "Partial answer")
    raise BROKE


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return SQLiteStore(tmp_path_factory.mktemp("page-tools") / "log.db")


@pytest.fixture(scope="module")
def tooled(store: Store) -> str:
    """A conversation whose turn ran two Python tools and a real MCP
    server's two image tools (and the resource tool elelem offers)."""
    conversation = Conversation.create(store)
    server = f"{HERE / 'mcp_picture_server.py'}"
    with (
        MCPServer.stdio(sys.executable, [server], name="pictures") as pictures,
        SyncClient(env={}) as client,
    ):
        run_sync(conversation, client, TestModel(), "Screens?", tools=[weather, broken, pictures])
    return conversation.id


@pytest.fixture(scope="module")
def server(store: Store) -> Iterator[str]:
    models = {
        "slow": FunctionModel(slow_answer, model="slow"),
        "breaking": FunctionModel(breaking, model="breaking"),
    }
    app = create_app(
        store, token=TOKEN, model="slow", models=["slow"], tools=[weather], in_process=models
    )
    with ASGIServer(app) as served:
        yield served.url


def csp_violations(driver: Any) -> list[str]:
    return [m["message"] for m in driver.get_log("browser") if "Content Security" in m["message"]]


def pwned(driver: Any) -> bool:
    return bool(
        driver.execute_script("return document.documentElement.dataset.pwned !== undefined")
    )


def summaries(driver: Any) -> list[str]:
    return [s.get_attribute("textContent") for s in by(driver, "details.tool > summary")]


TOOK = r"\d+ ms|\d+\.\d s"


def test_tool_calls_are_folded_with_their_results(
    server: str, store: Store, tooled: str, browser: Any
) -> None:
    browser.get_log("browser")
    browser.get(f"{server}/c/{tooled}?token={TOKEN}")
    shown = summaries(browser)
    # One step's five results were stored together: no call's own time.
    assert shown == [
        "tool weather · done",
        "tool broken · failed",
        "tool screenshot · done · 1 image",
        "tool forged · done · 1 image",
        "tool read_resource · failed",
    ]
    folds = by(browser, "details.tool")
    assert [f.get_attribute("open") for f in folds] == [None] * 5  # folded
    assert [f.get_attribute("data-state") for f in folds] == [
        "done",
        "failed",
        "done",
        "done",
        "failed",
    ]
    # Opened from the keyboard: the arguments and the whole result, inert.
    summary = by(browser, "details.tool > summary")[0]
    browser.execute_script("arguments[0].focus()", summary)
    summary.send_keys(Keys.ENTER)
    assert folds[0].get_attribute("open") == "true"
    detail = folds[0].find_element("css selector", ".tool-detail")
    assert [d.text for d in detail.find_elements("css selector", "dt")] == ["city"]
    assert [d.text for d in detail.find_elements("css selector", "dd")] == ['"a"']
    output = detail.find_element("css selector", "pre.tool-output")
    assert output.get_attribute("textContent") == f"a: sunny\n<script>{MARK}</script>red"
    assert not pwned(browser)
    error = folds[1].find_element("css selector", "pre.tool-error")
    assert error.get_attribute("textContent") == "RuntimeError: no station in a"
    # The first response only called tools: its usage is inside the last
    # call's fold, not a line between each call and its result.
    turn = browser.find_element("css selector", "section.turn")
    outside = turn.find_elements("css selector", ":scope > p.response")
    records = [e.body for e in store.load(tooled) if e.kind == "response"]
    assert [r.finish for r in records] == ["tool-calls", "stop"]
    lines = [
        f"usage: {r.usage.input:,} in · {r.usage.output:,} out · $0.00 · test-model"
        for r in records
    ]
    assert [p.text for p in outside] == lines[1:]
    inside = folds[-1].find_elements("css selector", "p.response")
    assert [p.get_attribute("textContent") for p in inside] == lines[:1]
    assert axe_violations(browser) == []
    assert csp_violations(browser) == []


def test_mcp_images_are_bounded_thumbnails_that_open_whole(
    server: str, store: Store, tooled: str, browser: Any
) -> None:
    browser.get_log("browser")
    browser.get(f"{server}/c/{tooled}?token={TOKEN}")
    folds = by(browser, "details.tool")
    for fold in folds[2:4]:
        fold.find_element("css selector", "summary").click()
    (thumb,) = folds[2].find_elements("css selector", "figure.thumbnail img")
    wait_for(lambda: browser.execute_script("return arguments[0].complete", thumb), "the image")
    assert browser.execute_script("return arguments[0].naturalWidth", thumb) == 1600
    assert thumb.get_attribute("src").startswith("data:image/png;base64,")
    box = thumb.rect
    assert box["height"] <= 144 + 0.5 and box["width"] <= 256  # 9rem, 16rem
    caption = folds[2].find_element("css selector", "figcaption").text
    assert caption == "[image 1600×1200, 8 KB]"
    # 90 bytes claiming image/png that are an SVG with a script: a line only.
    assert folds[3].find_elements("css selector", "img") == []
    assert (
        folds[3].find_element("css selector", "figcaption").text == "[image, 90 B]"
    )  # the forged SVG's size
    # A click opens the whole image from the store, in a tab of its own.
    link = folds[2].find_element("css selector", "a.full")
    assert link.get_attribute("target") == "_blank"
    before = set(browser.window_handles)
    link.click()
    (opened,) = wait_for(
        lambda: set(browser.window_handles) - before - {browser.current_window_handle} or None,
        "the tab",
    )
    main = browser.current_window_handle
    browser.switch_to.window(opened)
    try:
        wait_for(lambda: browser.execute_script("return document.readyState") == "complete", "it")
        whole = browser.find_element("css selector", "main.whole-image img")
        assert browser.execute_script("return arguments[0].naturalWidth", whole) == 1600
        assert whole.rect["width"] == 1600  # at its own size
        assert browser.find_element("css selector", "main.whole-image .meta").text == (
            "image/png · 1600×1200 · 8 KB"
        )
        assert axe_violations(browser) == []
        assert csp_violations(browser) == []
    finally:
        browser.close()
        browser.switch_to.window(main)
    assert csp_violations(browser) == []


def test_the_blob_route_serves_only_images_by_their_bytes(
    server: str, store: Store, tooled: str
) -> None:
    import urllib.error
    import urllib.request

    results = [
        r
        for e in store.load(tooled)
        for r in getattr(e.body, "content", ())
        if isinstance(r, ToolResultBlock) and r.attachments
    ]
    shas = {r.name: r.attachments[0].source.blob.sha256 for r in results}  # type: ignore[index,union-attr]

    def get(path: str) -> tuple[int, str, bytes]:
        try:
            with urllib.request.urlopen(f"{server}{path}", timeout=10) as response:
                return response.status, response.headers["content-type"], response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers["content-type"], exc.read()

    status, kind, body = get(f"/blob/{shas['screenshot']}?token={TOKEN}")
    assert (status, kind) == (200, "text/html; charset=utf-8")
    assert b'<img src="data:image/png;base64,iVBORw0KGgo' in body
    assert get(f"/blob/{shas['forged']}?token={TOKEN}")[::2] == (
        404,
        b"not an image this viewer shows",
    )
    assert get(f"/blob/{'0' * 64}?token={TOKEN}")[::2] == (404, b"no such image")
    assert get(f"/blob/..%2Fetc?token={TOKEN}")[0] == 404
    assert get(f"/blob/{shas['screenshot']}")[0] == 403  # the token gates it too


def test_the_export_shows_the_folds_without_app_links(store: Store, tooled: str) -> None:
    page = export_html(store.info(tooled), store.load(tooled), store.get_blob).decode()
    assert page.count('<details class="tool') == 5
    assert 'class="full"' not in page and "/blob/" not in page
    assert page.count('<img src="data:image/png;base64,') == 1
    assert "<script>" not in page


def test_live_calls_fold_and_a_resumed_run_answers_the_fold_in_place(
    server: str, store: Store, browser: Any
) -> None:
    browser.get_log("browser")
    browser.get(f"{server}/chat?token={TOKEN}")
    # What the live folds said, kept across the page's own reload.
    browser.execute_script(
        "sessionStorage.setItem('seen', '[]');"
        "new MutationObserver(() => { const seen = JSON.parse(sessionStorage.getItem('seen'));"
        " for (const s of document.querySelectorAll('#live details.tool summary'))"
        " if (!seen.includes(s.textContent)) seen.push(s.textContent);"
        " sessionStorage.setItem('seen', JSON.stringify(seen)); })"
        ".observe(document.getElementById('live'), {subtree: true, childList: true,"
        " characterData: true});"
    )
    browser.find_element("id", "chat-text").send_keys("Weather in Paris?", Keys.ENTER)
    # The run stops for the call's approval: the live page shows the fold
    # waiting, and the approval form under it (no reload).
    pending = wait_for(lambda: by(browser, "#pending-form button.approve"), "the approval")
    assert summaries(browser) == ["tool weather · awaiting approval"]
    seen = browser.execute_script("return JSON.parse(sessionStorage.getItem('seen'))")
    # Live: the call folded as it streamed, then its approval asked for (the
    # two may come in one read, the page drawn once).
    assert seen[-1] == "tool weather · awaiting approval"
    assert seen[:-1] in ([], ["tool weather · running"])
    pending[0].click()
    # The resumed run answers the call in its fold, where it is, while the
    # model is still answering (the call was its step's only one: timed).
    wait_for(
        lambda: re.fullmatch(rf"tool weather · done · ({TOOK})", summaries(browser)[0]),
        "the fold answered",
    )
    assert by(browser, "#live .answer")  # still the live page
    fold = browser.find_element("css selector", "details.tool")
    assert (
        fold.find_elements("css selector", "pre.tool-output")[-1].get_attribute("textContent")
        == f"Paris: {HOSTILE}"
    )
    assert not pwned(browser)
    wait_for(lambda: by(browser, "section.turn .text"), "the answer")
    assert browser.find_element("css selector", "section.turn .text").text == "Sunny in Paris."
    assert re.fullmatch(rf"tool weather · done · ({TOOK}|\d+ min \d+ s)", summaries(browser)[0])
    assert axe_violations(browser) == []
    assert csp_violations(browser) == []


def test_an_error_is_shown_where_it_happened_live_and_stored(
    server: str, store: Store, browser: Any
) -> None:
    browser.get_log("browser")
    browser.get(f"{server}/chat?token={TOKEN}")
    model = browser.find_element("id", "chat-model")
    model.clear()
    model.send_keys("breaking")
    browser.find_element("id", "chat-text").send_keys("Go on", Keys.ENTER)
    notice = wait_for(lambda: by(browser, "#live .answer .notice.in-place"), "the error")[0]
    expected = f"failed: {error_text(BROKE)}"
    assert notice.text == expected
    assert browser.find_element("id", "chat-status").text == "failed"
    # In place: after the text that arrived before it, then the failed
    # response's line as the log stored it.
    order = browser.execute_script(
        "return [...document.querySelectorAll('#live .answer > *')].map(n => n.className)"
    )
    assert order[-3:] == ["text", "notice in-place error", "response"]
    line = browser.find_element("css selector", "#live .answer > p.response").text
    assert browser.find_element("css selector", "#live .answer .text").text == "Partial answer"
    # The stored turn says the same where it happened.
    cid = browser.current_url.split("/c/")[1].split("?")[0]
    wait_for(lambda: browser.find_element("css selector", "main h1").text == "Go on", "heading")
    browser.get(f"{server}/c/{cid}?token={TOKEN}")
    parts = browser.execute_script(
        "return [...document.querySelectorAll('section.turn > *')].map(n => n.className)"
    )
    assert parts[:3] == ["user", "text", "warn"] or parts[:2] == ["user", "text"]
    stored = browser.find_element("css selector", "section.turn p.response .error")
    assert stored.text.startswith(f"failed: {error_text(BROKE)}")
    assert browser.find_element("css selector", "section.turn > p.response").text == line
    assert axe_violations(browser) == []
    assert csp_violations(browser) == []
