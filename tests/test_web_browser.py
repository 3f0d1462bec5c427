"""`elelem serve` and the HTML export in a real headless Chromium.

A store is made by `elelem demo --keep` from the shipped recording (and from a
Gemini corpus recording with search suggestions); the app runs on a real
uvicorn server on 127.0.0.1; selenium drives Debian's chromium and checks the
DOM.  An injection corpus in answers, titles, URLs and hosted activity shows
as inert text and runs nothing.  Screenshots are kept under the test's tmp dir
(and copied to $ELELEM_TEST_ARTIFACTS when set).
"""

from __future__ import annotations

import html
import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import QUESTION, base_env, run
from elelem.cli.demo import DEMO_KEY, DEMO_KEY_ENV, loopback_catalog, paced
from elelem.client import Client
from elelem.conversation import Conversation, Store, open_store
from elelem.testing.asgi import ASGIServer
from elelem.testing.servers import LoopbackServer
from elelem.vocabulary import (
    ActivityId,
    Attribution,
    DocumentBlock,
    DocumentLocation,
    HostedActivity,
    ImageBlock,
    Message,
    ProviderId,
    ReasoningBlock,
    Source,
    TextBlock,
)
from elelem.web.app import create_app
from elelem.web.html import export_html, style_hash, stylesheet
from web_helpers import assistant, axe_violations, demo_interaction, png

TOKEN = "test-token-0123456789abcdef"
GEMINI = "pydantic__pydantic-ai/tests__models__cassettes__test_google__test_google_model_web_search_tool_stream.yaml"

DEMO_SOURCES = [
    "https://en.wikipedia.org/wiki/Eiffel_Tower",
    "https://www.toureiffel.paris/en/the-monument/key-figures",
    "https://www.toureiffel.paris/en/the-monument/history",
    "https://www.britannica.com/topic/Eiffel-Tower-Paris-France",
]

# Each would mark the page if it ever ran: a script, an event handler, a link.
MARK = "document.documentElement.dataset.pwned='1'"
INJECTIONS = {
    "script": f"<script>{MARK}</script>",
    "onerror": f'<img src=x onerror="{MARK}">',
    "osc": "\x1b]8;;https://evil.example/\x07click me\x1b]8;;\x07 and \x1b]52;c;cGF5bG9hZA==\x07",
    "bidi": "user\u202egnp.exe\u202c file",
    "close": '</div></section><iframe src="https://evil.example/"></iframe>',
    "markdown": f'**<img src=x onerror="{MARK}">** `<script>{MARK}</script>`',
    "link": f"[click](javascript:{MARK})",
    "pixel": "![pixel](https://evil.example/pixel.png)",
}
EVIL_TITLE = f"<b>bold</b><script>{MARK}</script>\u202eeltit"
EVIL_URL = "javascript:" + MARK


def injection_conversation(store: Store) -> str:
    conversation = Conversation.create(store)
    conversation.start_turn(model="anthropic:evil")
    conversation.add_user("evil " + INJECTIONS["script"] + INJECTIONS["bidi"])
    text = " | ".join(INJECTIONS.values())
    answer = Message(
        role="assistant",
        source="assistant",
        provider=ProviderId("anthropic"),
        model="evil",
        content=(
            ReasoningBlock("thinking " + INJECTIONS["onerror"]),
            HostedActivity(
                ActivityId("a1"), "web_search", "started", {"query": INJECTIONS["script"]}
            ),
            HostedActivity(
                ActivityId("a1"), "web_search", "completed", None, INJECTIONS["onerror"]
            ),
            TextBlock(
                text,
                (
                    Attribution(Source(EVIL_URL, EVIL_TITLE), INJECTIONS["onerror"]),
                    Attribution(Source("https://ok.example/" + '"><script>x</script>', "fine")),
                    Attribution(Source("data:text/html,<script>alert(1)</script>", "data link")),
                ),
            ),
        ),
    )
    conversation.add_message(answer)
    store.set_title(conversation.id, EVIL_TITLE)
    return conversation.id


