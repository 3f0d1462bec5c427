"""``elelem serve``'s pending approvals without a browser: the conversation
page of a stopped run lists its calls with Approve and Deny, and ``POST
/api/resume`` (behind the token) checks the answers before anything is
stored, streams the resumed run, and never runs a call twice.  A real
uvicorn server on 127.0.0.1 and a loopback Anthropic provider."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import elelem
from elelem.conversation import Conversation, Decision, SQLiteStore, Store
from elelem.testing.asgi import ASGIServer
from elelem.testing.servers import LoopbackServer, Pause, RecordedRequest, Reply
from elelem.tools import ExternalTool
from elelem.turns.pending import ResumeError, pending
from elelem.web.app import create_app
from toolloop_wires import WIRES, anthropic_calls, anthropic_text

TOKEN = "approvals-token-0123456789abcdef"
ANTHROPIC = WIRES[0]
MODEL = ANTHROPIC.model
CALL = "toolu_charge_1"
LOCATE = "toolu_locate_1"
ran: list[int] = []
NOTE = "line one\nline two <b>bold</b> \x1b[31mred\x1b[0m \u202e " + "x" * 300


@elelem.tool
def charge(amount: int, note: str) -> str:
    """Charge the card."""
    ran.append(amount)
    return f"charged {amount}"


def user_location() -> str:
    """Where the user is (the page says)."""
    raise AssertionError("an external tool never runs in-process")


LOCATION = ExternalTool.of(user_location)


def answer(request: RecordedRequest) -> Reply:
    """A call of charge, or once its result is sent, the answer naming it."""
    body = json.loads(request.body)
    results = [
        block["content"]
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    if results:
        done = anthropic_text(f"Done: {' / '.join(results)}.")
        if "slowly" in json.dumps(body["messages"]):
            return Reply(script=(Pause(1.5), *done.script))
        return done
    calls = [(CALL, "charge", {"amount": 42, "note": NOTE})]
    if "locate" in json.dumps(body["messages"]):
        calls.append((LOCATE, "user_location", {}))
    return anthropic_calls(calls)


@pytest.fixture(scope="module")
def provider() -> Iterator[LoopbackServer]:
    with LoopbackServer(answer, lifetime=300) as server:
        yield server


def stopped(store: Store, provider: LoopbackServer, ask: str = "charge 42") -> Conversation:
    """A conversation whose run stopped awaiting approval of one charge call
    (and, asked to locate, a result of user_location)."""
    conv = Conversation.create(store)
    tools: list[Any] = [charge, LOCATION]
    with elelem.SyncClient(env=ANTHROPIC.env(provider)) as client:
        result = elelem.run_sync(conv, client, MODEL, ask, tools=tools, approve="defer")
    assert result.end == "awaiting-approval"
    return conv


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return SQLiteStore(tmp_path / "log.db")


def serving(store: Store, provider: LoopbackServer, tools: list[Any]) -> ASGIServer:
    def client() -> elelem.Client:
        return elelem.Client(env=ANTHROPIC.env(provider))

    app = create_app(store, token=TOKEN, model=MODEL, client=client, models=[], tools=tools)
    return ASGIServer(app)


def post(base: str, body: object, token: str = TOKEN) -> tuple[int, str]:
    """POST ``body`` to ``base``'s /api/resume: the status and the body."""
    request = urllib.request.Request(
        f"{base}/api/resume?token={token}",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


def chunks(stream: str) -> list[dict[str, Any]]:
    return [
        json.loads(line[6:])
        for line in stream.splitlines()
        if line.startswith("data: ") and line != "data: [DONE]"
    ]


def page(server: ASGIServer, cid: str) -> str:
    with urllib.request.urlopen(f"{server.url}/c/{cid}?token={TOKEN}", timeout=10) as got:
        return str(got.read().decode())


def test_the_page_lists_the_pending_call_whole_and_sanitized(
    store: Store, provider: LoopbackServer
) -> None:
    conv = stopped(store, provider)
    with serving(store, provider, [charge]) as server:
        shown = page(server, conv.id)
    # The JSON value whole: its escapes are text, the bidi override is gone.
    note = (
        "&quot;line one\\nline two &lt;b&gt;bold&lt;/b&gt; \\u001b[31mred\\u001b[0m  "
        + "x" * 300
        + "&quot;"
    )
    start = shown.index('<section id="pending"')
    section = shown[start : shown.index("</section>", start) + len("</section>")]
    assert section == (
        '<section id="pending" class="pending" aria-labelledby="pending-title">'
        '<h2 id="pending-title">Waiting for approval</h2>'
        '<form id="pending-form" data-direct="yes">'
        '<fieldset class="call"><legend>run <code>charge</code></legend>'
        '<dl class="arguments"><dt>amount</dt><dd><pre>42</pre></dd>'
        f"<dt>note</dt><dd><pre>{note}</pre></dd></dl>"
        '<div class="choice" role="group" aria-label="run charge">'
        f'<button type="button" class="approve" data-call="{CALL}" aria-pressed="false">Approve</button>'
        f'<button type="button" class="deny" data-call="{CALL}" aria-pressed="false">Deny</button>'
        "</div></fieldset></form></section>"
    )  # fmt: skip
    assert '<p class="notice awaiting">awaiting approval of 1 call</p>' in shown


def test_the_route_needs_the_token_and_refuses_bad_answers_storing_nothing(
    store: Store, provider: LoopbackServer
) -> None:
    ran.clear()
    conv = stopped(store, provider)
    before = len(Conversation.open(store, conv.id).events)
    requests = len(provider.requests)
    with serving(store, provider, [charge]) as server:
        assert post(server.url, {"conversation": conv.id, "approvals": {CALL: True}}, "wrong") == (
            403,
            "missing or wrong access token",
        )
        assert post(server.url, {"conversation": "c_nosuch", "approvals": {CALL: True}}) == (
            404,
            "no such conversation",
        )
        refusals: list[tuple[dict[str, Any], str]] = [
            ({"approvals": {"toolu_nope": True}},
             "cannot resume: approvals names 'toolu_nope', which awaits no approval"),
            ({"approvals": {}},
             f"cannot resume: calls await approval: {CALL} (charge); "
             "give approvals={id: True or False}"),
            ({"approvals": {CALL: True}, "results": {CALL: "x"}},
             f"cannot resume: results names '{CALL}', which awaits no result"),
        ]  # fmt: skip
        for extra, message in refusals:
            assert post(server.url, {"conversation": conv.id, **extra}) == (400, message)
        status, text = post(server.url, {"conversation": conv.id, "approvals": {CALL: "yes"}})
        assert (status, text) == (
            400,
            "bad resume request: Expected `bool`, got `str` - at `$.approvals[...]`",
        )
        status, text = post(server.url, {"conversation": conv.id, "approve": True})
        assert (status, text) == (
            400,
            "bad resume request: Object contains unknown field `approve`",
        )
    again = Conversation.open(store, conv.id)
    assert (len(again.events), len(provider.requests), ran) == (before, requests, [])
    assert pending(again) is not None


def test_approve_runs_the_call_once_and_a_replay_is_refused(
    store: Store, provider: LoopbackServer
) -> None:
    ran.clear()
    conv = stopped(store, provider)
    with serving(store, provider, [charge]) as server:
        status, stream = post(server.url, {"conversation": conv.id, "approvals": {CALL: True}})
        assert status == 200
        replayed = post(server.url, {"conversation": conv.id, "approvals": {CALL: True}})
        html = page(server, conv.id)
    got = chunks(stream)
    assert [c for c in got if c["type"].startswith("tool-output")] == [
        {"type": "tool-output-available", "toolCallId": CALL, "output": "charged 42"}
    ]
    assert "".join(c["delta"] for c in got if c["type"] == "text-delta") == "Done: charged 42."
    assert replayed == (
        409,
        "cannot resume: the conversation waits for no approval and no result",
    )
    assert ran == [42]
    decisions = [e.body for e in Conversation.open(store, conv.id).events if e.kind == "decision"]
    assert decisions == [Decision(approved=(CALL,))]
    assert '<section id="pending"' not in html
    assert '<p class="notice decision">resumed: approved 1 call</p>' in html


def test_without_the_tool_approve_is_refused_and_deny_works(
    store: Store, provider: LoopbackServer
) -> None:
    ran.clear()
    conv = stopped(store, provider)
    before = len(conv.events)
    with serving(store, provider, []) as server:
        html = page(server, conv.id)
        assert (
            '<p class="warn">elelem serve was given no tool charge: approving this call is '
            "refused (start it with --functions)</p>"
        ) in html
        refused = post(server.url, {"conversation": conv.id, "approvals": {CALL: True}})
        assert len(Conversation.open(store, conv.id).events) == before
        status, stream = post(server.url, {"conversation": conv.id, "approvals": {CALL: False}})
    assert refused == (
        400,
        "cannot resume: the approved calls need tools this run was not given: charge "
        f"(calls {CALL} (charge))",
    )
    assert status == 200
    got = chunks(stream)
    # The AI SDK's own part for a refused call (the model was told REFUSED).
    assert [c for c in got if c["type"].startswith("tool-output")] == [
        {"type": "tool-output-denied", "toolCallId": CALL}
    ]
    text = "".join(c["delta"] for c in got if c["type"] == "text-delta")
    assert text == "Done: refused: the user did not approve this call."
    assert ran == []


def test_the_library_refuses_an_approved_call_without_its_tool(
    store: Store, provider: LoopbackServer
) -> None:
    conv = stopped(store, provider)
    before = len(conv.events)
    with (
        elelem.SyncClient(env=ANTHROPIC.env(provider)) as client,
        pytest.raises(ResumeError) as refused,
    ):
        elelem.resume_sync(conv, client, approvals={CALL: True})
    assert str(refused.value) == (
        f"the approved calls need tools this run was not given: charge (calls {CALL} (charge))"
    )
    assert len(conv.events) == before


def test_a_chat_turn_with_tools_stops_for_the_page(store: Store, provider: LoopbackServer) -> None:
    ran.clear()
    with serving(store, provider, [charge]) as server:
        request = urllib.request.Request(
            f"{server.url}/api/chat?token={TOKEN}",
            data=json.dumps({"text": "charge 42", "model": MODEL}).encode(),
            headers={"content-type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            cid = response.headers["x-elelem-conversation"]
            got = chunks(response.read().decode())
        html = page(server, cid)
    assert [c["toolName"] for c in got if c["type"] == "tool-input-available"] == ["charge"]
    waiting = pending(Conversation.open(store, cid))
    assert waiting is not None and [c.id for c in waiting.approval] == [CALL]
    assert 'data-call="toolu_charge_1" aria-pressed="false">Approve</button>' in html
    assert ran == []


def test_an_external_result_is_asked_in_a_box_and_given_back(
    store: Store, provider: LoopbackServer
) -> None:
    ran.clear()
    conv = stopped(store, provider, "charge 42 and locate me")
    with serving(store, provider, [charge, LOCATION]) as server:
        shown = page(server, conv.id)
        status, stream = post(
            server.url,
            {"conversation": conv.id, "approvals": {CALL: True}, "results": {LOCATE: "Oslo"}},
        )
    start = shown.index('<fieldset class="call"><legend>result of')
    assert shown[start : shown.index("</section>", start)] == (
        '<fieldset class="call"><legend>result of <code>user_location</code></legend>'
        '<p class="arguments">no arguments</p><label for="pending-result-1">Result</label>'
        '<textarea id="pending-result-1" class="result" rows="2" '
        f'data-call="{LOCATE}"></textarea></fieldset>'
        '<button type="submit" class="primary">Continue</button></form>'
    )
    assert '<h2 id="pending-title">Waiting for approval and results</h2>' in shown
    assert 'data-direct="no"' in shown
    assert '<p class="notice awaiting">awaiting approval of 1 call, results of 1 call</p>' in shown
    assert status == 200
    text = "".join(c["delta"] for c in chunks(stream) if c["type"] == "text-delta")
    assert (text, ran) == ("Done: charged 42 / Oslo.", [42])


FUNCTIONS = '''\
import os
import pathlib

import elelem


@elelem.tool(name="charge", idempotent=True)
def charge_card(amount: int, note: str) -> str:
    """Charge the card."""
    with pathlib.Path(os.environ["CHARGED"]).open("a") as out:
        out.write(f"{amount}\\n")
    return f"charged {amount}"
'''


def test_elelem_serve_functions_runs_an_approved_call_with_the_files_tool(
    tmp_path: Path, provider: LoopbackServer
) -> None:
    """The real command: ``--functions`` loads the file as ``ask`` does (the
    ``@elelem.tool`` name kept), and the page's Approve runs it once."""
    from cli_helpers import base_env
    from cli_helpers import serving as cli_serving
    from elelem.conversation import open_store

    functions = tmp_path / "tools.py"
    functions.write_text(FUNCTIONS)
    charged = tmp_path / "charged.txt"
    env = base_env(tmp_path, CHARGED=str(charged), **ANTHROPIC.env(provider))
    (tmp_path / "home").mkdir()
    store = open_store(tmp_path / "home" / "elelem.db")
    conv = stopped(store, provider)
    store.close()
    with cli_serving(env, "--functions", str(functions)) as (base, token):
        status, stream = post(base, {"conversation": conv.id, "approvals": {CALL: True}}, token)
        again = post(base, {"conversation": conv.id, "approvals": {CALL: True}}, token)
    assert status == 200
    text = "".join(c["delta"] for c in chunks(stream) if c["type"] == "text-delta")
    assert text == "Done: charged 42."
    assert again[0] == 409
    assert charged.read_text() == "42\n"


def test_a_second_request_while_the_first_runs_is_refused(
    store: Store, provider: LoopbackServer
) -> None:
    ran.clear()
    conv = stopped(store, provider, "charge 42 slowly")
    asked = len(provider.requests)
    body = {"conversation": conv.id, "approvals": {CALL: True}}
    with serving(store, provider, [charge]) as server, ThreadPoolExecutor(1) as pool:
        first = pool.submit(post, server.url, body)
        deadline = time.monotonic() + 20
        while len(provider.requests) == asked and time.monotonic() < deadline:
            time.sleep(0.02)  # until the resumed run asks the model (the answer pauses)
        second = post(server.url, body)
        status, stream = first.result(timeout=30)
    assert second == (409, "this run is being resumed already")
    assert status == 200
    text = "".join(c["delta"] for c in chunks(stream) if c["type"] == "text-delta")
    assert (text, ran) == ("Done: charged 42.", [42])


def test_a_providers_hosted_approval_request_is_shown_with_its_server() -> None:
    from elelem.conversation import Awaiting
    from elelem.turns.pending import Pending
    from elelem.vocabulary import ActivityId, HostedActivity
    from elelem.web.approvals import pending_form

    request = HostedActivity(
        ActivityId("mcpr_1"),
        "mcp",
        "completed",
        {"approval": "requested", "name": "roll", "arguments": '{"sides":6}',
         "server_label": "dice<i>"},
    )  # fmt: skip
    waiting = Pending(1, Awaiting(approval=("mcpr_1",)), (), (request,))
    assert pending_form(waiting, set()) == (
        '<section id="pending" class="pending" aria-labelledby="pending-title">'
        '<h2 id="pending-title">Waiting for approval</h2>'
        '<form id="pending-form" data-direct="yes">'
        '<fieldset class="call"><legend>let the provider run <code>roll</code> on dice&lt;i&gt;'
        '</legend><dl class="arguments"><dt>sides</dt><dd><pre>6</pre></dd></dl>'
        '<div class="choice" role="group" aria-label="let the provider run roll">'
        '<button type="button" class="approve" data-call="mcpr_1" aria-pressed="false">'
        'Approve</button><button type="button" class="deny" data-call="mcpr_1" '
        'aria-pressed="false">Deny</button></div></fieldset></form></section>'
    )


def test_a_new_message_waits_until_the_calls_are_answered(
    store: Store, provider: LoopbackServer
) -> None:
    conv = stopped(store, provider)
    before = len(conv.events)
    asked = len(provider.requests)
    with serving(store, provider, [charge]) as server:
        request = urllib.request.Request(
            f"{server.url}/api/chat?token={TOKEN}",
            data=json.dumps({"text": "never mind", "conversation": conv.id}).encode(),
            headers={"content-type": "application/json"},
            method="POST",
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
    assert (refused.value.code, refused.value.read().decode()) == (
        409,
        "this conversation waits for its calls to be approved or given results: "
        "answer them above, or retry or edit the turn",
    )
    assert (len(Conversation.open(store, conv.id).events), len(provider.requests)) == (
        before,
        asked,
    )
