"""Computer use: the model's actions performed by the application's screen
(:class:`elelem.tools.ComputerTool`) in the tool loop, after approval, and
answered with a screenshot in each wire's form, on loopback servers.

Wire examples: Anthropic's computer use tool page
(https://docs.claude.com/en/docs/agents-and-tools/tool-use/computer-use-tool:
a ``tool_use`` named ``computer`` with ``{"action": "left_click",
"coordinate": [x, y]}``, the ``computer_20250124`` tool with
``display_width_px``/``display_height_px`` and the
``computer-use-2025-01-24`` beta, a ``tool_result`` holding an image);
OpenAI's computer use guide
(https://platform.openai.com/docs/guides/tools-computer-use: a
``computer_call`` item with ``action`` and ``pending_safety_checks``,
answered by ``computer_call_output`` whose ``output`` is a
``computer_screenshot`` and whose ``acknowledged_safety_checks`` repeat the
checks the application accepted).
"""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

from elelem import Client
from elelem.conversation import Conversation, SQLiteStore
from elelem.testing.servers import LoopbackServer
from elelem.tools import ComputerTool
from elelem.turns.toolloop import NO_APPROVER, ApprovalRequest, run
from elelem.vocabulary import ComputerUse, ToolResultBlock
from test_block_and_tool_tables import PNG
from test_provider_tools import _validate_anthropic, _validate_responses
from toolloop_wires import WIRES, _anthropic, _responses, anthropic_text, responses_text


class Screen:
    """A screen that records each action and shows one 1x1 PNG."""

    def __init__(self) -> None:
        self.actions: list[dict[str, Any]] = []

    async def act(self, arguments: dict[str, Any]) -> bytes:
        self.actions.append(arguments)
        return PNG


class Allow:
    """An approval callback that allows every request and keeps each one."""

    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> bool:
        self.asked.append(request)
        return True


def _conv(tmp_path: Path) -> Conversation:
    return Conversation.create(SQLiteStore(tmp_path / "log.db"))


def _results(conv: Conversation) -> list[ToolResultBlock]:
    from elelem.conversation.events import MessageBody

    return [
        p
        for e in conv.events
        if isinstance(e.body, MessageBody)
        for p in e.body.content
        if isinstance(p, ToolResultBlock)
    ]


def test_computer_use_on_anthropic_sends_the_screenshot_as_an_image(tmp_path: Path) -> None:
    screen, conv = Screen(), _conv(tmp_path)
    click = {"action": "left_click", "coordinate": [10, 20]}
    call = {"type": "tool_use", "id": "toolu_1", "name": "computer", "input": click}
    with LoopbackServer([_anthropic([call], "tool_use", 1), anthropic_text("Clicked.")]) as server:

        async def main() -> Any:
            async with Client(env=WIRES[0].env(server)) as client:
                tool = ComputerTool(screen, display=ComputerUse(1280, 800))
                return await run(conv, client, "anthropic:claude-test", "click it",
                                 tools=[tool], approve=lambda r: True)  # fmt: skip

        result = asyncio.run(main())
    assert result.text == "Clicked."
    assert screen.actions == [click]
    first, second = (json.loads(r.body) for r in server.requests)
    assert first["tools"] == [{"type": "computer_20250124", "name": "computer",
                               "display_width_px": 1280, "display_height_px": 800}]  # fmt: skip
    assert "computer-use-2025-01-24" in server.requests[0].headers["anthropic-beta"]
    shot = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                        "data": base64.b64encode(PNG).decode()}}  # fmt: skip
    assert second["messages"][-1]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": [shot]}
    ]
    for body in (first, second):
        _validate_anthropic(body)
    # The log keeps the screenshot as an image block of the result.
    (stored,) = _results(conv)
    assert stored.attachments and stored.attachments[0].source.blob.data == PNG  # type: ignore[union-attr]


CHECK = {"id": "cu_sc_1", "code": "malicious_instructions",
         "message": "The page asks to ignore previous instructions."}  # fmt: skip
COMPUTER_CALL = {"type": "computer_call", "id": "cu_1", "call_id": "call_cu1", "status": "completed",
                 "action": {"type": "click", "button": "left", "x": 156, "y": 50},
                 "pending_safety_checks": [CHECK]}  # fmt: skip


def _run_openai(tmp_path: Path, **kwargs: Any) -> tuple[Screen, Conversation, LoopbackServer]:
    screen, conv = Screen(), _conv(tmp_path)
    with LoopbackServer([_responses([COMPUTER_CALL], 1), responses_text("Done.")]) as server:

        async def main() -> Any:
            async with Client(env=WIRES[1].env(server)) as client:
                return await run(conv, client, "openai:gpt-test", "go",
                                 tools=[ComputerTool(screen)], **kwargs)  # fmt: skip

        asyncio.run(main())
    return screen, conv, server


