"""Gemini computer use: the ``computerUse`` tool, its predefined functions
read as the computer tool's calls, run by :class:`elelem.tools.ComputerTool`
after approval, and answered with the page's URL and the screenshot inside
the ``functionResponse``, on a loopback server.

Wire example: Gemini's computer use page
(https://ai.google.dev/gemini-api/docs/computer-use: the tool
``{"computerUse": {"environment": "ENVIRONMENT_BROWSER"}}``; a
``functionCall`` such as ``click_at`` with ``x``/``y`` on a 0-999 grid and,
for a risky action, ``safety_decision: {"decision": "require_confirmation",
"explanation": …}``; the client answers with a ``functionResponse`` whose
``response`` holds ``url`` and, for a confirmed action,
``safety_acknowledgement: "true"``, and whose ``parts`` hold the screenshot
as ``inlineData``).
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from elelem import Client
from elelem.conversation import Conversation, SQLiteStore
from elelem.shapes.gemini.encoder import encode_request
from elelem.testing.servers import LoopbackServer
from elelem.tools import ComputerTool
from elelem.turns.toolloop import NO_APPROVER, run
from elelem.vocabulary import ComputerUse, ProviderId, ToolSpec
from elelem.wire import ModelRequest
from test_block_and_tool_tables import PNG
from test_computer_use import Allow, Screen, _results
from toolloop_wires import WIRES, _gemini, gemini_text

GEMINI = next(w for w in WIRES if w.shape == "gemini")
DECISION = {"decision": "require_confirmation",
            "explanation": "The page asks to accept its cookie banner."}  # fmt: skip
CLICK = {"name": "click_at", "args": {"x": 371, "y": 122, "safety_decision": DECISION}}
SHOT = {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(PNG).decode()}}


class Browser(Screen):
    """A screen that also tells its page's URL, as a browser does."""

    def current_url(self) -> str:
        return "https://example.com/cart"


def _validate(body: dict[str, Any]) -> None:
    types = pytest.importorskip("google.genai.types")
    for content in body["contents"]:
        types.Content.model_validate(content)  # google-genai's models forbid unknown fields
    for tool in body.get("tools", ()):
        types.Tool.model_validate(tool)


def run_on_browser(
    tmp_path: Path,
    replies: Any,
    env: Callable[[LoopbackServer], dict[str, str]],
    model: str,
    *,
    screen: Screen | None = None,
    display: ComputerUse | None = None,
    **kwargs: Any,
) -> Any:
    """Run "accept the cookies" on ``model`` with a :class:`Browser` for its
    computer (or ``screen``, asked for as ``display``), against a loopback
    server answering ``replies``."""  # fmt: skip
    browser = Browser() if screen is None else screen
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    tool = ComputerTool(browser, display=display)
    with LoopbackServer(replies) as server:

        async def main() -> Any:
            async with Client(env=env(server)) as client:
                return await run(conv, client, model, "accept the cookies",
                                 tools=[tool], **kwargs)  # fmt: skip

        result = asyncio.run(main())
    return browser, conv, server, result


def _run(tmp_path: Path, calls: list[dict[str, Any]], **kwargs: Any) -> Any:
    replies = [_gemini([{"functionCall": call} for call in calls], 1), gemini_text("Accepted.")]
    return run_on_browser(tmp_path, replies, GEMINI.env, GEMINI.model, **kwargs)