RICH_ANSWER = """### Eiffel Tower

The tower is **330 m** tall ([toureiffel.paris](https://www.toureiffel.paris/en)).

| year | height |
|---|---|
| 1889 | 312 m |
| 2022 | 330 m |

```python
def height(year: int) -> int:
    return 330 if year >= 2022 else 312
```
"""


def markdown_conversation(store: Store) -> str:
    conversation = Conversation.create(store)
    conversation.start_turn(model="openai:gpt-5")
    conversation.add_user("Tell me about the tower, with a table and code.")
    cite = Attribution(Source("https://www.toureiffel.paris/en", "Official site"), range=(18, 99))
    conversation.add_message(assistant("openai", "gpt-5", TextBlock(RICH_ANSWER, (cite,))))
    return conversation.id


def check_markdown(driver: Any) -> None:
    by = "css selector"
    answer = driver.find_element(by, "section.turn .text")
    assert answer.find_element(by, "h3").text == "Eiffel Tower"
    link = answer.find_element(by, "p a")
    assert (link.text, link.get_attribute("href")) == (
        "toureiffel.paris",
        "https://www.toureiffel.paris/en",
    )
    assert answer.find_element(by, "p").text == ("The tower is 330 m tall (toureiffel.paris)[1].")
    rows = [
        [c.text for c in row.find_elements(by, "th, td")]
        for row in answer.find_elements(by, "table tr")
    ]
    assert rows == [["year", "height"], ["1889", "312 m"], ["2022", "330 m"]]
    keyword = answer.find_element(by, "pre.hl span.k")
    assert keyword.text == "def"
    colour = driver.execute_script("return getComputedStyle(arguments[0]).color", keyword)
    plain = driver.execute_script("return getComputedStyle(arguments[0]).color", answer)
    assert colour != plain  # the Pygments rules of the stylesheet apply


def media_conversation(store: Store) -> str:
    conversation = Conversation.create(store)
    conversation.start_turn(model="anthropic:claude-x")
    conversation.add_message(
        Message(
            role="user",
            source="user",
            content=(
                TextBlock("What does the report say?"),
                ImageBlock.from_bytes(png(40, 30), filename="chart.png"),
                DocumentBlock.from_text("Revenue grew 12%.", title="Q3 report", citations=True),
            ),
        )
    )
    cited = Attribution(Source(None, "Q3 report", DocumentLocation(0, "page", 3, 5)), "grew 12%")
    conversation.add_message(
        Message(
            role="assistant",
            source="assistant",
            provider=ProviderId("anthropic"),
            model="claude-x",
            content=(TextBlock("Revenue grew 12%.", (cited,)),),
        )
    )
    return conversation.id


def check_media(driver: Any) -> None:
    by = "css selector"
    (image,) = driver.find_elements(by, "figure.attachment img")
    assert image.get_attribute("src").startswith("data:image/png;base64,")
    # The image loaded under the policy (img-src data:) and is the stored one.
    assert driver.execute_script("return arguments[0].naturalWidth", image) == 40
    captions = [c.text for c in driver.find_elements(by, "figure.attachment figcaption")]
    assert captions[0].startswith("[image chart.png 40×30, ")
    assert captions[1].startswith("[document Q3 report (text)")
    (note,) = driver.find_elements(by, "ol.footnotes > li")
    assert note.text.startswith("Q3 report, pp. 3–4")


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("artifacts")


