"""Context editing: asked for neutrally, sent on Anthropic, dropped elsewhere.

The loopback Anthropic server speaks the documented wire of
https://platform.claude.com/docs/en/build-with-claude/context-editing: the
request's top-level ``context_management.edits`` behind the
``context-management-2025-06-27`` beta flag, and the response's
``context_management.applied_edits`` on ``message_delta`` (streamed).
"""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from elelem import Client
from elelem.cli.options import context_editing
from elelem.conversation import Conversation, SQLiteStore
from elelem.conversation.context_edits import ContextEdits
from elelem.conversation.events import ResponseRecord
from elelem.errors import ConfigError
from elelem.render import Renderer, RenderOptions
from elelem.render.conversation import render_events
from elelem.render.markdown import conversation_markdown
from elelem.shapes.context_editing import applied_edits
from elelem.shapes.registry import BUILTIN_SHAPES, shape_named
from elelem.testing.servers import LoopbackServer
from elelem.turns.toolloop import run
from elelem.vocabulary import (
    ClearThinking,
    ClearToolUses,
    ContextEditing,
    GenerationOptions,
    Message,
    ProviderId,
    TextBlock,
)
from elelem.vocabulary.drop import UNSUPPORTED
from elelem.web.html import export_html
from elelem.wire import ModelRequest
from test_tool_loop import summary
from toolloop_wires import WIRES, _sse
from typed_params import mismatches

EDITING = ContextEditing(
    clear_tool_uses=ClearToolUses(
        trigger_input_tokens=30000,
        keep_tool_uses=3,
        clear_at_least_input_tokens=5000,
        exclude_tools=("web_search",),
        clear_tool_inputs=True,
    ),
    clear_thinking=ClearThinking(keep_turns=2),
)

WIRE_EDITS = [
    {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 2}},
    {
        "type": "clear_tool_uses_20250919",
        "trigger": {"type": "input_tokens", "value": 30000},
        "keep": {"type": "tool_uses", "value": 3},
        "clear_at_least": {"type": "input_tokens", "value": 5000},
        "exclude_tools": ["web_search"],
        "clear_tool_inputs": True,
    },
]

APPLIED = [
    {"type": "clear_thinking_20251015", "cleared_thinking_turns": 1, "cleared_input_tokens": 900},
    {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 4, "cleared_input_tokens": 31000},
]


def _reply_with_applied_edits() -> Any:
    return _sse(
        [
            {"type": "message_start", "message": {"id": "msg_1", "type": "message",
             "role": "assistant", "model": "claude-test", "content": [], "stop_reason": None,
             "usage": {"input_tokens": 10, "output_tokens": 1}}},
            {"type": "content_block_start", "index": 0,
             "content_block": {"type": "text", "text": ""}},
            {"type": "content_block_delta", "index": 0,
             "delta": {"type": "text_delta", "text": "Done."}},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
             "usage": {"output_tokens": 5},
             "context_management": {"applied_edits": APPLIED}},
            {"type": "message_stop"},
        ]
    )  # fmt: skip


