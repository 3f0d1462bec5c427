"""The live chat of ``elelem serve`` in a real headless Chromium over a real
uvicorn server: what streams is drawn as the stored page draws it after a
reload.  Hosted activity is folded as it streams (its inputs inside), a
provider item no neutral part holds (``ai`` 7's ``custom`` part) is named,
calls waiting for approval (ours, or a provider's hosted tool, named with
its server) get their Approve and Deny under the live answer (heading and
sidebar updated, no reload), a refused call is shown refused,
and the images a real MCP server's tool returned are thumbnails as soon as
its result streams (opening whole from the store, behind the token); a
stream cut short and a run the server stopped are said in place, with no
reload, their response's line (outcome, usage, cost, model) under the
answer as the stored page writes it.  Each live part is compared
with the same part of the stored page (its structure, text and attributes,
times included: the store's clock ticks half a second a commit, so every
time the log records is exact, and the live page shows the log's times, as
the stream carries them, never the browser's clock): a step's usage line
inside its last call's fold, how long a call and a run of hosted activity
took, Google's search suggestions in the same sandboxed frame, served under
its own policy.  No page breaks its policy and axe-core finds no serious
violation."""

from __future__ import annotations

import asyncio
import itertools
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.keys import Keys

from elelem.conversation import SQLiteStore, Store
from elelem.stream import (
    BlockEnd,
    BlockStart,
    Finish,
    Hosted,
    ResponseStart,
    TextDelta,
    ToolCallDelta,
    UsageUpdate,
)
from elelem.testing import FunctionModel
from elelem.testing.asgi import ASGIServer
from elelem.testing.models import Reply
from elelem.tools import MCPServer
from elelem.vocabulary import HostedActivity, ProviderPayload, ToolResultBlock, Usage
from elelem.web.app import create_app
from elelem.web.folds import duration
from test_web_approvals_browser import by, wait_for
from web_helpers import axe_violations

HERE = Path(__file__).resolve().parent
TOKEN = "page-live-token-0123456789abcdef"
RAN: list[str] = []
FORECASTS: list[str] = []
RELEASE = threading.Event()
GROUNDED = threading.Event()
CUT = "the model's chunks ended without a finish"

SEARCH = HostedActivity("srv_1", "web_search", "started", {"query": "Paris weather"})
SEARCHED = HostedActivity("srv_1", "web_search", "completed", summary="2 results")
CODE = HostedActivity("code_1", "code_execution", "started", {"code": "print(6 * 7)"})
RAN_CODE = HostedActivity("code_1", "code_execution", "completed", summary="42")


def weather(city: str) -> str:
    """The weather in a city."""
    RAN.append(city)
    return f"{city}: sunny"


def forecast(city: str) -> str:
    """Tomorrow's weather in a city."""
    FORECASTS.append(city)
    return f"{city}: rain"


async def released(text: str, release: threading.Event = RELEASE) -> Reply:
    # The answer waits until the test has looked at the live page.
    await asyncio.to_thread(release.wait, 20)
    return Reply(text=text)


class Ticking:
    """The store's clock: each commit half a second after the one before,
    so every time the log records, and the pages show, is exact."""

    def __init__(self) -> None:
        self._ticks = itertools.count()

    def __call__(self) -> datetime:
        return datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=0.5 * next(self._ticks))


def said(index: int, text: str) -> list[Any]:
    """A text block's chunks."""
    return [BlockStart(index, "text"), TextDelta(index, text), BlockEnd(index)]


def called(index: int, call: str, name: str, arguments: str) -> list[Any]:
    """A tool call's chunks, its arguments in one delta."""
    start = BlockStart(index, "tool-call", id=call, name=name)
    return [start, ToolCallDelta(index, arguments), BlockEnd(index)]


