"""`elelem serve` as a page people keep open, in a real headless Chromium:
the sidebar (grouped by day, model, cost, relative date, search with
highlighted snippets), dark mode, phone width, the chat (Enter and
Shift+Enter, stop, retry, edit and resend, attachments, errors) and axe-core
with no serious or critical violation.  One browser for the module;
screenshots are kept under the test's tmp dir (and $ELELEM_TEST_ARTIFACTS).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from elelem.cli.demo import DEMO_KEY, DEMO_KEY_ENV, loopback_catalog, paced
from elelem.client import Client
from elelem.conversation import Conversation, Store, open_store
from elelem.testing.asgi import ASGIServer
from elelem.testing.servers import LoopbackServer, RecordedRequest, Reply
from elelem.vocabulary import TextBlock
from elelem.web.app import create_app
from web_helpers import assistant, axe_violations, chromium, chromium_paths, demo_interaction

TOKEN = "ui-token-0123456789abcdef0123"
NOW = datetime(2026, 3, 12, 15, 0, tzinfo=UTC)
MODEL = "anthropic:claude-sonnet-4-5"


class Clock:
    """The store's clock, set by the test before each write."""

    def __init__(self) -> None:
        self.at = NOW

    def __call__(self) -> datetime:
        return self.at


def answered(store: Store, clock: Clock, at: datetime, question: str, answer: str) -> str:
    clock.at = at
    conversation = Conversation.create(store)
    conversation.start_turn(model="openai:gpt-5")
    conversation.add_user(question)
    conversation.add_message(assistant("openai", "gpt-5", TextBlock(answer)))
    return conversation.id


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("ui")
    clock = Clock()
    store = open_store(tmp / "elelem.db", clock=clock)
    ids = {
        "old": answered(
            store, clock, NOW - timedelta(days=40), "Old question", "An **old** answer."
        ),
        "yesterday": answered(
            store, clock, NOW - timedelta(hours=26), "Pasta for four?", "Cook 400 g of pasta."
        ),
        "today": answered(
            store, clock, NOW - timedelta(minutes=5), "Tide times", "High tide is at noon."
        ),
    }
    clock.at = NOW - timedelta(minutes=1)
    Conversation.create(store)  # empty: not listed
    return {"store": store, "clock": clock, "ids": ids, "artifacts": tmp}


def reply_for(request: RecordedRequest) -> Reply:
    """The demo answer; slowly when the question asks for it (to stop it)."""
    slow = b"slowly" in request.body
    return paced(demo_interaction(), 0.15 if slow else 0)


@pytest.fixture(scope="module")
def provider() -> Iterator[LoopbackServer]:
    with LoopbackServer(reply_for, lifetime=300) as server:
        yield server


@pytest.fixture(scope="module")
def server(home: dict[str, Any], provider: LoopbackServer) -> Iterator[str]:
    catalog = loopback_catalog(provider.url, {"anthropic": "anthropic_messages"})

    def client() -> Client:
        return Client(catalog=catalog, env={DEMO_KEY_ENV: DEMO_KEY})

    app = create_app(
        home["store"],
        token=TOKEN,
        model=MODEL,
        client=client,
        models=[MODEL, "openai:gpt-5"],
        clock=lambda: NOW,
    )
    with ASGIServer(app) as served:
        yield served.url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium_paths()
    with chromium() as driver:
        yield driver


def url(base: str, path: str) -> str:
    return f"{base}{path}?token={TOKEN}"


def shoot(driver: Any, home: dict[str, Any], name: str) -> Path:
    shot = Path(home["artifacts"]) / f"{name}.png"
    driver.save_screenshot(str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    target = os.environ.get("ELELEM_TEST_ARTIFACTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(target) / shot.name)
    return shot


def by(driver: Any, selector: str) -> list[Any]:
    return list(driver.find_elements("css selector", selector))


# --------------------------------------------------------------------------


def test_the_sidebar_groups_conversations_by_day(
    server: str, home: dict[str, Any], browser: Any
) -> None:
    browser.get(url(server, "/"))
    assert [h.text for h in by(browser, ".sidebar h2.day")] == ["TODAY", "YESTERDAY", "31 JAN 2026"]
    rows = [
        (
            a.find_element("css selector", ".title").text,
            a.find_element("css selector", ".meta").text,
        )
        for a in by(browser, ".sidebar ul.conversations a")
    ]
    assert rows == [
        ("Tide times", "openai:gpt-5 · 5 min ago"),
        ("Pasta for four?", "openai:gpt-5 · 1 day ago"),
        ("Old question", "openai:gpt-5 · 2026-01-31"),
    ]
    # The list page shows the same, with turns, as `elelem log` does.
    assert [h.text for h in by(browser, "main .day-group h2")] == [
        "Today",
        "Yesterday",
        "31 Jan 2026",
    ]
    assert by(browser, "main ul.rows .meta")[0].text == "1 turn · openai:gpt-5 · 5 min ago"
    shoot(browser, home, "ui-list")
    assert axe_violations(browser) == []


def test_sidebar_search_shows_highlighted_snippets(
    server: str, home: dict[str, Any], browser: Any
) -> None:
    browser.get(url(server, f"/c/{home['ids']['today']}"))
    current = by(browser, '.sidebar a[aria-current="page"] .title')
    assert [c.text for c in current] == ["Tide times"]
    box = browser.find_element("css selector", ".sidebar input[type=search]")
    box.send_keys("pasta\n")
    browser.find_element("css selector", "ol.hits")
    hits = by(browser, "ol.hits li")
    # The question and the answer both hold the word; each links its turn.
    assert [h.find_element("css selector", "a").text for h in hits] == ["Pasta for four?"] * 2
    assert {h.find_element("css selector", "a").get_attribute("href") for h in hits} == {
        f"{server}/c/{home['ids']['yesterday']}?token={TOKEN}#turn-1"
    }
    snippets = [h.find_element("css selector", ".snippet") for h in hits]
    assert [s.text for s in snippets] == ["Pasta for four?", "Cook 400 g of pasta."]
    marks = [[m.text for m in s.find_elements("css selector", "mark")] for s in snippets]
    assert marks == [["Pasta"], ["pasta"]]
    shoot(browser, home, "ui-search")


def test_dark_mode_and_phone_width(server: str, home: dict[str, Any], browser: Any) -> None:
    browser.get(url(server, f"/c/{home['ids']['old']}"))
    background = "return getComputedStyle(document.body).backgroundColor"
    assert browser.execute_script(background) == "rgb(255, 255, 255)"
    browser.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-color-scheme", "value": "dark"}]},
    )
    try:
        assert browser.execute_script(background) == "rgb(22, 24, 29)"
        text = browser.execute_script(
            "return getComputedStyle(document.querySelector('.text')).color"
        )
        assert text == "rgb(230, 232, 235)"
        shoot(browser, home, "ui-dark")
        assert axe_violations(browser) == []
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    size = browser.get_window_size()
    browser.set_window_size(390, 844)
    try:
        browser.get(url(server, f"/c/{home['ids']['old']}"))
        width = browser.execute_script("return document.documentElement.clientWidth")
        scrolled = browser.execute_script("return document.documentElement.scrollWidth")
        assert scrolled <= width  # nothing wider than the phone
        assert not browser.find_element("css selector", ".sidebar .history").is_displayed()
        assert browser.find_element("css selector", ".conv-head a.back").is_displayed()
        assert browser.find_element("id", "chat-text").is_displayed()
        main = browser.find_element("css selector", "main").rect
        assert main["width"] == width
        shoot(browser, home, "ui-phone")
    finally:
        browser.set_window_size(size["width"], size["height"])