def test_a_confirmed_action_runs_and_is_acknowledged_with_url_and_screenshot(
    tmp_path: Path,
) -> None:
    allow = Allow()
    browser, conv, server, result = _run(tmp_path, [CLICK], approve=allow)
    asked = allow.asked
    assert result.text == "Accepted."
    action = {"action": "click_at", "x": 371, "y": 122, "safety_decision": DECISION}
    # The approver sees the action and the safety decision; the browser gets the same.
    assert [(a.name, json.loads(a.arguments)) for a in asked] == [("computer", action)]
    assert browser.actions == [action]
    first, second = (json.loads(r.body) for r in server.requests)
    assert first["tools"] == [{"computerUse": {"environment": "ENVIRONMENT_BROWSER"}}]
    # The call goes back as it came, then its answer: URL, acknowledgement, screenshot.
    assert second["contents"][-2] == {"role": "model", "parts": [{"functionCall": CLICK}]}
    assert second["contents"][-1] == {"role": "user", "parts": [{"functionResponse": {
        "name": "click_at",
        "response": {"url": "https://example.com/cart", "safety_acknowledgement": "true"},
        "parts": [SHOT]}}]}  # fmt: skip
    for body in (first, second):
        _validate(body)
    (stored,) = _results(conv)
    assert stored.name == "computer"
    assert stored.attachments and stored.attachments[0].source.blob.data == PNG  # type: ignore[union-attr]


def test_an_action_without_a_decision_is_not_acknowledged(tmp_path: Path) -> None:
    navigate = {"id": "fc_1", "name": "navigate", "args": {"url": "https://example.com"}}
    browser, _, server, _ = _run(tmp_path, [navigate, {"name": "go_back"}], approve=lambda r: True)
    assert browser.actions == [
        {"action": "navigate", "url": "https://example.com"},
        {"action": "go_back"},
    ]
    second = json.loads(server.requests[1].body)
    # A call that had no args goes back without them; a given id is kept.
    assert second["contents"][-2]["parts"] == [{"functionCall": navigate},
                                               {"functionCall": {"name": "go_back"}}]  # fmt: skip
    response = {"url": "https://example.com/cart"}
    assert second["contents"][-1]["parts"] == [
        {"functionResponse": {"id": "fc_1", "name": "navigate", "response": response,
                              "parts": [SHOT]}},
        {"functionResponse": {"name": "go_back", "response": response, "parts": [SHOT]}},
    ]  # fmt: skip
    _validate(second)


def test_without_an_approver_the_action_is_refused_and_never_acknowledged(
    tmp_path: Path,
) -> None:
    browser, conv, server, _ = _run(tmp_path, [CLICK])
    assert browser.actions == []
    refused = NO_APPROVER.format(name="computer")
    second = json.loads(server.requests[1].body)
    assert second["contents"][-1]["parts"] == [
        {"functionResponse": {"name": "click_at", "response": {"error": refused}}}
    ]
    _validate(second)
    (stored,) = _results(conv)
    assert (stored.content, stored.is_error) == (refused, True)


@pytest.mark.parametrize("wire", ["generateContent", "interactions"])
def test_deferred_approval_stops_before_the_next_request(tmp_path: Path, wire: str) -> None:
    from test_gemini_interactions_computer_use import CLICK as STEP
    from test_gemini_interactions_computer_use import _run as interactions_run

    run_on, call = (_run, CLICK) if wire == "generateContent" else (interactions_run, STEP)
    browser, conv, server, _ = run_on(tmp_path, [call], approve="defer")
    assert browser.actions == []
    assert len(server.requests) == 1
    assert _results(conv) == []


def test_a_declared_function_of_the_same_name_stays_the_applications() -> None:
    from elelem.shapes.gemini.parser import response_chunks
    from elelem.stream import BlockStart

    body = {"candidates": [{"content": {"role": "model", "parts": [{"functionCall": CLICK}]},
                            "finishReason": "STOP"}]}  # fmt: skip
    mine = ToolSpec("click_at", "my own click", {"type": "object"})
    for tools, name in (((), "computer"), ((mine,), "click_at")):
        request = ModelRequest("m", (), tools=tools, hosted_tools=(ComputerUse(),))
        chunks = response_chunks(body, ProviderId("google"), request)
        assert [c.name for c in chunks if isinstance(c, BlockStart)] == [name]
    # Without computer use asked for, a click_at call is an ordinary function call.
    plain = response_chunks(body, ProviderId("google"), ModelRequest("m", ()))
    assert [c.name for c in plain if isinstance(c, BlockStart)] == ["click_at"]