def test_anthropic_sends_the_edits_and_the_applied_edits_are_stored(tmp_path: Path) -> None:
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    with LoopbackServer([_reply_with_applied_edits()]) as server:

        async def main() -> Any:
            async with Client(env=WIRES[0].env(server)) as client:
                return await run(
                    conv,
                    client,
                    "anthropic:claude-test",
                    "Go on",
                    options=GenerationOptions(context_editing=EDITING),
                )

        result = asyncio.run(main())
    assert result.text == "Done."
    (request,) = server.requests
    body = json.loads(request.body)
    assert body["context_management"] == {"edits": WIRE_EDITS}
    assert request.headers["anthropic-beta"] == "context-management-2025-06-27"
    params = pytest.importorskip("anthropic.types.beta.message_create_params")
    assert mismatches(body, params.MessageCreateParamsStreaming) == []
    records = [e.body for e in conv.events if isinstance(e.body, ResponseRecord)]
    assert len(records) == 1
    assert records[0].dropped == ()
    assert applied_edits(records[0].payloads) == APPLIED
    # Stored, not only held in memory; and nothing left the log: the prompt is whole.
    reopened = Conversation.open(SQLiteStore(tmp_path / "log.db"), conv.id)
    stored = [e.body for e in reopened.events if isinstance(e.body, ResponseRecord)]
    assert applied_edits(stored[0].payloads) == APPLIED
    assert summary(reopened)[1] == ("user", 1, "text", "Go on")
    # The applied edits are an overlay event beside the record: the log shows
    # them, and nothing is cleared from what the next request sends.
    (overlay,) = [e for e in reopened.events if isinstance(e.body, ContextEdits)]
    assert (overlay.kind, overlay.turn, overlay.response) == ("context-edits", 1, 1)
    assert overlay.body == ContextEdits(ProviderId("anthropic"), 1, tuple(APPLIED))
    line = "context edited by anthropic: cleared 4 tool uses, 1 thinking turn (31,900 input tokens)"
    assert f"*{line}*" in conversation_markdown(reopened.info, reopened.events)
    assert line in export_html(reopened.info, reopened.events).decode()
    shown = io.StringIO()
    render_events(Renderer(Console(file=shown, width=200), RenderOptions()), reopened.events)
    assert line in shown.getvalue()  # what `elelem show` prints


def test_keep_all_thinking_is_the_string_all() -> None:
    from elelem.shapes.context_editing import anthropic_context_management

    editing = ContextEditing(clear_thinking=ClearThinking(keep_all=True))
    assert anthropic_context_management(editing) == {
        "edits": [{"type": "clear_thinking_20251015", "keep": "all"}]
    }
    with pytest.raises(ValueError, match="exclude each other"):
        ClearThinking(keep_turns=1, keep_all=True)


@pytest.mark.parametrize("shape", [s for s in BUILTIN_SHAPES if s != "anthropic_messages"])
def test_every_other_shape_reports_context_editing_dropped_once(shape: str) -> None:
    request = ModelRequest(
        model="m",
        messages=(Message(role="user", content=(TextBlock("hi"),)),),
        options=GenerationOptions(context_editing=EDITING),
    )
    encoded = shape_named(shape).encode_request(request, provider=ProviderId("p"))
    drops = [d for d in encoded.dropped if d.where == "options.context_editing"]
    assert [(d.what, d.why) for d in drops] == [("context_editing", UNSUPPORTED)]
    assert "context_management" not in encoded.body


def test_the_cli_flag_names_the_edits() -> None:
    assert context_editing(None) is None
    assert context_editing("clear-tool-uses") == ContextEditing(clear_tool_uses=ClearToolUses())
    assert context_editing("clear-tool-uses,clear-thinking") == ContextEditing(
        clear_tool_uses=ClearToolUses(), clear_thinking=ClearThinking()
    )
    for bad, why in [
        ("", "unknown edit ''"),
        ("clear-all", "unknown edit 'clear-all'"),
        ("clear-thinking,clear-thinking", "given twice"),
    ]:
        with pytest.raises(ConfigError, match=why):
            context_editing(bad)


def test_ask_context_editing_sends_both_edits(tmp_path: Path) -> None:
    from cli_helpers import KEY, base_env
    from cli_helpers import run as run_cli

    with LoopbackServer([_reply_with_applied_edits()]) as server:
        env = {**base_env(tmp_path), "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY}
        out = run_cli(
            env,
            "ask",
            "-m",
            "anthropic:claude-test",
            "--context-editing",
            "clear-tool-uses,clear-thinking",
            "Go on",
        )
    assert out.returncode == 0, out.stderr
    assert "Done." in out.stdout
    (request,) = server.requests
    assert json.loads(request.body)["context_management"] == {
        "edits": [{"type": "clear_thinking_20251015"}, {"type": "clear_tool_uses_20250919"}]
    }
    assert request.headers["anthropic-beta"] == "context-management-2025-06-27"
