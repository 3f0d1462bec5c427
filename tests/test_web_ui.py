"""`elelem serve` as a page people keep open, in a real headless Chromium:
the sidebar (grouped by day, model, cost, relative date, search with
highlighted snippets), dark mode, phone width, the chat (Enter and
Shift+Enter, stop, retry, edit and resend, attachments, errors) and axe-core
with no serious or critical violation.  One browser for the module;
screenshots are kept under the test's tmp dir (and $ELELEM_TEST_ARTIFACTS).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.keys import Keys

from cli_helpers import base_env, run
from elelem.cli.demo import DEMO_KEY, DEMO_KEY_ENV, loopback_catalog, paced
from elelem.client import Client
from elelem.conversation import Conversation, MessageBody, Store, open_store
from elelem.testing.asgi import ASGIServer
from elelem.testing.servers import (
    LoopbackServer,
    Pause,
    RecordedRequest,
    Reply,
    Send,
    anthropic_text_body,
)
from elelem.vocabulary import TextBlock
from elelem.web.app import create_app
from web_helpers import (
    assistant,
    axe_violations,
    demo_interaction,
    png,
)

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


MARK = "document.documentElement.dataset.pwned='1'"
HOSTILE = (
    f"<script>{MARK}</script> ",
    f'<img src=x onerror="{MARK}"> ',
    f"[click](javascript:{MARK}) ",
    "![pixel](https://evil.example/pixel.png)",
)


def hostile_reply() -> Reply:
    """A hostile answer, paused after its first pieces so the page's live
    view can be looked at."""
    body = anthropic_text_body(*HOSTILE)
    cut = body.index(b"pixel")
    cut = body.rindex(b"\n\n", 0, cut) + 2
    headers = {"content-type": "text/event-stream"}
    return Reply(200, headers, (Send(body[:cut]), Pause(1.5), Send(body[cut:])))


def reply_for(request: RecordedRequest) -> Reply:
    """The demo answer; slowly when the question asks for it (to stop it);
    the hostile answer when asked for."""
    if b"hostile" in request.body:
        return hostile_reply()
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


# -- the chat ----------------------------------------------------------------


def wait_for(condition: Any, what: str, timeout: float = 20) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def on_conversation_page(browser: Any, server: str) -> str:
    """Wait until the chat went to the stored conversation's page; its id."""
    wait_for(
        lambda: (
            "/c/" in browser.current_url
            and browser.execute_script("return document.readyState") == "complete"
            and not by(browser, "#live .answer")
        ),
        "the conversation page",
    )
    return str(browser.current_url.split("/c/")[1].split("?")[0])


def click(browser: Any, selector: str) -> None:
    """Scroll to an element as a user would (out from under the sticky chat
    box), then click it."""
    element = browser.find_element("css selector", selector)
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    element.click()


def sent(provider: LoopbackServer, before: int) -> list[dict[str, Any]]:
    return [json.loads(r.body) for r in provider.requests[before:]]


def test_enter_sends_and_shift_enter_breaks_the_line(
    server: str, home: dict[str, Any], browser: Any, provider: LoopbackServer
) -> None:
    browser.get(url(server, "/chat"))
    assert browser.find_element("id", "chat-model").get_attribute("value") == MODEL
    options = by(browser, "#chat-models option")
    assert [o.get_attribute("value") for o in options] == [MODEL, "openai:gpt-5"]
    assert axe_violations(browser) == []
    browser.find_element("id", "chat-web-search").click()
    box = browser.find_element("id", "chat-text")
    box.send_keys("first line")
    box.send_keys(Keys.SHIFT, Keys.ENTER)
    box.send_keys("second line")
    assert box.get_attribute("value") == "first line\nsecond line"
    before = len(provider.requests)
    box.send_keys(Keys.ENTER)
    cid = on_conversation_page(browser, server)
    (request,) = sent(provider, before)
    assert request["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "first line\nsecond line"}]}
    ]
    assert [t["type"] for t in request["tools"]] == ["web_search_20250305"]
    assert browser.current_url == f"{server}/c/{cid}?token={TOKEN}"
    assert browser.find_element("css selector", ".user").text == "first line\nsecond line"
    assert "The tower is 330 metres" in "".join(t.text for t in by(browser, ".text"))
    sources = [a.get_attribute("href") for a in by(browser, "ol.footnotes a.source")]
    assert sources[0] == "https://en.wikipedia.org/wiki/Eiffel_Tower" and len(sources) == 4
    home["chatted"] = cid