def busy(request: Any) -> Any:
    """Searches, runs code, keeps a provider item of its own, then calls
    the MCP server's screenshot tool and ``weather``; once their results
    are back, answers (when the test lets it)."""
    last = request.messages[-1]
    if any(isinstance(p, ToolResultBlock) for p in last.content):
        return released("Here is Paris.")
    return [
        ResponseStart("resp_busy", "busy", "test"),
        Hosted(SEARCH),
        Hosted(SEARCHED),
        Hosted(CODE),
        Hosted(RAN_CODE),
        BlockStart(0, "unknown", raw={"type": "compaction", "content": "kept, never shown"}),
        BlockEnd(0),
        *said(1, "Looking at **Paris**."),
        *called(2, "call_shot", "screenshot", '{"city": "Paris"}'),
        *called(3, "call_weather", "weather", '{"city": "Paris"}'),
        UsageUpdate(Usage(input=10, output=5)),
        Finish("tool-calls"),
    ]


# Google's search suggestions as Gemini sends them (groundingMetadata
# .searchEntryPoint.renderedContent: a style, a container of chips), shown
# as Google composed them: https://ai.google.dev/gemini-api/docs/grounding
CHIP = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/Lyon_1"
RENDERED = (
    "<style>.container { display: flex; gap: 4px; } "
    ".chip { border: 1px solid #747775; border-radius: 16px; padding: 4px 12px; }</style>"
    f'<div class="container"><a class="chip" href="{CHIP}">weather in Lyon tomorrow</a></div>'
)
LOOKUP = HostedActivity("srch_1", "web_search", "started", {"query": "Lyon weather"})
LOOKED_UP = HostedActivity(
    "srch_1",
    "web_search",
    "completed",
    summary="1 source",
    payload=ProviderPayload(
        "google",
        "grounding_metadata",
        None,
        {"searchEntryPoint": {"renderedContent": RENDERED}, "webSearchQueries": ["Lyon"]},
    ),
)


def grounded(request: Any) -> Any:
    """A grounded search (Google's suggestions with it), then one call of
    ``forecast``; once its result is back, answers (when the test lets it)."""
    last = request.messages[-1]
    if any(isinstance(p, ToolResultBlock) for p in last.content):
        return released("Rain in Lyon.", GROUNDED)
    return [
        ResponseStart("resp_grounded", "grounded", "test"),
        Hosted(LOOKUP),
        Hosted(LOOKED_UP),
        *said(0, "Searching done."),
        *called(1, "call_rain", "forecast", '{"city": "Lyon"}'),
        UsageUpdate(Usage(input=1234, output=56)),
        Finish("tool-calls"),
    ]


def cut(_request: Any) -> Any:
    """Some text and its usage, then the stream ends before the provider
    said it was done."""
    return [
        ResponseStart("resp_cut", "cut", "test"),
        BlockStart(0, "text"),
        TextDelta(0, "Half"),
        UsageUpdate(Usage(input=21, output=3)),
    ]


def halted(_request: Any) -> Any:
    """Some text, then the run stopped on the server's side (``aborted``)."""
    return [
        ResponseStart("resp_halt", "halt", "test"),
        BlockStart(0, "text"),
        TextDelta(0, "Partial"),
        BlockEnd(0),
        UsageUpdate(Usage(input=1500, output=7)),
        Finish("aborted", failure="deadline"),
    ]


ROLL = HostedActivity(
    "mcpr_1",
    "mcp",
    "completed",
    {"approval": "requested", "name": "roll", "arguments": '{"sides": 6}', "server_label": "dice"},
)


def asks(request: Any) -> Any:
    """Asks for approval to run a hosted MCP server's tool (as OpenAI's
    ``mcp_approval_request``); answers once the page has decided."""
    if len(request.messages) > 1:
        return Reply(text="Not rolled.")
    return [ResponseStart("resp_asks", "asks", "test"), Hosted(ROLL), Finish("stop")]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return SQLiteStore(tmp_path_factory.mktemp("page-live") / "log.db", clock=Ticking())


