"""Computer use on every screen: every neutral environment, on every shape
that sends a computer tool, spelt as the wire's own or reported (left out,
or sent adjusted); and a mobile screen's actions on Gemini read as the
computer tool's calls, run and answered, on loopback servers.

Wire examples: Anthropic's computer use tool page
(https://docs.claude.com/en/docs/agents-and-tools/tool-use/computer-use-tool:
the tool "interacts with desktop environments", ``{"type":
"computer_20250124", "name": "computer", "display_width_px": …,
"display_height_px": …}`` with an optional X11 ``display_number``, and no
environment field); OpenAI's computer use guide
(https://platform.openai.com/docs/guides/tools-computer-use: the
generally available ``{"type": "computer"}`` tool has no fields and runs in
"an isolated browser or VM"; the older ``computer_use_preview`` takes
``environment`` ``browser``, ``mac``, ``windows``, ``linux`` or
``ubuntu``); Gemini's computer use page, both versions
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
would do.  Each body is checked against the provider SDK's own types.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from elelem.shapes.gemini.parser import response_chunks
from elelem.shapes.gemini_interactions.parser import interaction_chunks
from elelem.shapes.registry import shape_named
from elelem.stream import BlockStart, Chunk, ToolCallDelta
from elelem.testing.servers import LoopbackServer
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
from test_provider_tools import _validate_anthropic, _validate_responses
from toolloop_wires import _gemini, anthropic_text, gemini_text

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


Drop = tuple[str, str, str, str]


def _drops(encoded: Any) -> list[Drop]:
    return [(d.where, d.what, d.why, d.detail) for d in encoded.dropped]


def _left_out(k: int, detail: str) -> Drop:
    return (f"hosted_tools[{k}]", "computer_use", "unsupported", detail)


def _adjusted(k: int, detail: str) -> Drop:
    return (f"hosted_tools[{k}].environment", "environment", "adjusted", detail)


def _unnamed(subject: str, sent: str) -> list[Drop]:
    """The named systems (NEUTRAL[3:7]), each sent as a desktop, reported."""
    return [
        _adjusted(k, f"{subject} names no operating system: {NEUTRAL[k]!r} sent as {sent!r}")
        for k in range(3, 7)
    ]


ANTHROPIC = {"type": "computer_20250124", "name": "computer",
             "display_width_px": 1024, "display_height_px": 768}  # fmt: skip
OPENAI = {"type": "computer"}


def _preview(environment: str) -> dict[str, Any]:
    return {"type": "computer_use_preview", "display_width": 1024, "display_height": 768,
            "environment": environment}  # fmt: skip


def _gemini_tool(screen: str) -> dict[str, Any]:
    return {"computerUse": {"environment": f"ENVIRONMENT_{screen.upper()}"}}


def _interactions_tool(screen: str) -> dict[str, Any]:
    return {"type": "computer_use", "environment": screen}


ON_A_DESKTOP = "Anthropic computer use operates a desktop"
GENERAL = "OpenAI computer use operates a browser or a desktop"
PREVIEW = "OpenAI computer_use_preview operates a browser, mac, windows, linux or ubuntu"
GEMINI_SCREENS = "computer use operates a browser, a mobile device or a desktop"
GI_WIRE = "Gemini Interactions"
WALK: dict[str, tuple[list[Any], list[Drop]]] = {
    # Anthropic's tool is a desktop's: a browser goes as one, a mobile device not at all.
    "anthropic_messages": (
        [ANTHROPIC, None, *[ANTHROPIC] * 5, None],
        [_adjusted(0, f"{ON_A_DESKTOP}: 'browser' sent as 'computer_20250124'"),
         _left_out(1, f"{ON_A_DESKTOP}, not 'mobile'"),
         *_unnamed("Anthropic computer use", "computer_20250124"),
         _left_out(7, f"{ON_A_DESKTOP}, not 'android'")],
    ),
    # OpenAI's computer tool runs in a browser or a desktop and names neither.
    "openai_responses": (
        [OPENAI, None, *[OPENAI] * 5, None],
        [_left_out(1, f"{GENERAL}, not 'mobile'"),
         *_unnamed("OpenAI computer use", "computer"),
         _left_out(7, f"{GENERAL}, not 'android'")],
    ),
    "openai_responses computer_use_preview": (
        [_preview("browser"), None, None, *map(_preview, NEUTRAL[3:7]), None],
        [_left_out(k, f"{PREVIEW}, not {NEUTRAL[k]!r}") for k in (1, 2, 7)],
    ),
    "gemini": (
        [*map(_gemini_tool, ("browser", "mobile")), *[_gemini_tool("desktop")] * 5, None],
        [*_unnamed("Gemini computer use", "ENVIRONMENT_DESKTOP"),
         _left_out(7, f"Gemini {GEMINI_SCREENS}, not 'android'")],
    ),
    "gemini_interactions": (
        [*map(_interactions_tool, ("browser", "mobile")), *[_interactions_tool("desktop")] * 5,
         None],
        [*_unnamed(f"{GI_WIRE} computer use", "desktop"),
         _left_out(7, f"{GI_WIRE} {GEMINI_SCREENS}, not 'android'")],
    ),
}  # fmt: skip
"""Each shape that sends a computer tool (and the pinned OpenAI preview):
what each of NEUTRAL goes as (None: left out), and the records, in order."""
PROVIDERS = {"anthropic_messages": "anthropic", "openai_responses": "openai",
             "gemini": "google", "gemini_interactions": "google-interactions"}  # fmt: skip


def _validated(shape: str, body: dict[str, Any]) -> None:
    """The body as the provider's own SDK types read it."""
    if shape == "anthropic_messages":
        _validate_anthropic(body)
    elif shape == "openai_responses":
        _validate_responses(body)
    elif shape == "gemini":
        _generate_content_validate(body)
    else:
        _validate(body)


