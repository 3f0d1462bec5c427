"""``elelem serve``'s pending approvals in a real headless Chromium: a run
stopped by the library (``approve="defer"``) shows its call with Approve and
Deny; Approve (by keyboard) runs the tool exactly once and the answer
appears; Deny (by mouse) sends the refusal and the answer appears; a replay
of the request runs nothing; an external tool's result is typed in its box.
The page keeps its policy (no inline script) and axe-core finds no serious
violation.  The app runs on a real uvicorn server on 127.0.0.1, the model is
a loopback Anthropic provider."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.keys import Keys

from elelem.conversation import SQLiteStore, Store
from elelem.testing.asgi import ASGIServer
from elelem.testing.servers import LoopbackServer
from test_web_approvals import CALL, LOCATION, TOKEN, answer, charge, ran, serving, stopped
from web_helpers import axe_violations


@pytest.fixture(scope="module")
def provider() -> Iterator[LoopbackServer]:
    with LoopbackServer(answer, lifetime=300) as server:
        yield server


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return SQLiteStore(tmp_path_factory.mktemp("approvals") / "log.db")


@pytest.fixture(scope="module")
def server(store: Store, provider: LoopbackServer) -> Iterator[ASGIServer]:
    with serving(store, provider, [charge, LOCATION]) as served:
        yield served


def by(driver: Any, selector: str) -> list[Any]:
    return list(driver.find_elements("css selector", selector))


def wait_for(condition: Any, what: str, timeout: float = 20) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            found = condition()
        except Exception:  # noqa: BLE001 - the page is being replaced: look again
            found = None
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def answered(driver: Any) -> str:
    """Wait until the page shows the stored conversation with no pending
    calls left; the answer's text."""

    def done() -> str | None:
        if by(driver, "#pending") or by(driver, "#live .answer"):
            return None
        if driver.execute_script("return document.readyState") != "complete":
            return None
        texts = [t.text for t in by(driver, "section.turn .text")]
        return texts[-1] if texts else None

    return str(wait_for(done, "the answer of the resumed run"))


def console_errors(driver: Any) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def shoot(driver: Any, tmp_path: Path, name: str) -> None:
    shot = tmp_path / f"{name}.png"
    driver.save_screenshot(str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_approve_by_keyboard_runs_the_call_once(
    server: ASGIServer,
    store: Store,
    provider: LoopbackServer,
    browser: Any,
    tmp_path: Path,
) -> None:
    ran.clear()
    conv = stopped(store, provider)
    browser.get_log("browser")
    browser.get(f"{server.url}/c/{conv.id}?token={TOKEN}")
    assert browser.find_element("id", "pending-title").text == "Waiting for approval"
    assert [b.text for b in by(browser, "#pending-form .choice button")] == ["Approve", "Deny"]
    assert by(browser, "#pending-form button[type=submit]") == []
    assert browser.find_element("css selector", "#pending legend").text == "run charge"
    names = [d.text for d in by(browser, "#pending dl.arguments dt")]
    values = [d.text for d in by(browser, "#pending dl.arguments dd")]
    assert names == ["amount", "note"]
    assert values[0] == "42"
    assert values[1] == (
        '"line one\\nline two <b>bold</b> \\u001b[31mred\\u001b[0m  ' + "x" * 300 + '"'
    )
    # Wrapped inside the column, never cut or overflowing it.
    pre = by(browser, "#pending dd pre")[1]
    assert browser.execute_script("return arguments[0].scrollWidth", pre) <= pre.rect["width"] + 1
    assert pre.rect["height"] > 2 * browser.execute_script(
        "return parseFloat(getComputedStyle(arguments[0]).lineHeight)", pre
    )
    # The stored call's line above wraps too: nothing widens the page.
    assert browser.execute_script(
        "return document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    )
    assert axe_violations(browser) == []
    shoot(browser, tmp_path, "serve-pending")
    approve = browser.find_element("css selector", "#pending-form button.approve")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", approve)
    approve.send_keys(Keys.ENTER)  # focused and pressed from the keyboard
    assert answered(browser) == "Done: charged 42."
    assert ran == [42]
    notices = [n.text for n in by(browser, "section.turn .notice")]
    assert notices == ["awaiting approval of 1 call", "resumed: approved 1 call"]
    # A replay of the same request from the page runs nothing.
    replay = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch(`/api/resume${location.search}`, {method: 'POST',"
        " headers: {'content-type': 'application/json'},"
        " body: JSON.stringify({conversation: arguments[0], approvals: {[arguments[1]]: true}})})"
        ".then(async r => done([r.status, await r.text()]));",
        conv.id,
        CALL,
    )
    assert replay == [409, "cannot resume: the conversation waits for no approval and no result"]
    assert ran == [42]
    assert [m for m in console_errors(browser) if "Content Security Policy" in m] == []


def test_deny_by_mouse_sends_the_refusal(
    server: ASGIServer, store: Store, provider: LoopbackServer, browser: Any
) -> None:
    ran.clear()
    conv = stopped(store, provider)
    browser.get_log("browser")
    browser.get(f"{server.url}/c/{conv.id}?token={TOKEN}")
    deny = browser.find_element("css selector", "#pending-form button.deny")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", deny)
    deny.click()
    assert answered(browser) == "Done: refused: the user did not approve this call."
    assert ran == []
    assert [n.text for n in by(browser, "section.turn .notice")] == [
        "awaiting approval of 1 call",
        "resumed: refused 1 call",
    ]
    assert console_errors(browser) == []


def test_a_result_box_and_continue(
    server: ASGIServer, store: Store, provider: LoopbackServer, browser: Any, tmp_path: Path
) -> None:
    ran.clear()
    conv = stopped(store, provider, "charge 42 and locate me")
    browser.get(f"{server.url}/c/{conv.id}?token={TOKEN}")
    assert [f.find_element("css selector", "legend").text for f in by(browser, "fieldset")] == [
        "run charge",
        "result of user_location",
    ]
    go_on = browser.find_element("css selector", "#pending-form button[type=submit]")
    assert go_on.text == "Continue"
    assert axe_violations(browser) == []
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", go_on)
    go_on.click()  # nothing decided yet: the page says so, nothing is sent
    status = browser.find_element("id", "chat-status")
    assert status.text == "approve or deny every call first"
    approve = browser.find_element("css selector", "#pending-form button.approve")
    approve.click()
    assert approve.get_attribute("aria-pressed") == "true"
    assert ran == []  # chosen, not sent: Continue sends
    box = browser.find_element("id", "pending-result-1")
    box.send_keys("Oslo, Norway")
    shoot(browser, tmp_path, "serve-pending-result")
    go_on.click()
    assert answered(browser) == "Done: charged 42 / Oslo, Norway."
    assert ran == [42]