def test_retry_and_edit_are_overlays(
    server: str, home: dict[str, Any], browser: Any, provider: LoopbackServer
) -> None:
    cid = home["chatted"]
    browser.get(url(server, f"/c/{cid}"))
    before = len(provider.requests)
    click(browser, ".turn-actions button.retry")
    assert on_conversation_page(browser, server) == cid
    (request,) = sent(provider, before)
    # The retried turn is sent once: the old answer is not in the request.
    assert [m["role"] for m in request["messages"]] == ["user"]
    sections = by(browser, "section.turn")
    assert [s.get_attribute("class") for s in sections] == ["turn rewound", "turn"]
    assert sections[0].find_element("css selector", ".rewound-note").text == ("replaced by a retry")
    assert [b.text for b in by(browser, ".turn-actions button")] == ["Edit", "Retry", "Edit"][-2:]
    # Edit the last turn: its text is put back in the box, changed, resent.
    click(browser, "#turn-2 .turn-actions button.edit")
    box = browser.find_element("id", "chat-text")
    assert box.get_attribute("value") == "first line\nsecond line"
    box.clear()
    box.send_keys("an edited question", Keys.ENTER)
    assert on_conversation_page(browser, server) == cid
    (request,) = sent(provider, before + 1)
    assert request["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "an edited question"}]}
    ]
    notes = [n.text for n in by(browser, ".rewound-note")]
    assert notes == ["replaced by a retry", "replaced by an edited message"]
    assert [u.text for u in by(browser, ".user")][-1] == "an edited question"
    # Nothing stored was changed: the three turns are all in the log.
    events = home["store"].load(cid)
    assert [e.body.reason for e in events if e.kind == "rewind"] == ["retry", "edit"]
    shoot(browser, home, "ui-retry-edit")


def test_stop_keeps_the_partial_answer(
    server: str, home: dict[str, Any], browser: Any, provider: LoopbackServer
) -> None:
    browser.get(url(server, "/chat"))
    browser.find_element("id", "chat-text").send_keys("answer slowly please", Keys.ENTER)
    stop = browser.find_element("id", "chat-stop")
    wait_for(lambda: stop.is_displayed(), "the stop button")
    assert not browser.find_element("id", "chat-send").is_displayed()
    wait_for(lambda: "330" in "".join(t.text for t in by(browser, "#live .text")), "some text")
    stop.click()
    status = browser.find_element("id", "chat-status")
    wait_for(lambda: status.text == "stopped: kept what arrived", "the stopped status")
    assert browser.find_element("id", "chat-send").is_displayed()
    # Said where it stopped too: after what arrived.
    order = browser.execute_script(
        "return [...document.querySelectorAll('#live .answer > *')].map(n => n.className)"
    )
    assert order[-1] == "notice in-place warn"
    assert any(c.startswith("text") for c in order[:-1])
    assert by(browser, "#live .in-place")[-1].text == "stopped: kept what arrived"
    # What arrived stays on the page, rendered by the server's renderer.
    wait_for(lambda: by(browser, "#live .text.rendered strong"), "the rendered partial")
    live = "".join(t.text for t in by(browser, "#live .text"))
    assert "Height. The tower is 330" in live
    assert [s.text for s in by(browser, "#live .text strong")] == ["Height."]
    cid = browser.current_url.split("/c/")[1].split("?")[0]

    def stored() -> Any:
        records = [e.body for e in home["store"].load(cid) if e.kind == "response"]
        return records and not records[-1].complete

    wait_for(stored, "the interrupted response to be stored")
    # And it is kept in the log, its last text block marked incomplete.
    blocks = [
        p
        for e in home["store"].load(cid)
        if isinstance(e.body, MessageBody) and e.body.role == "assistant"
        for p in e.body.content
        if isinstance(p, TextBlock)
    ]
    assert "**Height.** The tower is 330" in "".join(b.text for b in blocks)
    assert not blocks[-1].complete
    shoot(browser, home, "ui-stopped")
    browser.get(url(server, f"/c/{cid}"))
    assert [w.text for w in by(browser, ".warn")] == [
        "interrupted: the text above is what arrived",
        "interrupted: kept what arrived",
    ]
    assert "The tower is 330" in "".join(t.text for t in by(browser, ".text"))


def test_attachments_by_button_and_by_drop(
    server: str, home: dict[str, Any], browser: Any, provider: LoopbackServer, tmp_path: Path
) -> None:
    picture = tmp_path / "chart.png"
    picture.write_bytes(png(8, 6))
    browser.get(url(server, "/chat"))
    browser.find_element("id", "chat-attach").send_keys(str(picture))
    browser.execute_script(
        "const form = document.getElementById('chat-form');"
        "const data = new DataTransfer();"
        "data.items.add(new File(['Revenue grew 12%.'], 'notes.txt', {type: 'text/plain'}));"
        "form.dispatchEvent(new DragEvent('drop', {dataTransfer: data, bubbles: true}));"
    )
    wait_for(lambda: len(by(browser, "#chat-files li")) == 2, "two attachments")
    names = [n.text for n in by(browser, "#chat-files .name")]
    assert names == ["chart.png", "notes.txt"]
    (thumb,) = wait_for(lambda: by(browser, "#chat-files img"), "the thumbnail")
    assert browser.execute_script("return arguments[0].naturalWidth", thumb) == 8
    assert axe_violations(browser) == []
    shoot(browser, home, "ui-attachments")
    before = len(provider.requests)
    browser.find_element("id", "chat-text").send_keys("What do these say?", Keys.ENTER)
    on_conversation_page(browser, server)
    (request,) = sent(provider, before)
    content = request["messages"][0]["content"]
    assert [c["type"] for c in content] == ["text", "image", "document"]
    assert content[1]["source"]["media_type"] == "image/png"
    assert base64.b64decode(content[1]["source"]["data"]) == png(8, 6)
    assert content[2]["source"] == {
        "type": "text",
        "media_type": "text/plain",
        "data": "Revenue grew 12%.",
    }
    image = browser.find_element("css selector", "figure.attachment img")
    assert browser.execute_script("return arguments[0].naturalWidth", image) == 8