@pytest.fixture(scope="module")
def server(store: Store) -> Iterator[str]:
    models = {
        "busy": FunctionModel(busy, model="busy"),
        "cut": FunctionModel(cut, model="cut"),
        "halt": FunctionModel(halted, model="halt"),
        "asks": FunctionModel(asks, model="asks"),
        "grounded": FunctionModel(grounded, model="grounded"),
    }
    script = f"{HERE / 'mcp_picture_server.py'}"
    with MCPServer.stdio(sys.executable, [script], name="pictures") as pictures:
        app = create_app(
            store,
            token=TOKEN,
            model="busy",
            models=["busy", "cut", "halt", "asks", "grounded"],
            tools=[weather, forecast, pictures],
            in_process=models,
        )
        with ASGIServer(app) as served:
            yield served.url


# The structure of a part of the page: tags, attributes and text (times
# and the usage lines folded with a step's last call included), a rendered
# text's marker class left out.
CANON = r"""
const canon = (node) => {
  if (node.nodeType === 3) return node.textContent;
  if (node.nodeType !== 1) return null;
  const attrs = [...node.attributes]
    .filter((a) => a.name !== "open")
    .map((a) => [a.name, a.name === "class" ? a.value.replace(/ ?rendered/, "") : a.value])
    .sort();
  const kids = [...node.childNodes].map(canon).filter((k) => k !== null && k !== "");
  return [node.localName, attrs, kids];
};
"""


def live_canon(driver: Any, selector: str) -> list[Any]:
    """The structure of each node ``selector`` finds on the page shown."""
    script = CANON + "return [...document.querySelectorAll(arguments[0])].map(canon);"
    return list(driver.execute_script(script, selector))


def stored_canon(driver: Any, path: str, selector: str) -> list[Any]:
    """The same of the stored page at ``path`` (fetched and parsed inert,
    as it is when reloaded)."""
    script = (
        CANON
        + "const done = arguments[arguments.length - 1];"
        + "fetch(arguments[0]).then((r) => r.text()).then((t) => {"
        + " const page = new DOMParser().parseFromString(t, 'text/html');"
        + " done([...page.querySelectorAll(arguments[1])].map(canon)); });"
    )
    return list(driver.execute_async_script(script, path, selector))


def csp_violations(driver: Any) -> list[str]:
    return [m["message"] for m in driver.get_log("browser") if "Content Security" in m["message"]]


def summaries(driver: Any, scope: str) -> list[str]:
    return [s.get_attribute("textContent") for s in by(driver, f"{scope} details > summary")]


