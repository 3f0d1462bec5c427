"""Computer use on Gemini's Interactions API: the ``computer_use`` tool, its
predefined functions read as the computer tool's calls, run by
:class:`elelem.tools.ComputerTool` after approval, and answered with a
``function_result`` holding the page's URL and the screenshot, on a
loopback server that streams interactions.

Wire example: the Interactions version of Gemini's computer use page
(https://ai.google.dev/gemini-api/docs/interactions/computer-use: the tool
``{"type": "computer_use", "environment": "browser"}``, with
``excluded_predefined_functions``; a ``function_call`` step such as
``click`` with ``x``/``y`` on a 0-999 grid and, for a risky action,
``arguments.safety_decision: {"decision": "require_confirmation",
"explanation": …}``; the client answers in the next interaction, after
``previous_interaction_id``, with a ``function_result`` whose ``result`` is
a ``text`` content holding the JSON ``{"url": …}`` (with
``"safety_acknowledgement": true`` for a confirmed action) and an ``image``
content holding the screenshot).  The stream is the API's
``interaction.created`` / ``step.start`` / ``step.delta``
(``arguments_delta``) / ``step.stop`` / ``interaction.completed`` events
(ai.google.dev/api/interactions-api).  Request bodies are checked against
google-genai's Interactions types (``_gaos.types.interactions``).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from elelem.conversation.events import MessageBody
from elelem.recordings.loopback import RecordedRequest
from elelem.shapes.gemini_interactions import SHAPE
from elelem.testing.servers import LoopbackServer, Reply, Send, sse_body
from elelem.turns.toolloop import NO_APPROVER
from elelem.vocabulary import ComputerUse, ProviderId, ToolCallBlock, ToolSpec
from elelem.wire import ModelRequest
from test_block_and_tool_tables import PNG
from test_computer_use import Allow, _results
from test_gemini_computer_use import run_on_browser
from toolloop_wires import CONFIG

MODEL = "google-interactions:gemini-3.5-flash"
G = ProviderId("google-interactions")
TOOL = {"type": "computer_use", "environment": "browser"}
DECISION = {"decision": "require_confirmation",
            "explanation": "The page asks to accept its cookie banner."}  # fmt: skip
CLICK = {"type": "function_call", "id": "fc_1", "name": "click",
         "arguments": {"x": 371, "y": 122, "intent": "Accept the cookies.",
                       "safety_decision": DECISION}}  # fmt: skip
SHOT = {"type": "image", "mime_type": "image/png", "data": base64.b64encode(PNG).decode()}


class Interactions:
    """A loopback Interactions API: each reply streams the next scripted
    steps as a new interaction (``v1_int1``, ``v1_int2``…)."""

    def __init__(self, *turns: list[dict[str, Any]]) -> None:
        self.turns = list(turns)
        self.served = 0

    def __call__(self, request: RecordedRequest) -> Reply:
        del request  # the test reads the requests the server recorded
        steps = self.turns.pop(0)
        self.served += 1
        iid = f"v1_int{self.served}"
        events: list[dict[str, Any]] = [
            {"event_type": "interaction.created",
             "interaction": {"id": iid, "status": "in_progress", "model": "gemini-3.5-flash"}},
        ]  # fmt: skip
        for index, step in enumerate(steps):
            start = dict(step)
            deltas: list[dict[str, Any]] = []
            if step["type"] == "function_call":
                start["arguments"] = {}
                deltas = [{"type": "arguments_delta",
                           "arguments": json.dumps(step["arguments"])}]  # fmt: skip
            elif step["type"] == "model_output":
                start.pop("content")
                deltas = [{"type": "text", "text": c["text"]} for c in step["content"]]
            events.append({"event_type": "step.start", "index": index, "step": start})
            events += [{"event_type": "step.delta", "index": index, "delta": d} for d in deltas]
            events.append({"event_type": "step.stop", "index": index})
        calls = any(s["type"] == "function_call" for s in steps)
        events.append({"event_type": "interaction.completed", "interaction": {
            "id": iid, "status": "requires_action" if calls else "completed",
            "usage": {"total_input_tokens": 9, "total_output_tokens": 3}}})  # fmt: skip
        return Reply(script=(Send(sse_body([(None, json.dumps(e)) for e in events])),))


def _answer(text: str) -> list[dict[str, Any]]:
    return [{"type": "model_output", "content": [{"type": "text", "text": text}]}]


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _env(server: LoopbackServer) -> dict[str, str]:
    return {"GOOGLE_GEMINI_BASE_URL": server.url, "GEMINI_API_KEY": "g-test-0123456789",
            "ELELEM_CONFIG": CONFIG}  # fmt: skip


def _validate(body: dict[str, Any]) -> None:
    """The body as google-genai's ``CreateModelInteraction`` reads it, with
    nothing it does not know: its models keep an unknown field as an extra,
    an unknown step or content as an ``Unknown…`` variant and an unknown
    enum value as ``UnrecognizedStr``, so each of those is a failure here."""
    types = pytest.importorskip("google.genai._gaos.types.interactions")  # google-genai 2.x
    CreateModelInteraction = types.CreateModelInteraction

    assert list(_unknown(CreateModelInteraction.model_validate(body), "$")) == []


def _unknown(value: Any, at: str) -> Any:
    from google.genai._gaos.types import BaseModel, UnrecognizedStr

    if isinstance(value, BaseModel):
        if getattr(value, "is_unknown", False) is True:
            yield f"{at}: unknown {type(value).__name__}"
            return
        yield from (f"{at}.{k}: unknown field" for k in value.model_extra or {})
        for name, field in vars(value).items():  # the fields' values, no deprecated getter
            yield from _unknown(field, f"{at}.{name}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _unknown(item, f"{at}[{i}]")
    elif isinstance(value, UnrecognizedStr):
        yield f"{at}: unknown value {value!r}"


def test_the_sdk_check_finds_what_the_types_do_not_know() -> None:
    types = pytest.importorskip("google.genai._gaos.types.interactions")  # google-genai 2.x
    CreateModelInteraction = types.CreateModelInteraction

    result = {"type": "function_result", "call_id": "fc_1", "result": "ok"}
    nested = {"model": "gemini-3.5-flash", "input": [{"type": "user_input", "content": [result]}],
              "tools": [{**TOOL, "display": 1}]}  # fmt: skip
    found = list(_unknown(CreateModelInteraction.model_validate(nested), "$"))
    assert found == ["$.input[0].content[0]: unknown UnknownContent",
                     "$.tools[0].display: unknown field"]  # fmt: skip


def _run(tmp_path: Path, calls: list[dict[str, Any]], **kwargs: Any) -> Any:
    replies = Interactions(calls, _answer("Accepted."))
    return run_on_browser(tmp_path, replies, _env, MODEL, **kwargs)


def test_a_confirmed_action_runs_and_is_acknowledged_with_url_and_screenshot(
    tmp_path: Path,
) -> None:
    allow = Allow()
    browser, conv, server, result = _run(tmp_path, [CLICK], approve=allow)
    assert result.text == "Accepted."
    action = {"action": "click", **CLICK["arguments"]}
    # The approver sees the action and the safety decision; the browser gets the same.
    assert [(a.name, json.loads(a.arguments)) for a in allow.asked] == [("computer", action)]
    assert browser.actions == [action]
    first, second = (json.loads(r.body) for r in server.requests)
    assert first["tools"] == [TOOL]
    # The next interaction continues the first: only the answer, with its
    # acknowledgement, the URL and the screenshot.
    assert second["previous_interaction_id"] == "v1_int1"
    assert second["input"] == [{
        "type": "function_result", "call_id": "fc_1", "name": "click",
        "result": [{"type": "text", "text": _json(
                        {"url": "https://example.com/cart", "safety_acknowledgement": True})},
                   SHOT]}]  # fmt: skip
    for body in (first, second):
        _validate(body)
    # Stored: the computer's call (its wire name kept for replay) and its result.
    calls = [p for e in conv.events if isinstance(e.body, MessageBody)
             for p in e.body.content if isinstance(p, ToolCallBlock)]  # fmt: skip
    assert [(c.id, c.name, json.loads(c.arguments)) for c in calls] == [
        ("fc_1", "computer", action)
    ]
    (stored,) = _results(conv)
    assert (stored.call_id, stored.name, stored.is_error) == ("fc_1", "computer", False)
    assert stored.attachments and stored.attachments[0].source.blob.data == PNG  # type: ignore[union-attr]


def test_native_replay_sends_the_call_back_as_it_came(tmp_path: Path) -> None:
    _, conv, _, _ = _run(tmp_path, [CLICK], approve=lambda r: True)
    # With no interaction the provider holds (none named in the request), the
    # whole history goes: the call under its predefined name, its arguments
    # as the wire had them, then its answer.
    request = ModelRequest("gemini-3.5-flash", conv.history(), hosted_tools=(ComputerUse(),))
    encoded = SHAPE.encode_request(request, provider=G, stream=True)
    assert encoded.dropped == ()
    body = encoded.body
    assert [s["type"] for s in body["input"]] == [
        "user_input", "function_call", "function_result", "model_output"
    ]  # fmt: skip
    assert body["input"][1] == CLICK
    assert body["input"][2]["name"] == "click"
    _validate(body)


def test_an_action_without_a_decision_is_not_acknowledged(tmp_path: Path) -> None:
    navigate = {"type": "function_call", "id": "fc_2", "name": "navigate",
                "arguments": {"url": "https://example.com"}}  # fmt: skip
    browser, _, server, _ = _run(tmp_path, [navigate], approve=lambda r: True)
    assert browser.actions == [{"action": "navigate", "url": "https://example.com"}]
    second = json.loads(server.requests[1].body)
    assert second["input"] == [{
        "type": "function_result", "call_id": "fc_2", "name": "navigate",
        "result": [{"type": "text", "text": '{"url":"https://example.com/cart"}'}, SHOT]}]  # fmt: skip
    _validate(second)


def test_without_an_approver_the_action_is_refused_and_never_acknowledged(
    tmp_path: Path,
) -> None:
    browser, conv, server, _ = _run(tmp_path, [CLICK])
    assert browser.actions == []
    refused = NO_APPROVER.format(name="computer")
    second = json.loads(server.requests[1].body)
    assert second["input"] == [{
        "type": "function_result", "call_id": "fc_1", "name": "click", "is_error": True,
        "result": [{"type": "text", "text": _json({"error": refused})}]}]  # fmt: skip
    _validate(second)
    (stored,) = _results(conv)
    assert (stored.content, stored.is_error) == (refused, True)


def test_a_declared_or_excluded_function_of_the_same_name_stays_the_applications() -> None:
    from elelem.shapes.gemini_interactions.parser import interaction_chunks
    from elelem.stream import BlockStart

    answer = {"id": "v1_int1", "status": "requires_action", "steps": [CLICK]}
    mine = ToolSpec("click", "my own click", {"type": "object"})
    excluded = ComputerUse(excluded_actions=("click",))
    for tools, hosted, name in (((), (ComputerUse(),), "computer"),
                                ((mine,), (ComputerUse(),), "click"),
                                ((), (excluded,), "click"),
                                ((), (), "click")):  # fmt: skip
        request = ModelRequest("m", (), tools=tools, hosted_tools=hosted)
        chunks = interaction_chunks(answer, G, request)
        assert [c.name for c in chunks if isinstance(c, BlockStart)] == [name]


def test_excluded_actions_are_sent_and_a_screen_without_an_environment_is_reported() -> None:
    tools = (ComputerUse(excluded_actions=("drag_and_drop",)),
             ComputerUse(environment="android"), ComputerUse(display_number=1))  # fmt: skip
    encoded = SHAPE.encode_request(
        ModelRequest("gemini-3.5-flash", (), hosted_tools=tools), provider=G, stream=True
    )
    assert encoded.body["tools"] == [
        {**TOOL, "excluded_predefined_functions": ["drag_and_drop"]},
        TOOL,
    ]
    assert [(d.where, d.what, d.why, d.detail) for d in encoded.dropped] == [
        ("hosted_tools[1]", "computer_use", "unsupported",
         "Gemini Interactions computer use operates a browser, a mobile device or a desktop,"
         " not 'android'"),
        ("hosted_tools[2].display_number", "display_number", "unsupported",
         "computer_use has no such option"),
    ]  # fmt: skip
    _validate(encoded.body)


def test_ask_computer_use_on_interactions_refuses_each_action_without_approve(
    tmp_path: Path,
) -> None:
    from cli_helpers import base_env
    from cli_helpers import run as run_cli
    from test_computer_use import SCREEN_PY

    (tmp_path / "myscreen.py").write_text(SCREEN_PY.format(png=base64.b64encode(PNG).decode()))
    with LoopbackServer(Interactions([CLICK], _answer("Could not."))) as server:
        env = {**base_env(tmp_path), **_env(server), "PYTHONPATH": str(tmp_path)}
        out = run_cli(env, "ask", "-m", MODEL, "--computer-use", "myscreen:screen", "go")
    assert out.returncode == 0, out.stderr
    first, second = (json.loads(r.body) for r in server.requests)
    assert first["tools"] == [TOOL]
    refused = NO_APPROVER.format(name="computer")
    assert second["input"] == [{
        "type": "function_result", "call_id": "fc_1", "name": "click", "is_error": True,
        "result": [{"type": "text", "text": _json({"error": refused})}]}]  # fmt: skip
    # The terminal shows the action, the answer, and the refusal as a status line.
    action = _json({"action": "click", **CLICK["arguments"]})
    assert out.stdout.splitlines()[:2] == [f"→ computer({action})", "Could not."]
    status = out.stderr.splitlines()[0]
    assert status.startswith('called computer(action="click", x=371, y=122, ')
    assert status.endswith(f"→ error: {refused}")
