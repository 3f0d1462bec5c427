"""Gemini computer use beyond the browser: every neutral environment sent
as Gemini's own or reported, on both wires, and a mobile screen's actions
read as the computer tool's calls, run and answered, on loopback servers.

Wire example: Gemini's computer use page, both versions
(https://ai.google.dev/gemini-api/docs/computer-use and
https://ai.google.dev/gemini-api/docs/interactions/computer-use:
"Multi-environment support: build agents for browser, mobile, and desktop
environments"; the tool ``{"computerUse": {"environment":
"ENVIRONMENT_MOBILE"}}`` on generateContent, google-genai's
``Environment`` enum ``ENVIRONMENT_BROWSER`` / ``ENVIRONMENT_MOBILE`` /
``ENVIRONMENT_DESKTOP``, and ``{"type": "computer_use", "environment":
"mobile"}`` on the Interactions API, its ``EnvironmentEnum`` ``browser`` /
``mobile`` / ``desktop``).  The mobile actions (``open_app``,
``long_press``) are those of Google's Android computer-use quickstart;
elelem needs no list of them, so any name the request did not declare
would do.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from elelem.shapes.gemini.encoder import encode_request
from elelem.shapes.gemini.parser import response_chunks
from elelem.shapes.gemini_interactions import SHAPE
from elelem.shapes.gemini_interactions.parser import interaction_chunks
from elelem.shapes.registry import shape_named
from elelem.stream import BlockStart, Chunk, ToolCallDelta
from elelem.vocabulary import ComputerUse, GenerationOptions, ProviderId, ToolSpec
from elelem.wire import ModelRequest
from test_block_and_tool_tables import PNG
from test_computer_use import Allow, Screen, _results
from test_gemini_computer_use import GEMINI, SHOT, run_on_browser
from test_gemini_interactions_computer_use import SHOT as STEP_SHOT
from test_gemini_interactions_computer_use import (
    Interactions,
    _answer,
    _env,
    _json,
    _validate,
)
from toolloop_wires import _gemini, gemini_text

G = ProviderId("google")
GI = ProviderId("google-interactions")
NEUTRAL = ("browser", "mobile", "desktop", "mac", "windows", "linux", "ubuntu", "android")
OPEN_APP = {"app_name": "Settings", "intent": "Open the settings to find the Wi-Fi switch."}
LONG_PRESS = {"x": 500, "y": 640}


def _generate_content_validate(body: dict[str, Any]) -> None:
    types = pytest.importorskip("google.genai.types")
    known = [e.value for e in types.Environment]
    for content in body.get("contents", ()):
        types.Content.model_validate(content)  # google-genai's models forbid unknown fields
    for tool in body.get("tools", ()):
        spec = types.Tool.model_validate(tool).computer_use
        # An unknown enum value is only warned about: check it is one of the SDK's.
        assert spec is None or (spec.environment is not None and spec.environment.value in known)


def _drops(encoded: Any) -> list[tuple[str, str, str, str]]:
    return [(d.where, d.what, d.why, d.detail) for d in encoded.dropped]


def _adjusted(k: int, wire: str, name: str, sent: str) -> tuple[str, str, str, str]:
    return (f"hosted_tools[{k}].environment", "environment", "adjusted",
            f"{wire} computer use names no operating system: {name!r} sent as {sent!r}")  # fmt: skip


def test_every_neutral_environment_is_geminis_own_or_reported_on_generate_content() -> None:
    tools = tuple(ComputerUse(environment=e) for e in NEUTRAL)
    encoded = encode_request(ModelRequest("m", (), hosted_tools=tools), provider=G)
    spelt = ["BROWSER", "MOBILE"] + ["DESKTOP"] * 5
    assert encoded.body["tools"] == [
        {"computerUse": {"environment": f"ENVIRONMENT_{s}"}} for s in spelt
    ]
    assert _drops(encoded) == [
        *(_adjusted(k, "Gemini", NEUTRAL[k], "ENVIRONMENT_DESKTOP") for k in range(3, 7)),
        ("hosted_tools[7]", "computer_use", "unsupported",
         "Gemini computer use operates a browser, a mobile device or a desktop, not 'android'"),
    ]  # fmt: skip
    _generate_content_validate(encoded.body)


def test_every_neutral_environment_is_geminis_own_or_reported_on_interactions() -> None:
    tools = tuple(ComputerUse(environment=e) for e in NEUTRAL)
    request = ModelRequest("gemini-3.5-flash", (), hosted_tools=tools)
    encoded = SHAPE.encode_request(request, provider=GI, stream=True)
    spelt = ["browser", "mobile"] + ["desktop"] * 5
    assert encoded.body["tools"] == [{"type": "computer_use", "environment": s} for s in spelt]
    wire = "Gemini Interactions"
    assert _drops(encoded) == [
        *(_adjusted(k, wire, NEUTRAL[k], "desktop") for k in range(3, 7)),
        ("hosted_tools[7]", "computer_use", "unsupported",
         f"{wire} computer use operates a browser, a mobile device or a desktop, not 'android'"),
    ]  # fmt: skip
    _validate(encoded.body)


def test_openai_preview_leaves_out_an_environment_it_has_no_value_for() -> None:
    tools = tuple(ComputerUse(environment=e, version="computer_use_preview")
                  for e in ("mobile", "desktop", "mac"))  # fmt: skip
    encoded = shape_named("openai_responses").encode_request(
        ModelRequest("m", (), hosted_tools=tools), provider=ProviderId("openai")
    )
    assert encoded.body["tools"] == [{"type": "computer_use_preview", "display_width": 1024,
                                      "display_height": 768, "environment": "mac"}]  # fmt: skip
    preview = "OpenAI computer_use_preview operates a browser, mac, windows, linux or ubuntu"
    assert _drops(encoded) == [
        (f"hosted_tools[{k}]", "computer_use", "unsupported", f"{preview}, not {e!r}")
        for k, e in enumerate(("mobile", "desktop"))
    ]
    pytest.importorskip("openai")
    from openai.types.responses import ComputerUsePreviewTool

    ComputerUsePreviewTool.model_validate(encoded.body["tools"][0])


def _calls(chunks: list[Chunk]) -> list[tuple[str | None, str]]:
    """Each call's (name, arguments) as the parser read them."""
    names = {c.index: c.name for c in chunks if isinstance(c, BlockStart)}
    args: dict[Any, str] = dict.fromkeys(names, "")
    for c in chunks:
        if isinstance(c, ToolCallDelta):
            args[c.index] += c.arguments
    return [(names[k], args[k]) for k in names]