def test_a_tool_run_streams_as_the_stored_page_shows_it(
    server: str, store: Store, browser: Any
) -> None:
    browser.set_script_timeout(20)
    browser.get_log("browser")
    browser.get(f"{server}/chat?token={TOKEN}")
    browser.find_element("id", "chat-text").send_keys("Show me Paris", Keys.ENTER)
    # The run stops for the two calls' approval: shown live, no reload.
    approve = wait_for(lambda: by(browser, "#live #pending-form button.approve"), "the approval")
    cid = browser.current_url.split("/c/")[1].split("?")[0]
    assert summaries(browser, "#live .answer") == [
        # The fold's last line, and the log's time from its first transition
        # to its last (three commits, half a second each).
        "code execution: print(6 * 7) → 42 · 2 activities · 1.5 s",
        "tool screenshot · awaiting approval",
        "tool weather · awaiting approval",
    ]
    hosted = browser.find_element("css selector", "#live details.hosted")
    timeline = [
        li.get_attribute("textContent") for li in hosted.find_elements("css selector", "li")
    ]
    assert timeline == [
        'searching "Paris weather"',
        'searched "Paris weather" → 2 results',
        "code execution: print(6 * 7)",
        "code execution: print(6 * 7) → 42",
    ]
    labels = hosted.find_elements("css selector", "dl.activity-inputs dt")
    assert [d.get_attribute("textContent") for d in labels] == ["web search", "code execution"]
    block = browser.find_element("css selector", "#live .block-other")
    assert block.text == "[compaction block kept, not shown]"
    # The heading and the sidebar name the conversation without a reload.
    wait_for(lambda: browser.find_element("css selector", "main h1").text == "Show me Paris", "h1")
    assert by(browser, f'.sidebar a[href*="/c/{cid}"]')
    assert browser.find_element("id", "chat-status").text == "waiting for approval"
    # What the live page shows is what the stored page shows for the turn.
    path = f"/c/{cid}?token={TOKEN}"
    answer = "#live .answer > *"
    turn = "section.turn > :not(.user):not(.turn-actions)"
    assert live_canon(browser, answer) == stored_canon(browser, path, turn)
    assert live_canon(browser, "#pending") == stored_canon(browser, path, "#pending")
    # The step's usage line, in the fold of its last call, live as stored.
    note = browser.find_element("css selector", f"#live {WEATHER} > .tool-detail > p.response")
    assert note.get_attribute("textContent") == "usage: 10 in · 5 out · $0.00 · busy"
    assert axe_violations(browser) == []
    # Deny the weather, approve the screenshot, Continue: the resumed run
    # answers the calls in their live folds, the image as a thumbnail.
    browser.find_element("css selector", '#live button.deny[data-call="call_weather"]').click()
    approve[0].click()
    browser.find_element("css selector", "#live #pending-form button.primary").click()
    wait_for(lambda: "tool weather · refused" in summaries(browser, "#live"), "the refusal")
    wait_for(lambda: "tool screenshot · done · 1 image" in summaries(browser, "#live"), "image")
    assert RAN == []  # the refused call never ran
    assert by(browser, "#pending") == []
    fold = browser.find_element("css selector", '#live details.tool[data-call="call_shot"]')
    fold.find_element("css selector", "summary").click()
    (thumb,) = fold.find_elements("css selector", "figure.thumbnail img")
    wait_for(lambda: browser.execute_script("return arguments[0].complete", thumb), "the image")
    assert browser.execute_script("return arguments[0].naturalWidth", thumb) == 1600
    assert thumb.get_attribute("src").startswith("data:image/png;base64,iVBORw0KGgo")
    assert fold.find_element("css selector", "figcaption").text == "[image 1600×1200, 8 KB]"
    link = fold.find_element("css selector", "a.full")
    assert link.get_attribute("href").startswith(f"{server}/blob/")
    assert link.get_attribute("href").endswith(f"?token={TOKEN}")
    assert box_fits(thumb.rect)
    # The stored folds are the same (the result is stored before the answer).
    tools = "details.tool"
    assert live_canon(browser, f"#live {tools}") == stored_canon(browser, path, tools)
    assert axe_violations(browser) == []
    RELEASE.set()
    wait_for(lambda: by(browser, "section.turn .text p"), "the stored page")
    assert browser.find_elements("css selector", "section.turn .text")[-1].text == "Here is Paris."
    assert csp_violations(browser) == []


WEATHER = 'details.tool[data-call="call_weather"]'
RAIN = 'details.tool[data-call="call_rain"]'
TURN = "section.turn > :not(.user):not(.turn-actions)"