def test_a_screen_gemini_has_no_environment_for_is_reported_not_sent() -> None:
    tools = (ComputerUse(environment="android"), ComputerUse(display_number=1))
    encoded = encode_request(
        ModelRequest("m", (), hosted_tools=tools), provider=ProviderId("google")
    )
    assert encoded.body["tools"] == [{"computerUse": {"environment": "ENVIRONMENT_BROWSER"}}]
    assert [(d.where, d.what, d.why, d.detail) for d in encoded.dropped] == [
        ("hosted_tools[0]", "computer_use", "unsupported",
         "Gemini computer use operates a browser, a mobile device or a desktop, not 'android'"),
        ("hosted_tools[1].display_number", "display_number", "unsupported",
         "computerUse has no such option"),
    ]  # fmt: skip


def test_ask_computer_use_on_gemini_refuses_each_action_without_approve(tmp_path: Path) -> None:
    from cli_helpers import base_env
    from cli_helpers import run as run_cli
    from test_computer_use import SCREEN_PY

    (tmp_path / "myscreen.py").write_text(SCREEN_PY.format(png=base64.b64encode(PNG).decode()))
    replies = [_gemini([{"functionCall": CLICK}], 1), gemini_text("Could not.")]
    with LoopbackServer(replies) as server:
        env = {**base_env(tmp_path), **GEMINI.env(server), "PYTHONPATH": str(tmp_path)}
        out = run_cli(env, "ask", "-m", GEMINI.model, "--computer-use", "myscreen:screen", "go")
    assert out.returncode == 0, out.stderr
    first, second = (json.loads(r.body) for r in server.requests)
    assert first["tools"] == [{"computerUse": {"environment": "ENVIRONMENT_BROWSER"}}]
    refused = NO_APPROVER.format(name="computer")
    assert second["contents"][-1]["parts"] == [
        {"functionResponse": {"name": "click_at", "response": {"error": refused}}}
    ]


def test_excluded_actions_are_left_out_and_a_declared_one_replaces_its_action() -> None:
    from elelem.shapes.gemini.parser import response_chunks
    from elelem.shapes.registry import shape_named
    from elelem.stream import BlockStart

    tool = ComputerUse(excluded_actions=("drag_and_drop", "click_at"))
    mine = ToolSpec("click_at", "click, with my own coordinates", {"type": "object"})
    request = ModelRequest("m", (), tools=(mine,), hosted_tools=(tool,))
    body = encode_request(request, provider=ProviderId("google")).body
    assert body["tools"][-1] == {"computerUse": {"environment": "ENVIRONMENT_BROWSER",
        "excludedPredefinedFunctions": ["drag_and_drop", "click_at"]}}  # fmt: skip
    _validate({"contents": [], "tools": body["tools"]})
    # The application's click_at is the application's call, not the computer's.
    answer = {"candidates": [{"content": {"role": "model", "parts": [{"functionCall": CLICK}]},
                              "finishReason": "STOP"}]}  # fmt: skip
    chunks = response_chunks(answer, ProviderId("google"), request)
    assert [c.name for c in chunks if isinstance(c, BlockStart)] == ["click_at"]
    # The wires that offer every action say they left the list out (on a
    # desktop, which both say as it is: test_computer_environments.py).
    desktop = ComputerUse(environment="desktop", excluded_actions=tool.excluded_actions)
    for shape, provider, wire in (("anthropic_messages", "anthropic", "Anthropic"),
                                  ("openai_responses", "openai", "OpenAI")):  # fmt: skip
        encoded = shape_named(shape).encode_request(
            ModelRequest("m", (), hosted_tools=(desktop,)), provider=ProviderId(provider)
        )
        assert [(d.where, d.detail) for d in encoded.dropped] == [
            ("hosted_tools[0].excluded_actions", f"{wire} computer use excludes no actions")
        ]