def test_errors_are_the_cli_line(
    server: str, home: dict[str, Any], browser: Any, tmp_path: Path
) -> None:
    cli = run(base_env(tmp_path), "ask", "-m", "nosuch:model", "hi")
    assert cli.returncode != 0
    (line,) = cli.stderr.splitlines()
    assert line.startswith("elelem: ")
    browser.get(url(server, "/chat"))
    model = browser.find_element("id", "chat-model")
    model.clear()
    model.send_keys("nosuch:model")
    browser.find_element("id", "chat-text").send_keys("hi", Keys.ENTER)
    status = browser.find_element("id", "chat-status")
    wait_for(lambda: "error" in (status.get_attribute("class") or ""), "the error")
    # The reason under the message it refused, the status beside Send short.
    assert status.text == "not sent"
    notice = browser.find_element("css selector", "#live .answer .notice.in-place.error")
    assert notice.text == line.removeprefix("elelem: ")
    assert "Error:" not in notice.text  # no Python class name
    assert [u.text for u in by(browser, "#live .user")] == ["hi"]


def pwned(browser: Any) -> bool:
    return bool(
        browser.execute_script("return document.documentElement.dataset.pwned !== undefined")
    )


def test_a_hostile_answer_is_inert_live_and_stored(
    server: str, home: dict[str, Any], browser: Any
) -> None:
    browser.get(url(server, "/chat"))
    browser.find_element("id", "chat-text").send_keys("a hostile answer please", Keys.ENTER)
    wait_for(lambda: "onerror" in "".join(t.text for t in by(browser, "#live .text")), "text")
    live = browser.find_element("id", "live")
    assert "".join(t.text for t in by(browser, "#live .text")) == "".join(HOSTILE[:3])
    assert live.find_elements("css selector", "img, script, iframe, a") == []
    assert not pwned(browser)
    on_conversation_page(browser, server)
    answer = browser.find_element("css selector", ".text")
    assert answer.text == "".join(HOSTILE[:3]) + "image: pixel"
    assert answer.find_elements("css selector", "img, script, iframe") == []
    links = [a.get_dom_attribute("href") for a in answer.find_elements("css selector", "a")]
    assert links == ["https://evil.example/pixel.png"]
    assert not pwned(browser)


def post(server: str, path: str, body: bytes) -> tuple[int, str]:
    request = urllib.request.Request(
        url(server, path), data=body, headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


def test_the_render_endpoint_is_the_viewers_renderer(server: str) -> None:
    def post_render(body: bytes) -> tuple[int, str]:
        return post(server, "/api/render", body)

    text = "**a** <script>x</script> [b](javascript:x)"
    assert post_render(json.dumps({"text": text}).encode()) == (
        200,
        "<p><strong>a</strong> &lt;script&gt;x&lt;/script&gt; [b](javascript:x)</p>\n",
    )
    status, message = post_render(b'{"text": 3}')
    assert (status, message.split(":")[0]) == (400, "bad render request")


def test_bad_chat_requests_are_refused_before_anything_is_stored(
    server: str, home: dict[str, Any]
) -> None:
    store: Store = home["store"]
    before = len(store.list_conversations(limit=1000))
    old = home["ids"]["old"]
    cases = [
        ({"retry": True}, "nothing to retry or edit in a new conversation"),
        ({"text": "  "}, "a model and some text are needed"),
        (
            {"text": "x", "files": [{"name": "a.png", "media_type": "image/png", "data": "%%"}]},
            "attachment 'a.png' is not base64: Only base64 data is allowed",
        ),
        ({"conversation": old, "edit_turn": 7, "text": "x"}, "turn 7 has no message to edit"),
    ]
    for body, reason in cases:
        assert post(server, "/api/chat", json.dumps(body).encode()) == (
            400,
            f"bad chat request: {reason}",
        )
    assert post(server, "/api/chat", b'{"conversation": "c_nope", "text": "x"}') == (
        404,
        "no such conversation",
    )
    assert len(store.list_conversations(limit=1000)) == before
    assert [e.kind for e in store.load(old)].count("rewind") == 0