def keep(path: Path) -> None:
    target = os.environ.get("ELELEM_TEST_ARTIFACTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(target) / path.name)


@pytest.fixture(scope="module")
def store_home(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A store holding the demo (played by `elelem demo --keep`), the
    injection corpus, and a Gemini grounded answer where the corpus is."""
    from conftest import corpus_root

    tmp = tmp_path_factory.mktemp("serve")
    env = base_env(tmp)
    played = run(env, "demo", "--pace", "0", "--keep")
    assert played.returncode == 0, played.stderr
    ids: dict[str, Any] = {"env": env}
    played = run(env, "demo", "--pace", "0", "--keep", "--cassette", str(corpus_root() / GEMINI))
    assert played.returncode == 0, played.stderr
    store = open_store(Path(env["ELELEM_HOME"]) / "elelem.db")
    infos = {i.title: i.id for i in store.list_conversations()}
    ids["demo"] = infos[QUESTION]
    ids["gemini"] = next(
        cid for title, cid in infos.items() if title and "weather" in title.lower()
    )
    ids["evil"] = injection_conversation(store)
    ids["media"] = media_conversation(store)
    ids["markdown"] = markdown_conversation(store)
    ids["store"] = store
    return ids


@pytest.fixture(scope="module")
def provider() -> Iterator[LoopbackServer]:
    """A loopback provider answering every request with the demo recording."""
    reply = paced(demo_interaction(), 0)
    with LoopbackServer(lambda _request: reply, lifetime=300) as replay:
        yield replay


@pytest.fixture(scope="module")
def server(store_home: dict[str, Any], provider: LoopbackServer) -> Iterator[str]:
    """The viewer over the store on a real uvicorn server; its chat reaches
    the loopback provider through the real client."""
    catalog = loopback_catalog(provider.url, {"anthropic": "anthropic_messages"})

    def client() -> Client:
        return Client(catalog=catalog, env={DEMO_KEY_ENV: DEMO_KEY})

    app = create_app(
        store_home["store"], token=TOKEN, model="anthropic:claude-sonnet-4-5", client=client
    )
    with ASGIServer(app) as served:
        yield served.url


def url(base: str, path: str) -> str:
    return f"{base}{path}?token={TOKEN}"


def pwned(driver: Any) -> bool:
    return driver.execute_script("return document.documentElement.dataset.pwned !== undefined")


def csp_violations(driver: Any) -> list[str]:
    return [
        e["message"] for e in driver.get_log("browser") if "Content Security Policy" in e["message"]
    ]


# --------------------------------------------------------------------------


def test_requests_without_the_token_are_refused(server: str) -> None:
    for path in (
        "/",
        "/?token=wrong",
        "/static/chat.js",
        "/static/chat-parts.js",
        "/c/x?token=" + TOKEN[:-1],
    ):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(server + path, timeout=5)
        assert refused.value.code == 403
        assert refused.value.read() == b"missing or wrong access token"
    with urllib.request.urlopen(url(server, "/"), timeout=5) as ok:
        policy = ok.headers["content-security-policy"]
    assert "unsafe-inline" not in policy
    # / opens on the chat box: its only scripts are the app's own.
    assert "script-src 'self';" in policy
    assert "default-src 'none'" in policy
    with urllib.request.urlopen(url(server, "/") + "&q=tower", timeout=5) as searched:
        assert "script-src 'none'" in searched.headers["content-security-policy"]


def check_demo_page(driver: Any) -> None:
    """The demo answer, its numbered footnotes linked to their sources, the
    search status line and the collapsed reasoning."""
    by = "css selector"
    texts = driver.find_elements(by, "section.turn .text")
    answer = "".join(t.text for t in texts)
    assert (
        "The tower is 330 metres (1,083 ft) tall, including the antennas at its top[1][2]" in answer
    )
    assert (
        "was finished on 31 March 1889, after two years, two months and five days of work[3][2]"
        in answer
    )
    assert answer.endswith("until the Chrysler Building in New York was finished in 1930[1].")
    assert driver.find_element(by, ".user").text == QUESTION
    # The answer is rendered Markdown: its strong spans are elements.
    strong = [e.text for e in driver.find_elements(by, "section.turn .text strong")]
    assert strong == ["Height.", "Completed."]
    notes = driver.find_elements(by, "ol.footnotes > li")
    assert [n.get_attribute("value") for n in notes] == ["1", "2", "3", "4"]
    links = driver.find_elements(by, "ol.footnotes a.source")
    assert [a.get_attribute("href") for a in links] == DEMO_SOURCES
    assert [a.text for a in links] == [
        "Eiffel Tower - Wikipedia",
        "The Eiffel Tower in figures | Official website",
        "History of the Eiffel Tower | Official website",
        "Eiffel Tower | History, Height, & Facts | Britannica",
    ]
    assert {a.get_attribute("rel") for a in links} == {"noopener noreferrer nofollow"}
    marker = driver.find_element(by, "sup.cite a")
    assert (marker.text, marker.get_attribute("href").split("#")[1]) == ("[1]", "fn-1-1")
    # Hosted activity is collapsed to its last status line.
    hosted = driver.find_element(by, "details.hosted")
    assert hosted.get_attribute("open") is None
    assert hosted.find_element(by, "summary").text == (
        'searched "Eiffel Tower height and completion date" → 5 results'
    )
    timeline = driver.find_elements(by, "ol.timeline li")
    assert [li.get_attribute("textContent") for li in timeline] == [
        'searching "Eiffel Tower height and completion date"',
        'searched "Eiffel Tower height and completion date" → 5 results',
    ]
    reasoning = driver.find_element(by, "details.reasoning")
    assert reasoning.get_attribute("open") is None
    assert reasoning.find_element(by, "summary").text.startswith(
        "thinking: The user wants the current height"
    )
    assert not reasoning.find_element(by, ".reasoning-text").is_displayed()
    assert "usage: 9,873 in · 418 out · 1 web search" in driver.find_element(by, ".usage").text
    assert driver.find_element(by, "p.response .cost").text == "$0.0459"
    # The stylesheet applied under the policy (served, or inlined by hash).
    width = driver.execute_script(
        "return getComputedStyle(document.querySelector('main')).maxWidth"
    )
    assert width == "768px"


def test_the_demo_conversation_in_chromium(
    server: str, store_home: dict[str, Any], browser: Any, artifacts: Path
) -> None:
    browser.get(url(server, "/"))
    listed = {
        a.find_element("css selector", ".title").text: a.get_attribute("href")
        for a in browser.find_elements("css selector", "ul.conversations a")
    }
    assert listed[QUESTION] == f"{server}/c/{store_home['demo']}?token={TOKEN}"
    browser.get(listed[QUESTION])
    check_demo_page(browser)
    shot = artifacts / "serve-demo.png"
    browser.save_screenshot(str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    keep(shot)
    assert not pwned(browser)
    assert csp_violations(browser) == []
    assert axe_violations(browser) == []


def test_search_lists_the_matching_turns(
    server: str, store_home: dict[str, Any], browser: Any
) -> None:
    browser.get(url(server, "/"))
    box = browser.find_element("css selector", "form.search input[type=search]")
    box.send_keys("Chrysler")
    box.submit()
    hits = browser.find_elements("css selector", "ol.hits li a")
    assert hits, browser.page_source
    assert {h.get_attribute("href") for h in hits} == {
        f"{server}/c/{store_home['demo']}?token={TOKEN}#turn-1"
    }


def test_the_injection_corpus_is_inert_text(
    server: str, store_home: dict[str, Any], browser: Any, artifacts: Path
) -> None:
    browser.get_log("browser")  # start clean
    browser.get(url(server, f"/c/{store_home['evil']}"))
    check_inert(browser)
    shot = artifacts / "serve-injection.png"
    browser.save_screenshot(str(shot))
    keep(shot)


def test_the_injection_corpus_is_inert_in_the_sidebar_and_search(
    server: str, store_home: dict[str, Any], browser: Any
) -> None:
    by = "css selector"
    browser.get_log("browser")
    browser.get(url(server, "/"))
    evil = f"<b>bold</b><script>{MARK}</script>eltit"
    titles = [t.text for t in browser.find_elements(by, ".sidebar .title")]
    assert evil in titles
    assert [a.text for a in browser.find_elements(by, "main ul.rows a")].count(evil) == 1
    browser.get(url(server, "/") + "&q=onerror")
    hits = browser.find_elements(by, "ol.hits li")
    assert hits
    snippets = [h.find_element(by, ".snippet") for h in hits]
    assert any('<img src=x onerror="' in s.text for s in snippets)
    assert {m.text for s in snippets for m in s.find_elements(by, "mark")} == {"onerror"}
    assert browser.find_elements(by, "main img, main script, main iframe, main b") == []
    assert not pwned(browser)
    assert csp_violations(browser) == []


def check_inert(driver: Any) -> None:
    by = "css selector"
    assert not pwned(driver)
    assert driver.find_elements(by, "script") == [] or all(
        s.get_attribute("src").endswith(
            ("/static/chat.js?token=" + TOKEN, "/static/chat-parts.js?token=" + TOKEN)
        )
        for s in driver.find_elements(by, "script")
    )
    assert driver.find_elements(by, "section.turn img, section.turn iframe, h1 b, h1 script") == []
    answer = driver.find_element(by, "section.turn .text").text
    assert INJECTIONS["script"] in answer
    assert INJECTIONS["onerror"] in answer
    assert INJECTIONS["close"] in answer
    # Markdown is rendered around the escaped text; nothing of it becomes
    # markup, a javascript: link stays text and an image is never loaded.
    assert INJECTIONS["link"] in answer
    hrefs = [a.get_dom_attribute("href") for a in driver.find_elements(by, "section.turn .text a")]
    assert hrefs == ["https://evil.example/pixel.png", "#fn-1-1", "#fn-1-2", "#fn-1-3"]
    (image,) = driver.find_elements(by, "section.turn .text a.image-link")
    assert (image.text, image.get_attribute("href")) == (
        "image: pixel",
        "https://evil.example/pixel.png",
    )
    assert image.get_attribute("rel") == "noopener noreferrer nofollow"
    (strong,) = driver.find_elements(by, "section.turn .text strong")
    assert strong.text == f'<img src=x onerror="{MARK}">'
    (code,) = driver.find_elements(by, "section.turn .text code")
    assert code.text == f"<script>{MARK}</script>"
    assert "click me and " in answer  # the OSC sequences are gone, their text stays
    assert "\x1b" not in driver.page_source and "evil.example/\x07" not in driver.page_source
    assert "user" + "gnp.exe" + " file" in answer  # the bidi overrides are gone
    assert "\u202e" not in driver.page_source
    title = driver.find_element(by, "h1").text
    assert title == f"<b>bold</b><script>{MARK}</script>eltit"
    assert driver.title == title
    # Links: http(s) sources, this page's own anchors and the app's own paths.
    hrefs = [a.get_dom_attribute("href") or "" for a in driver.find_elements(by, "a")]
    assert not [h for h in hrefs if not h.startswith(("http://", "https://", "#", "/"))], hrefs
    notes = [li.text for li in driver.find_elements(by, "ol.footnotes > li")]
    assert notes[0].startswith(
        f"<b>bold</b><script>{MARK}</script>eltit (javascript: link removed)"
    )
    assert notes[2].startswith("data link (data: link removed)")
    ok = driver.find_element(by, "ol.footnotes a.source")
    assert ok.get_attribute("href") == "https://ok.example/%22%3E%3Cscript%3Ex%3C/script%3E"
    timeline = [
        li.get_attribute("textContent") for li in driver.find_elements(by, "ol.timeline li")
    ]
    assert timeline == [
        f'searching "{INJECTIONS["script"]}"',
        f'searched "{INJECTIONS["script"]}" → {INJECTIONS["onerror"]}',
    ]
    reasoning = driver.find_element(by, "details.reasoning")
    assert reasoning.get_attribute("open") is None


def test_answers_are_rendered_markdown(
    server: str, store_home: dict[str, Any], browser: Any, artifacts: Path
) -> None:
    browser.get_log("browser")
    browser.get(url(server, f"/c/{store_home['markdown']}"))
    check_markdown(browser)
    assert csp_violations(browser) == []
    assert axe_violations(browser) == []  # highlighted code's colours included
    shot = artifacts / "serve-markdown.png"
    browser.save_screenshot(str(shot))
    keep(shot)


def test_attachments_and_document_citations(
    server: str, store_home: dict[str, Any], browser: Any, artifacts: Path
) -> None:
    browser.get_log("browser")
    browser.get(url(server, f"/c/{store_home['media']}"))
    check_media(browser)
    assert csp_violations(browser) == []
    shot = artifacts / "serve-media.png"
    browser.save_screenshot(str(shot))
    keep(shot)


def test_google_search_suggestions_in_a_sandboxed_frame(
    server: str, store_home: dict[str, Any], browser: Any, artifacts: Path
) -> None:
    browser.get_log("browser")
    cid = store_home["gemini"]
    browser.get(url(server, f"/c/{cid}"))
    frame = browser.find_element("css selector", "iframe.search-entry-point")
    assert frame.get_attribute("sandbox") == "allow-popups allow-popups-to-escape-sandbox"
    # A document of its own (as the live chat frames it): Google's HTML from
    # the log, under a policy allowing its style by hash and nothing else.
    src = frame.get_attribute("src")
    assert src.startswith(f"{server}/c/{cid}/suggestions/ev_")
    with urllib.request.urlopen(src) as framed:
        policy = framed.headers["content-security-policy"]
        assert framed.headers["x-frame-options"] == "SAMEORIGIN"
        document = framed.read().decode()
    assert document.startswith("<style>")
    style = document[len("<style>") : document.index("</style>")]
    assert policy == (
        f"default-src 'none'; style-src {style_hash(style)}; img-src data:; base-uri 'none'; "
        "form-action 'none'; frame-ancestors 'self'; "
        "sandbox allow-popups allow-popups-to-escape-sandbox"
    )
    # The export (one file) keeps it inline, allowed by hash in its <meta>.
    store = store_home["store"]
    exported = export_html(store.info(cid), store.load(cid)).decode()
    assert '<iframe class="search-entry-point"' in exported
    assert 'srcdoc="&lt;style&gt;' in exported
    assert html.escape(f"style-src {style_hash(stylesheet())} {style_hash(style)};") in exported
    shot = artifacts / "serve-gemini.png"
    browser.save_screenshot(str(shot))
    keep(shot)
    browser.switch_to.frame(frame)
    try:
        chips = browser.find_elements("css selector", "a.chip")
        assert chips
        assert all(
            c.get_attribute("href").startswith("https://vertexaisearch.cloud.google.com/")
            for c in chips
        )
        # Google's own style applies (allowed by hash), and no script may run.
        shown = browser.execute_script(
            "return getComputedStyle(document.querySelector('.container')).display"
        )
        assert shown == "flex"
    finally:
        browser.switch_to.default_content()
    assert csp_violations(browser) == []


def test_the_html_export_is_validated_the_same_way(
    store_home: dict[str, Any], browser: Any, tmp_path: Path, artifacts: Path
) -> None:
    env = store_home["env"]
    cases = [(name, store_home[name]) for name in ("demo", "evil", "media", "markdown")]
    for name, cid in cases:
        out = tmp_path / f"{name}.html"
        done = run(env, "export", cid, "--format", "html", "-o", str(out))
        assert done.returncode == 0, done.stderr
        page = out.read_text("utf-8")
        assert "<script" not in page.replace("&lt;script", "")
        assert (
            '<meta http-equiv="Content-Security-Policy" content="default-src &#x27;none&#x27;; style-src &#x27;sha256-'
            in page
        )
        assert "unsafe-inline" not in page
        browser.get_log("browser")
        browser.get(out.as_uri())
        if name == "demo":
            check_demo_page(browser)
            assert browser.find_elements("css selector", "a.back") == []  # no app links in a file
        elif name == "evil":
            check_inert(browser)
        elif name == "markdown":
            check_markdown(browser)
        else:
            check_media(browser)
        assert csp_violations(browser) == []
        shot = artifacts / f"export-{name}.png"
        browser.save_screenshot(str(shot))
        keep(shot)


def test_elelem_serve_prints_a_tokened_url_and_refuses_without_it(
    store_home: dict[str, Any], tmp_path: Path
) -> None:
    """The real command: the URL it prints carries a random token, the pages
    need it, and a key echoed into the store is redacted on the page."""
    from cli_helpers import serving

    key = "sk-ant-echoed-0123456789abcdef"
    env = {**store_home["env"], "ANTHROPIC_API_KEY": key}
    echoed = Conversation.create(store_home["store"])
    echoed.start_turn()
    echoed.add_user(f"my key is {key} oops")
    with serving(env) as (base, token):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(base + "/", timeout=5)
        assert refused.value.code == 403
        with urllib.request.urlopen(f"{base}/c/{echoed.id}?token={token}", timeout=5) as page:
            body = page.read().decode()
        assert "my key is [redacted] oops" in body
        assert key not in body and key[:12] not in body
        with urllib.request.urlopen(f"{base}/?token={token}", timeout=5) as page:
            assert f'href="/c/{store_home["demo"]}?token={token}"' in page.read().decode()