def test_the_walk_covers_every_shape_that_sends_a_computer_tool() -> None:
    from test_block_and_tool_tables import SHAPES, _encoder

    computer = [s for s in SHAPES if "computer_use" in _encoder(s).HOSTED_TOOLS.rows]
    assert sorted(computer) == sorted(PROVIDERS) == sorted({w.split()[0] for w in WALK})


@pytest.mark.parametrize("case", list(WALK))
def test_every_environment_is_spelt_or_reported_on_every_computer_wire(case: str) -> None:
    shape, _, version = case.partition(" ")
    tools = tuple(ComputerUse(environment=e, version=version or None) for e in NEUTRAL)
    request = ModelRequest("gemini-3.5-flash", (), hosted_tools=tools)
    encoded = shape_named(shape).encode_request(
        request, provider=ProviderId(PROVIDERS[shape]), stream=True
    )
    spelt, records = WALK[case]
    assert encoded.body.get("tools", []) == [tool for tool in spelt if tool is not None]
    assert _drops(encoded) == records
    # Nothing is both: an environment left out is the one with the whole tool's record.
    assert {k for k, tool in enumerate(spelt) if tool is None} == {
        int(where[len("hosted_tools[") : -1]) for where, *_ in records if where.endswith("]")
    }
    _validated(shape, encoded.body)


def test_a_pinned_anthropic_version_is_what_a_named_system_is_sent_as() -> None:
    tool = ComputerUse(environment="ubuntu", version="computer_20251124", display_number=1)
    encoded = shape_named("anthropic_messages").encode_request(
        ModelRequest("m", (), hosted_tools=(tool,)), provider=ProviderId("anthropic"), stream=True
    )
    assert encoded.body["tools"] == [{"type": "computer_20251124", "name": "computer",
        "display_width_px": 1024, "display_height_px": 768, "display_number": 1}]  # fmt: skip
    assert _drops(encoded) == [_adjusted(0, "Anthropic computer use names no operating system:"
                                            " 'ubuntu' sent as 'computer_20251124'")]  # fmt: skip
    _validate_anthropic(encoded.body)


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


def _ask(tmp_path: Path, env: dict[str, str], model: str, *args: str) -> Any:
    from cli_helpers import base_env
    from cli_helpers import run as run_cli
    from test_computer_use import SCREEN_PY

    (tmp_path / "myscreen.py").write_text(SCREEN_PY.format(png=base64.b64encode(PNG).decode()))
    env = {**base_env(tmp_path), **env, "PYTHONPATH": str(tmp_path)}
    return run_cli(env, "ask", "-m", model, "--computer-use", "myscreen:screen", *args, "go")


def test_ask_computer_environment_is_the_screen_the_request_asks_for(tmp_path: Path) -> None:
    with LoopbackServer([gemini_text("On.")]) as server:
        out = _ask(tmp_path, GEMINI.env(server), GEMINI.model, "--computer-environment", "mobile")
    assert out.returncode == 0, out.stderr
    (request,) = server.requests
    body = json.loads(request.body)
    assert body["tools"] == [{"computerUse": {"environment": "ENVIRONMENT_MOBILE"}}]
    _generate_content_validate(body)


def test_ask_computer_environment_a_wire_has_no_screen_for_is_reported(tmp_path: Path) -> None:
    with LoopbackServer([anthropic_text("No screen.")]) as server:
        env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "k"}
        out = _ask(tmp_path, env, "anthropic:claude-test", "--computer-environment", "mobile")
    assert out.returncode == 0, out.stderr
    (request,) = server.requests
    assert "tools" not in json.loads(request.body)
    # The answer, then (among the lines under it) what its request left out.
    lines = out.stdout.splitlines()
    assert lines[0] == "No screen."
    assert lines[-1] == (
        "not sent: hosted_tools[0]: computer_use"
        " (unsupported: Anthropic computer use operates a desktop, not 'mobile')"
    )


def test_ask_computer_environment_without_computer_use_is_a_usage_error(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from cli_helpers import base_env
    from elelem.cli import main

    argv = ["ask", "-m", "test", "--computer-environment", "mac", "go"]
    out = CliRunner().invoke(main, argv, env=base_env(tmp_path))
    assert (out.exit_code, out.stdout) == (2, "")
    assert out.stderr == (
        "elelem: --computer-environment names the screen of --computer-use MODULE:OBJECT:"
        " give both\n"
    )


def test_the_line_under_the_answer_tells_changed_from_left_out() -> None:
    from elelem.cli.ask import dropped_line
    from elelem.vocabulary import Drop

    changed = Drop("hosted_tools[0]", "computer_use", "adjusted", "'mac' sent as 'desktop'")
    left_out = Drop("hosted_tools[1]", "web_search", "unsupported", "no search here")
    assert dropped_line([changed, left_out]) == (
        "not sent: hosted_tools[1]: web_search (unsupported: no search here)"
        " · sent changed: hosted_tools[0]: computer_use (adjusted: 'mac' sent as 'desktop')"
    )
    assert dropped_line([changed]) == (
        "sent changed: hosted_tools[0]: computer_use (adjusted: 'mac' sent as 'desktop')"
    )