def test_a_grounded_search_and_a_lone_call_stream_as_stored(server: str, browser: Any) -> None:
    browser.set_script_timeout(20)
    ask(browser, server, "grounded", "Rain in Lyon?")
    approve = wait_for(lambda: by(browser, "#live #pending-form button.approve"), "the approval")
    cid = browser.current_url.split("/c/")[1].split("?")[0]
    path = f"/c/{cid}?token={TOKEN}"
    # Google's suggestions: the stored page's sandboxed frame, served from
    # the log under its own policy (its style allowed by hash), not chips.
    (frame,) = by(browser, "#live iframe.search-entry-point")
    assert frame.get_attribute("sandbox") == "allow-popups allow-popups-to-escape-sandbox"
    assert frame.get_attribute("referrerpolicy") == "no-referrer"
    src = frame.get_attribute("src")
    assert src.startswith(f"{server}/c/{cid}/suggestions/ev_") and src.endswith(f"?token={TOKEN}")
    assert live_canon(browser, "#live .answer > *") == stored_canon(browser, path, TURN)
    browser.switch_to.frame(frame)
    try:
        wait_for(lambda: by(browser, "a.chip"), "the suggestions")
        chips = by(browser, "a.chip")
        assert [(c.text, c.get_attribute("href")) for c in chips] == [
            ("weather in Lyon tomorrow", CHIP)
        ]
        shown = "return getComputedStyle(document.querySelector('.container')).display"
        assert browser.execute_script(shown) == "flex"
    finally:
        browser.switch_to.default_content()
    # The step's usage line is in its one call's fold while it waits.
    note = f"#live {RAIN} > .tool-detail > p.response"
    assert browser.find_element("css selector", note).get_attribute("textContent") == (
        "usage: 1,234 in · 56 out · $0.00 · grounded"
    )
    approve[0].click()  # one call: its choice goes on at once
    # How long the call took is the log's: from the commit that stored the
    # call to the one that stored its result (the approval wait included).
    done = "tool forecast · done · 2.0 s"
    wait_for(lambda: done in summaries(browser, "#live"), "the result")
    assert FORECASTS == ["Lyon"]
    assert live_canon(browser, f"#live {RAIN}") == stored_canon(browser, path, RAIN)
    # The page's arithmetic is the stored page's, to the microsecond.
    start = "2026-01-01T00:00:00.000000Z"
    ends = [0, 499, 500, 1500, 2500, 75500, 999499, 999500, 999999, 1_000_000, 1_049_999]
    ends += [1_050_000, 1_250_000, 1_750_000, 59_949_999, 59_950_000, 90_500_000, 91_500_000]
    at = [
        (
            start,
            (datetime(2026, 1, 1, tzinfo=UTC) + timedelta(microseconds=u)).strftime(
                "%Y-%m-%dT%H:%M:%S.%fZ"
            ),
        )
        for u in ends
    ]
    at += [
        ("2026-01-01T00:00:01.000000Z", start),
        (start, "soon"),
        (start, "2026-01-01T02:00:00+02:00"),
    ]
    script = "return arguments[0].map(([a, b]) => window.elelemParts.duration(a, b));"
    assert browser.execute_script(script, at) == [duration(a, b) for a, b in at]
    assert axe_violations(browser) == []
    GROUNDED.set()
    wait_for(lambda: by(browser, "section.turn .text p"), "the stored page")
    assert browser.find_elements("css selector", "section.turn .text")[-1].text == "Rain in Lyon."
    assert csp_violations(browser) == []


def ask(browser: Any, server: str, model: str, text: str) -> None:
    """Open a new chat and send ``text`` to ``model`` (the console log cleared)."""
    browser.get_log("browser")
    browser.get(f"{server}/chat?token={TOKEN}")
    picker = browser.find_element("id", "chat-model")
    picker.clear()
    picker.send_keys(model)
    browser.find_element("id", "chat-text").send_keys(text, Keys.ENTER)


def ended_live(browser: Any, asked: str, notice: str, status: str) -> str:
    """Wait for the answer's notice (``notice``, in place) and the status
    beside Send; check the page was not reloaded (the live answer, its text
    rendered) and the heading and sidebar name the turn.  The stored page's
    path."""
    shown = wait_for(lambda: by(browser, "#live .answer .notice.in-place"), "the notice")[0]
    assert shown.text == notice
    assert browser.find_element("id", "chat-status").text == status
    wait_for(lambda: browser.find_element("css selector", "main h1").text == asked, "heading")
    cid = browser.current_url.split("/c/")[1].split("?")[0]
    assert by(browser, f'.sidebar a[href*="/c/{cid}"]')
    wait_for(lambda: by(browser, "#live .answer .text.rendered"), "the text rendered")
    return f"/c/{cid}?token={TOKEN}"


