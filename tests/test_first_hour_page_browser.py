"""The page in a real headless Chromium: ``/`` opens on the chat box, with
the focus in it and the conversations below; after Stop, the heading and the
sidebar name the stored conversation without a reload.  The fixtures (a
store, a loopback provider answering slowly when asked, the app on a real
uvicorn server) are test_web_ui.py's."""

from __future__ import annotations

from typing import Any

from selenium.webdriver.common.keys import Keys

from test_web_ui import by, home, provider, server, url, wait_for

__all__ = ["home", "provider", "server"]  # fixtures, used by name


def test_home_opens_on_the_focused_chat_box(
    server: str, home: dict[str, Any], browser: Any
) -> None:
    browser.get(url(server, "/"))
    assert browser.execute_script("return document.activeElement.id") == "chat-text"
    assert [h.text for h in by(browser, "main h1")] == ["New chat"]
    assert [h.text for h in by(browser, "main .day-group h2")] == [
        "Today",
        "Yesterday",
        "31 Jan 2026",
    ]


def test_a_stopped_chat_updates_heading_and_sidebar_without_a_reload(
    server: str, home: dict[str, Any], browser: Any
) -> None:
    browser.get(url(server, "/"))
    browser.execute_script("window.elelemSamePage = true")
    browser.find_element("id", "chat-text").send_keys("answer slowly please", Keys.ENTER)
    stop = browser.find_element("id", "chat-stop")
    wait_for(lambda: stop.is_displayed(), "the stop button")
    wait_for(lambda: "330" in "".join(t.text for t in by(browser, "#live .text")), "some text")
    stop.click()
    status = browser.find_element("id", "chat-status")
    wait_for(lambda: status.text == "stopped: kept what arrived", "the stopped status")
    cid = browser.current_url.split("/c/")[1].split("?")[0]

    def listed() -> bool:
        return any(
            f"/c/{cid}?" in (a.get_attribute("href") or "") for a in by(browser, ".sidebar a")
        )

    wait_for(listed, "the sidebar listing the stopped conversation")
    wait_for(lambda: by(browser, "main h1")[0].text != "New chat", "the heading")
    current = by(browser, '.sidebar a[aria-current="page"] .title')
    assert [a.text for a in current] == [by(browser, "main h1")[0].text]
    assert browser.execute_script("return window.elelemSamePage") is True  # no reload