@pytest.mark.parametrize("wire", ["generateContent", "interactions"])
def test_any_undeclared_function_is_the_computers_unless_computer_use_was_left_out(
    wire: str,
) -> None:
    calls = [("open_app", OPEN_APP), ("lookup", {"q": "wifi"}), ("raw_fn", {})]
    if wire == "generateContent":
        parts = [{"functionCall": {"name": n, "args": a}} for n, a in calls]
        answer: Any = {"candidates": [{"content": {"role": "model", "parts": parts},
                                       "finishReason": "STOP"}]}  # fmt: skip
        extra: dict[str, Any] = {"tools": [{"functionDeclarations": [{"name": "raw_fn"}]}]}
    else:
        steps = [{"type": "function_call", "id": f"fc_{k}", "name": n, "arguments": a}
                 for k, (n, a) in enumerate(calls)]  # fmt: skip
        answer = {"id": "v1_int1", "status": "requires_action", "steps": steps}
        extra = {"tools": [{"type": "function", "name": "raw_fn"}]}

    def read(environment: str) -> list[tuple[str | None, str]]:
        request = ModelRequest(
            "m", (), tools=(ToolSpec("lookup", "look it up", {"type": "object"}),),
            hosted_tools=(ComputerUse(environment=environment),),
            options=GenerationOptions(extra=extra),
        )  # fmt: skip
        if wire == "generateContent":
            return _calls(response_chunks(answer, G, request))
        return _calls(interaction_chunks(answer, GI, request))

    mobile = {"action": "open_app", **OPEN_APP}
    # A function the request declares, in tools or in the raw extra, stays its own.
    assert read("mobile") == [("computer", _json(mobile)), ("lookup", '{"q":"wifi"}'),
                              ("raw_fn", "{}" if wire == "generateContent" else "")]  # fmt: skip
    assert read("mac") == read("mobile")
    # With no environment Gemini has, no computer use went: each call keeps its name.
    assert [name for name, _ in read("android")] == ["open_app", "lookup", "raw_fn"]


class Phone(Screen):
    """A mobile screen: no page, so no URL goes back with its screenshots."""


@pytest.mark.parametrize("wire", ["generateContent", "interactions"])
def test_a_mobile_screens_actions_run_as_computer_calls(tmp_path: Path, wire: str) -> None:
    phone, allow = Phone(), Allow()
    display = ComputerUse(360, 800, environment="mobile")
    if wire == "generateContent":
        calls = [{"name": "open_app", "args": OPEN_APP}, {"name": "long_press", "args": LONG_PRESS}]
        replies: Any = [_gemini([{"functionCall": c} for c in calls], 1), gemini_text("On.")]
        env, model = GEMINI.env, GEMINI.model
    else:
        calls = [{"type": "function_call", "id": "fc_1", "name": "open_app", "arguments": OPEN_APP},
                 {"type": "function_call", "id": "fc_2", "name": "long_press",
                  "arguments": LONG_PRESS}]  # fmt: skip
        replies = Interactions(calls, _answer("On."))
        env, model = _env, "google-interactions:gemini-3.5-flash"
    _, conv, server, result = run_on_browser(
        tmp_path, replies, env, model, screen=phone, display=display, approve=allow
    )
    assert result.text == "On."
    actions = [{"action": "open_app", **OPEN_APP}, {"action": "long_press", **LONG_PRESS}]
    assert [(a.name, json.loads(a.arguments)) for a in allow.asked] == [
        ("computer", a) for a in actions
    ]
    assert phone.actions == actions
    first, second = (json.loads(r.body) for r in server.requests)
    if wire == "generateContent":
        assert first["tools"] == [{"computerUse": {"environment": "ENVIRONMENT_MOBILE"}}]
        # The calls go back as they came; each answer is the screenshot (no URL).
        assert second["contents"][-2] == {
            "role": "model",
            "parts": [{"functionCall": c} for c in calls],
        }
        assert second["contents"][-1] == {"role": "user", "parts": [
            {"functionResponse": {"name": c["name"], "response": {}, "parts": [SHOT]}}
            for c in calls]}  # fmt: skip
        for body in (first, second):
            _generate_content_validate(body)
    else:
        assert first["tools"] == [{"type": "computer_use", "environment": "mobile"}]
        assert second["previous_interaction_id"] == "v1_int1"
        assert second["input"] == [
            {"type": "function_result", "call_id": c["id"], "name": c["name"],
             "result": [{"type": "text", "text": "{}"}, STEP_SHOT]}
            for c in calls
        ]  # fmt: skip
        for body in (first, second):
            _validate(body)
    stored = _results(conv)
    assert [(r.name, r.is_error) for r in stored] == [("computer", False)] * 2
    assert [r.attachments[0].source.blob.data for r in stored] == [PNG, PNG]  # type: ignore[index,union-attr]
