"""The page in a real headless Chromium: ``/`` opens on the chat box, with
the focus in it and the conversations below; after Stop, the heading and the
sidebar name the stored conversation, and the stopped response's line is
under the answer as stored, without a reload.  The fixtures (a
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

    def frame() -> dict[str, Any]:
        # Read in one script: the sidebar is replaced while the test looks.
        return dict(
            browser.execute_script(
                "return {links: [...document.querySelectorAll('.sidebar a')].map(a => a.href),"
                " current: [...document.querySelectorAll('.sidebar a[aria-current=\"page\"] .title')]"
                ".map(t => t.textContent), heading: document.querySelector('main h1').textContent}"
            )
        )

    wait_for(
        lambda: any(f"/c/{cid}?" in link for link in frame()["links"]),
        "the sidebar listing the stopped conversation",
    )
    wait_for(lambda: frame()["heading"] != "New chat", "the heading")
    shown = frame()
    assert shown["current"] == [shown["heading"]]
    assert browser.execute_script("return window.elelemSamePage") is True  # no reload
    # The stopped response's line under the answer: the stream ended before
    # the log stored it, so it is the stored turn's own, taken in place.
    line = wait_for(lambda: by(browser, "#live .answer > p.response"), "the line")[0]
    assert line.get_attribute("outerHTML") == (
        '<p class="response"><span class="warn">interrupted: kept what arrived</span> · '
        '<span class="usage">usage: 2,164 in · 4 out</span> · <span class="cost">$0.0066</span>'
        ' · <span class="model">claude-sonnet-4-5-20250929</span></p>'
    )
    stored = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch(location.href).then((r) => r.text()).then((t) => done("
        " new DOMParser().parseFromString(t, 'text/html')"
        " .querySelector('section.turn > p.response').outerHTML));"
    )
    assert stored == line.get_attribute("outerHTML")