def box_fits(rect: dict[str, float]) -> bool:
    return rect["height"] <= 144 + 0.5 and rect["width"] <= 256  # 9rem, 16rem


def test_a_stream_cut_short_is_interrupted_in_place(server: str, browser: Any) -> None:
    ask(browser, server, "cut", "Go")
    path = ended_live(browser, "Go", f"failed: incomplete-stream: {CUT}", "failed")
    # The text as far as it came, rendered and said cut, then the failure:
    # what the stored page says, where it says it.
    stored = stored_canon(browser, path, "section.turn > :is(.text, .warn)")
    assert live_canon(browser, "#live .answer > :is(.text, .warn)") == stored
    assert stored == [
        ["div", [["class", "text"]], [["p", [], ["Half"]], "\n"]],
        ["p", [["class", "warn"]], ["interrupted: the text above is what arrived"]],
    ]
    # The response's line under the answer, live (no reload) as stored.
    line = stored_canon(browser, path, "section.turn > p.response")
    assert live_canon(browser, "#live .answer > p.response") == line
    assert line == [
        ["p", [["class", "response"]], [
            ["span", [["class", "error"]], [f"failed: incomplete-stream: {CUT} (kept what arrived)"]],
            " · ",
            ["span", [["class", "usage"]], ["usage: 21 in · 3 out"]], " · ",
            ["span", [["class", "cost"]], ["$0.00"]], " · ",
            ["span", [["class", "model"]], ["cut"]],
        ]],
    ]  # fmt: skip
    assert axe_violations(browser) == []
    assert csp_violations(browser) == []


def test_a_run_stopped_by_the_server_is_stopped_in_place(server: str, browser: Any) -> None:
    ask(browser, server, "halt", "Stop it")
    path = ended_live(browser, "Stop it", "stopped: deadline", "stopped: kept what arrived")
    stored = stored_canon(browser, path, "section.turn > .text")
    assert live_canon(browser, "#live .answer > .text") == stored
    assert stored == [["div", [["class", "text"]], [["p", [], ["Partial"]], "\n"]]]
    # The response's line under the answer, live (no reload) as stored.
    line = stored_canon(browser, path, "section.turn > p.response")
    assert live_canon(browser, "#live .answer > p.response") == line
    assert line == [
        ["p", [["class", "response"]], [
            ["span", [["class", "warn"]], ["finished: aborted: deadline"]], " · ",
            ["span", [["class", "usage"]], ["usage: 1,500 in · 7 out"]], " · ",
            ["span", [["class", "cost"]], ["$0.00"]], " · ",
            ["span", [["class", "model"]], ["halt"]],
        ]],
    ]  # fmt: skip
    assert axe_violations(browser) == []
    assert csp_violations(browser) == []


def test_a_providers_hosted_tool_is_asked_for_live_with_its_server(
    server: str, browser: Any
) -> None:
    ask(browser, server, "asks", "Roll a die")
    deny = wait_for(lambda: by(browser, "#live #pending-form button.deny"), "the approval")
    legend = browser.find_element("css selector", "#live #pending legend")
    assert legend.text == "let the provider run roll on dice"
    # Its request is shown in its activity fold, as stored: no tool fold.
    assert by(browser, "#live details.tool") == []
    cid = browser.current_url.split("/c/")[1].split("?")[0]
    path = f"/c/{cid}?token={TOKEN}"
    turn = "section.turn > :not(.user):not(.turn-actions)"
    assert live_canon(browser, "#live .answer > *") == stored_canon(browser, path, turn)
    assert live_canon(browser, "#pending") == stored_canon(browser, path, "#pending")
    assert axe_violations(browser) == []
    deny[0].click()  # one call: its choice goes on at once
    wait_for(lambda: by(browser, "section.turn .text p"), "the stored page")
    assert browser.find_elements("css selector", "section.turn .text")[-1].text == "Not rolled."
    assert csp_violations(browser) == []