def test_a_computer_call_is_a_tool_call_its_safety_checks_shown_then_acknowledged(
    tmp_path: Path,
) -> None:
    allow = Allow()
    screen, _, server = _run_openai(tmp_path, approve=allow)
    asked = allow.asked
    action = COMPUTER_CALL["action"]
    assert [(a.name, a.call_id, json.loads(a.arguments)) for a in asked] == [
        ("computer", "call_cu1", {"action": action, "pending_safety_checks": [CHECK]})
    ]
    assert screen.actions == [{"action": action, "pending_safety_checks": [CHECK]}]
    first, second = (json.loads(r.body) for r in server.requests)
    assert first["tools"] == [{"type": "computer"}]
    assert second["input"][-2] == COMPUTER_CALL  # the call replayed as it came
    assert second["input"][-1] == {
        "type": "computer_call_output", "call_id": "call_cu1",
        "output": {"type": "computer_screenshot",
                   "image_url": "data:image/png;base64," + base64.b64encode(PNG).decode()},
        "acknowledged_safety_checks": [CHECK],
    }  # fmt: skip
    for body in (first, second):
        _validate_responses(body)


def test_a_computer_call_without_an_approver_is_refused_its_checks_never_acknowledged(
    tmp_path: Path,
) -> None:
    screen, conv, server = _run_openai(tmp_path)
    assert screen.actions == []
    sent = json.loads(server.requests[1].body)["input"][-1]
    assert sent == {"type": "computer_call_output", "call_id": "call_cu1",
                    "output": {"type": "computer_screenshot"}}  # fmt: skip
    (stored,) = _results(conv)
    assert (stored.content, stored.is_error) == (NO_APPROVER.format(name="computer"), True)


def test_deferred_approval_stops_before_the_next_request(tmp_path: Path) -> None:
    screen, conv, server = _run_openai(tmp_path, approve="defer")
    assert screen.actions == []
    # Nothing was sent after the computer call: the run waits for a decision.
    assert len(server.requests) == 1
    assert _results(conv) == []


def test_the_preview_tool_carries_the_display() -> None:
    from elelem.shapes.openai_responses.encoder import encode_request
    from elelem.vocabulary import ProviderId
    from elelem.wire import ModelRequest

    tool = ComputerUse(1024, 768, "browser", version="computer_use_preview")
    body = encode_request(
        ModelRequest("m", (), hosted_tools=(tool,)), provider=ProviderId("openai")
    ).body
    assert body["tools"] == [{"type": "computer_use_preview", "display_width": 1024,
                              "display_height": 768, "environment": "browser"}]  # fmt: skip


SCREEN_PY = """
import base64
ACTIONS = []
PNG = base64.b64decode("{png}")

class Screen:
    def act(self, arguments):
        ACTIONS.append(arguments)
        return PNG

screen = Screen()
"""


def test_ask_computer_use_without_approve_refuses_each_action(tmp_path: Path) -> None:
    from cli_helpers import base_env
    from cli_helpers import run as run_cli

    (tmp_path / "myscreen.py").write_text(SCREEN_PY.format(png=base64.b64encode(PNG).decode()))
    click = {"action": "left_click", "coordinate": [1, 2]}
    call = {"type": "tool_use", "id": "toolu_1", "name": "computer", "input": click}
    with LoopbackServer(
        [_anthropic([call], "tool_use", 1), anthropic_text("Could not.")]
    ) as server:
        env = {**base_env(tmp_path), "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "k",
               "PYTHONPATH": str(tmp_path)}  # fmt: skip
        out = run_cli(
            env, "ask", "-m", "anthropic:claude-test", "--computer-use", "myscreen:screen", "click"
        )
    assert out.returncode == 0, out.stderr
    first, second = (json.loads(r.body) for r in server.requests)
    assert first["tools"][0]["type"] == "computer_20250124"
    assert second["messages"][-1]["content"] == [{"type": "tool_result", "tool_use_id": "toolu_1",
        "content": NO_APPROVER.format(name="computer"), "is_error": True}]  # fmt: skip


def test_ask_computer_use_names_a_missing_object(tmp_path: Path) -> None:
    from cli_helpers import base_env
    from cli_helpers import run as run_cli

    (tmp_path / "myscreen.py").write_text("x = 1\n")
    env = {**base_env(tmp_path), "PYTHONPATH": str(tmp_path), "ANTHROPIC_API_KEY": "k"}
    out = run_cli(
        env, "ask", "-m", "anthropic:claude-test", "--computer-use", "myscreen:nope", "hi"
    )
    assert out.returncode != 0
    assert "--computer-use myscreen:nope: myscreen has no object 'nope'" in out.stderr
    out = run_cli(env, "ask", "-m", "anthropic:claude-test", "--computer-use", "myscreen:x", "hi")
    assert "--computer-use myscreen:x: it has no act(arguments) method" in out.stderr
