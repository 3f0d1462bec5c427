"""Provider tools the client executes (Anthropic memory, OpenAI shell and
apply_patch), asked for through the hosted-tool surface and run by the same
tool loop as Python functions, on loopback servers speaking each wire.

Wire examples: the memory tool page
(https://docs.claude.com/en/docs/agents-and-tools/tool-use/memory-tool: a
``tool_use`` named ``memory`` with ``command``/``path``/``file_text``, the
``memory_20250818`` tool and the ``context-management-2025-06-27`` beta);
the shell page (https://platform.openai.com/docs/guides/tools-shell: a
``shell_call`` item with ``action.commands``, answered by a
``shell_call_output`` whose ``output`` is one ``{stdout, stderr, outcome}``
per command); the apply_patch page
(https://platform.openai.com/docs/guides/tools-apply-patch: an
``apply_patch_call`` item with ``operation`` ``{type, path, diff}``, answered
by ``apply_patch_call_output`` with ``status``).  Request bodies are checked
against the official SDKs' typed request params.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from elelem import Client
from elelem.conversation import Conversation, SQLiteStore
from elelem.errors import ClientToolError, MemoryPathError, MemoryTooLargeError, PatchError
from elelem.testing.servers import LoopbackServer
from elelem.tools import ApplyPatchTool, MemoryTool, ShellTool
from elelem.turns.toolloop import NO_APPROVER, ApprovalRequest, run
from test_tool_loop import summary
from toolloop_wires import WIRES, _anthropic, _responses, anthropic_text, responses_text
from typed_params import mismatches


def _conv(tmp_path: Path) -> Conversation:
    return Conversation.create(SQLiteStore(tmp_path / "log.db"))


# -- the memory handler, confined to one directory ---------------------------------


def test_memory_commands_edit_files_in_the_directory_only(tmp_path: Path) -> None:
    memory = MemoryTool(tmp_path / "mem")
    assert memory.create({"path": "/memories/notes/a.md", "file_text": "one\ntwo"}) == (
        "File created successfully at: /memories/notes/a.md"
    )
    assert (tmp_path / "mem/notes/a.md").read_text() == "one\ntwo"
    assert memory.str_replace(
        {"path": "/memories/notes/a.md", "old_str": "two", "new_str": "2"}
    ) == ("The memory file has been edited.")
    memory.insert({"path": "/memories/notes/a.md", "insert_line": 1, "insert_text": "1.5"})
    assert memory.view({"path": "/memories/notes/a.md"}) == (
        "Here's the content of /memories/notes/a.md with line numbers:\n"
        "     1\tone\n     2\t1.5\n     3\t2"
    )
    assert memory.view({"path": "/memories/notes/a.md", "view_range": [2, 2]}).endswith(
        "with line numbers:\n     2\t1.5"
    )
    memory.rename({"old_path": "/memories/notes/a.md", "new_path": "/memories/b.md"})
    assert (tmp_path / "mem/b.md").read_text() == "one\n1.5\n2"
    listing = memory.view({"path": "/memories"}).split("\n")[1:]
    assert [row.split("\t")[1] for row in listing] == [
        "/memories",
        "/memories/b.md",
        "/memories/notes",
    ]
    assert memory.delete({"path": "/memories/b.md"}) == "Successfully deleted /memories/b.md"
    assert not (tmp_path / "mem/b.md").exists()
    with pytest.raises(ClientToolError, match="old_str is not found"):
        memory.create({"path": "/memories/c.md", "file_text": "x"})
        memory.str_replace({"path": "/memories/c.md", "old_str": "y", "new_str": "z"})


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("/memories/../secret.txt", "'..' may not appear"),
        ("/memories/a/../../secret.txt", "'..' may not appear"),
        ("/memories/%2e%2e/secret.txt", "'..' may not appear"),
        ("/etc/passwd", "is not under /memories"),
        ("memories/a.md", "is not under /memories"),
        ("/memories/a\x00.md", "NUL"),
        ("/memories/out/x.md", "leads outside the memory directory"),
    ],
)
def test_memory_refuses_a_path_outside_its_directory(tmp_path: Path, path: str, why: str) -> None:
    (tmp_path / "mem").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "mem/out").symlink_to(tmp_path / "outside")
    memory = MemoryTool(tmp_path / "mem")
    with pytest.raises(MemoryPathError, match=why):
        memory.create({"path": path, "file_text": "stolen"})
    assert list((tmp_path / "outside").iterdir()) == []
    assert not (tmp_path / "secret.txt").exists()


def test_memory_refuses_a_100_mb_create(tmp_path: Path) -> None:
    memory = MemoryTool(tmp_path / "mem")
    with pytest.raises(MemoryTooLargeError, match="104857600 bytes is over"):
        memory.create({"path": "/memories/big.txt", "file_text": "x" * (100 * 1024 * 1024)})
    assert not (tmp_path / "mem/big.txt").exists()


# -- memory on Anthropic, through the tool loop --------------------------------------


def _anthropic_env(server: LoopbackServer) -> dict[str, str]:
    return WIRES[0].env(server)


def _sdk_check(typed: Any, body: dict[str, Any]) -> None:
    """``body`` fits the SDK's typed params: only keys they name, every
    required one, values of their types (the one checker, tests/typed_params.py)."""
    assert mismatches(body, typed) == []


def test_the_sdk_check_refuses_a_wrong_body() -> None:
    from openai.types.responses.response_create_params import ResponseCreateParamsStreaming

    bad = {"model": "m", "stream": True,
           "input": [{"type": "shell_call_output", "call_id": "c", "output": "text"}]}  # fmt: skip
    assert mismatches(bad, ResponseCreateParamsStreaming) != []


def _validate_anthropic(body: dict[str, Any]) -> None:
    params = pytest.importorskip("anthropic.types.beta.message_create_params")
    _sdk_check(params.MessageCreateParamsStreaming, body)


def test_memory_round_trips_on_anthropic(tmp_path: Path) -> None:
    conv = _conv(tmp_path)
    create = {"command": "create", "path": "/memories/prefs.md", "file_text": "likes: tea"}
    call = {"type": "tool_use", "id": "toolu_1", "name": "memory", "input": create}
    replies = [_anthropic([call], "tool_use", 1), anthropic_text("Noted.")]
    with LoopbackServer(replies) as server:

        async def main() -> Any:
            async with Client(env=_anthropic_env(server)) as client:
                tools = [MemoryTool(tmp_path / "mem")]
                return await run(
                    conv, client, "anthropic:claude-test", "Remember: tea", tools=tools
                )

        result = asyncio.run(main())
    assert result.text == "Noted."
    assert (tmp_path / "mem/prefs.md").read_text() == "likes: tea"
    first, second = (json.loads(r.body) for r in server.requests)
    assert first["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    assert "context-management-2025-06-27" in server.requests[0].headers["anthropic-beta"]
    assert second["messages"][-1] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                     "content": "File created successfully at: /memories/prefs.md"}],
    }  # fmt: skip
    for body in (first, second):
        _validate_anthropic(body)
    rows = summary(conv)
    assert rows[2] == ("assistant", 1, "call", "toolu_1", "memory", create)
    assert rows[4] == (
        "user",
        1,
        "result",
        "toolu_1",
        "File created successfully at: /memories/prefs.md",
        False,
    )


def test_a_memory_path_escape_is_an_error_result_the_model_sees(tmp_path: Path) -> None:
    conv = _conv(tmp_path)
    evil = {"command": "view", "path": "/memories/../../etc/passwd"}
    call = {"type": "tool_use", "id": "toolu_1", "name": "memory", "input": evil}
    with LoopbackServer([_anthropic([call], "tool_use", 1), anthropic_text("Sorry.")]) as server:

        async def main() -> Any:
            async with Client(env=_anthropic_env(server)) as client:
                tools = [MemoryTool(tmp_path / "mem")]
                return await run(conv, client, "anthropic:claude-test", "peek", tools=tools)

        asyncio.run(main())
    result = json.loads(server.requests[1].body)["messages"][-1]["content"][0]
    assert result == {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": True,
                      "content": "MemoryPathError: path: '..' may not appear in a path"}  # fmt: skip


# -- shell and apply_patch on Responses -----------------------------------------------


def _validate_responses(body: dict[str, Any]) -> None:
    params = pytest.importorskip("openai.types.responses.response_create_params")
    _sdk_check(params.ResponseCreateParamsStreaming, body)


def _run_responses(
    tmp_path: Path, items: list[dict[str, Any]], tools: list[Any], **kwargs: Any
) -> tuple[Conversation, LoopbackServer]:
    conv = _conv(tmp_path)
    replies = [_responses(items, 1), responses_text("Done.")]
    with LoopbackServer(replies) as server:

        async def main() -> Any:
            async with Client(env=WIRES[1].env(server)) as client:
                return await run(conv, client, "openai:gpt-test", "go", tools=tools, **kwargs)

        asyncio.run(main())
    return conv, server


SHELL_CALL = {"type": "shell_call", "id": "sh_1", "call_id": "call_sh1", "status": "in_progress",
              "action": {"commands": ["echo hi", "echo oops >&2; exit 3"], "timeout_ms": 10000,
                         "max_output_length": 4096}}  # fmt: skip


def test_shell_runs_after_approval_and_answers_in_the_wire_form(tmp_path: Path) -> None:
    asked: list[ApprovalRequest] = []

    def approve(request: ApprovalRequest) -> bool:
        asked.append(request)
        return True

    conv, server = _run_responses(tmp_path, [SHELL_CALL], [ShellTool(tmp_path)], approve=approve)
    assert [(a.kind, a.name, a.call_id) for a in asked] == [("tool", "shell", "call_sh1")]
    first, second = (json.loads(r.body) for r in server.requests)
    assert first["tools"] == [{"type": "shell"}]
    assert second["input"][-1] == {"type": "shell_call_output", "call_id": "call_sh1", "output": [
        {"stdout": "hi\n", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}},
        {"stdout": "", "stderr": "oops\n", "outcome": {"type": "exit", "exit_code": 3}},
    ]}  # fmt: skip
    for body in (first, second):
        _validate_responses(body)
    assert [r[4] for r in summary(conv) if r[2] == "call"] == ["shell"]


def test_shell_without_an_approver_is_refused_and_recorded(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    call = {**SHELL_CALL, "action": {"commands": [f"touch {marker}"]}}
    conv, server = _run_responses(tmp_path, [call], [ShellTool(tmp_path)])
    assert not marker.exists()
    refusal = NO_APPROVER.format(name="shell")
    assert json.loads(server.requests[1].body)["input"][-1] == {
        "type": "shell_call_output", "call_id": "call_sh1",
        "output": [{"stdout": "", "stderr": refusal, "outcome": {"type": "exit", "exit_code": 1}}],
    }  # fmt: skip
    assert ("user", 1, "result", "call_sh1", refusal, True) in summary(conv)


def test_apply_patch_creates_and_updates_files(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib/fib.py").write_text(
        "def fib(n):\n    if n < 2:\n        return n\n    return fib(n-1)\n"
    )
    update = {"type": "apply_patch_call", "id": "apc_1", "call_id": "call_p1", "status": "completed",
              "operation": {"type": "update_file", "path": "lib/fib.py",
                            "diff": "@@ def fib(n):\n     if n < 2:\n         return n\n-    return fib(n-1)\n+    return fib(n-1) + fib(n-2)\n"}}  # fmt: skip
    create = {"type": "apply_patch_call", "id": "apc_2", "call_id": "call_p2", "status": "completed",
              "operation": {"type": "create_file", "path": "README.md", "diff": "+# Fib\n+fast\n"}}  # fmt: skip
    escape = {"type": "apply_patch_call", "id": "apc_3", "call_id": "call_p3", "status": "completed",
              "operation": {"type": "create_file", "path": "../evil.txt", "diff": "+x\n"}}  # fmt: skip
    conv, server = _run_responses(
        tmp_path, [update, create, escape], [ApplyPatchTool(tmp_path)], approve=lambda r: True
    )
    assert (tmp_path / "lib/fib.py").read_text() == (
        "def fib(n):\n    if n < 2:\n        return n\n    return fib(n-1) + fib(n-2)\n"
    )
    assert (tmp_path / "README.md").read_text() == "# Fib\nfast\n"
    assert [(r[3], r[5]) for r in summary(conv) if r[2] == "result"] == [
        ("call_p1", False), ("call_p2", False), ("call_p3", True)]  # fmt: skip
    assert not (tmp_path.parent / "evil.txt").exists()
    first, second = (json.loads(r.body) for r in server.requests)
    assert first["tools"] == [{"type": "apply_patch"}]
    assert second["input"][-3:] == [
        {"type": "apply_patch_call_output", "call_id": "call_p1", "status": "completed", "output": "Updated lib/fib.py"},
        {"type": "apply_patch_call_output", "call_id": "call_p2", "status": "completed", "output": "Created README.md"},
        {"type": "apply_patch_call_output", "call_id": "call_p3", "status": "failed",
         "output": "MemoryPathError: apply_patch: '..' may not appear in a path"},
    ]  # fmt: skip
    for body in (first, second):
        _validate_responses(body)


def test_a_hunk_that_is_not_in_the_file_is_a_patch_error(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    patch = ApplyPatchTool(tmp_path)
    with pytest.raises(PatchError, match="a hunk's lines are not in the file"):
        patch.apply({"type": "update_file", "path": "a.txt", "diff": "@@\n-three\n+3\n"})
    assert (tmp_path / "a.txt").read_text() == "one\ntwo\n"


# -- the command line -----------------------------------------------------------------


def test_ask_memory_dir_runs_the_memory_tool_and_shows_the_call(tmp_path: Path) -> None:
    from cli_helpers import KEY, base_env
    from cli_helpers import run as run_cli

    create = {"command": "create", "path": "/memories/todo.md", "file_text": "buy tea"}
    call = {"type": "tool_use", "id": "toolu_1", "name": "memory", "input": create}
    with LoopbackServer([_anthropic([call], "tool_use", 1), anthropic_text("Saved.")]) as server:
        env = {**base_env(tmp_path), "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY}
        out = run_cli(
            env, "ask", "-m", "anthropic:claude-test", "--memory", str(tmp_path / "m"), "Note it"
        )
    assert out.returncode == 0, out.stderr
    assert "Saved." in out.stdout
    assert (tmp_path / "m/todo.md").read_text() == "buy tea"
    assert json.loads(server.requests[0].body)["tools"] == [
        {"type": "memory_20250818", "name": "memory"}
    ]
    lines = [line for line in out.stderr.splitlines() if line.startswith("called ")]
    assert lines == [
        'called memory(command="create", path="/memories/todo.md", file_text="buy tea") '
        "→ File created successfully at: /memories/todo.md"
    ]


def test_ask_shell_without_approve_is_refused(tmp_path: Path) -> None:
    from cli_helpers import KEY, base_env
    from cli_helpers import run as run_cli

    marker = tmp_path / "ran"
    call = {**SHELL_CALL, "action": {"commands": [f"touch {marker}"]}}
    with LoopbackServer([_responses([call], 1), responses_text("Refused.")]) as server:
        env = {**base_env(tmp_path), "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": KEY}
        out = run_cli(env, "ask", "-m", "openai:gpt-test", "--shell", "touch it")
    assert out.returncode == 0, out.stderr
    assert not marker.exists()
    assert json.loads(server.requests[0].body)["tools"] == [{"type": "shell"}]
    sent = json.loads(server.requests[1].body)["input"][-1]
    assert sent["output"][0]["stderr"] == NO_APPROVER.format(name="shell")


# -- hosted search on routes that had none ----------------------------------------------


def test_groq_gpt_oss_asks_for_browser_search_and_other_groq_models_drop_it() -> None:
    """Groq's built-in browser search (https://console.groq.com/docs/browser-search):
    ``tools: [{"type": "browser_search"}]``, on its gpt-oss models only."""
    from elelem.shapes.openai_chat.encoder import encode_request
    from elelem.vocabulary import ProviderId, WebSearch
    from elelem.wire import ModelRequest

    search = (WebSearch(max_uses=2),)
    oss = encode_request(
        ModelRequest("openai/gpt-oss-120b", (), hosted_tools=search), provider=ProviderId("groq")
    )
    assert oss.body["tools"] == [{"type": "browser_search"}]
    assert [(d.where, d.what) for d in oss.dropped] == [("hosted_tools[0].max_uses", "max_uses")]
    llama = encode_request(
        ModelRequest("llama-3.3-70b-versatile", (), hosted_tools=search),
        provider=ProviderId("groq"),
    )
    assert "tools" not in llama.body
    assert [(d.what, d.detail) for d in llama.dropped] == [
        ("web_search", "groq has no hosted web search on Chat Completions")
    ]


# -- tool search with deferred tools ----------------------------------------------------


def test_tool_search_asks_the_server_to_search_the_deferred_tools() -> None:
    """Anthropic's tool search tool
    (https://docs.claude.com/en/docs/agents-and-tools/tool-use/tool-search-tool:
    ``tool_search_tool_regex_20251119`` beside tools marked ``defer_loading``,
    the ``advanced-tool-use-2025-11-20`` beta) and OpenAI's ``tool_search``
    (https://platform.openai.com/docs/guides/tools-tool-search)."""
    from anthropic.types.beta.message_create_params import MessageCreateParamsStreaming
    from openai.types.responses.response_create_params import ResponseCreateParamsStreaming

    from elelem.shapes.anthropic_messages.encoder import encode_request as anthropic
    from elelem.shapes.openai_responses.encoder import encode_request as responses
    from elelem.vocabulary import Message, ProviderId, TextBlock, ToolSearch, ToolSpec
    from elelem.wire import ModelRequest

    deferred = ToolSpec("get_weather", "The weather in a city", {"type": "object", "properties": {}},
                        native={"anthropic_messages": {"defer_loading": True},
                                "openai_responses": {"defer_loading": True}})  # fmt: skip
    hi = (Message("user", (TextBlock("Weather in Oslo?"),)),)
    request = ModelRequest("m", hi, tools=(deferred,), hosted_tools=(ToolSearch("bm25"),))
    sent = anthropic(request, provider=ProviderId("anthropic"))
    assert sent.body["tools"][1] == {
        "type": "tool_search_tool_bm25_20251119",
        "name": "tool_search_tool_bm25",
    }
    assert sent.body["tools"][0]["defer_loading"] is True
    assert "advanced-tool-use-2025-11-20" in sent.headers["anthropic-beta"]
    _sdk_check(MessageCreateParamsStreaming, {**sent.body, "stream": True})
    sent = responses(request, provider=ProviderId("openai"))
    assert sent.body["tools"][1] == {"type": "tool_search"}
    assert sent.body["tools"][0]["defer_loading"] is True
    _sdk_check(ResponseCreateParamsStreaming, {**sent.body, "stream": True})
