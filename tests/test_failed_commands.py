"""A command that fails before its first request goes out stores nothing: no
empty conversation, no blob, nothing that becomes ``last``; continuing a
conversation, it appends nothing to it.  Each case also proves that nothing
was sent (the provider is a loopback server that saw no request)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli_helpers import KEY, base_env, text_reply
from elelem.cli import main
from elelem.conversation import Conversation, open_store
from elelem.testing.servers import LoopbackServer, replay
from media_fixtures import png

MODEL = "anthropic:claude-sonnet-4-5"


@pytest.fixture
def provider() -> Iterator[LoopbackServer]:
    with LoopbackServer([replay(text_reply("Hi."))]) as server:
        yield server


@pytest.fixture
def env(tmp_path: Path, provider: LoopbackServer) -> dict[str, str]:
    return base_env(tmp_path, ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=provider.url)


def store_path(env: dict[str, str]) -> Path:
    return Path(env["ELELEM_HOME"]) / "elelem.db"


def stored(env: dict[str, str]) -> list[tuple[str, int, int]]:
    """Every conversation of the store: id, turns and events."""
    path = store_path(env)
    if not path.exists():
        return []
    store = open_store(path)
    try:
        return [
            (info.id, info.turns, len(store.load(info.id))) for info in store.list_conversations()
        ]
    finally:
        store.close()


def elelem(env: dict[str, str], *args: str, stdin: str = "") -> tuple[int, str]:
    """Run the CLI in-process; the exit status and stderr."""
    result = CliRunner().invoke(main, list(args), env=env, input=stdin)
    return result.exit_code, result.stderr


@pytest.fixture
def big_png(tmp_path: Path) -> Path:
    """An image over Anthropic's 5 MB limit (a real PNG, then padding)."""
    path = tmp_path / "big.png"
    path.write_bytes(png() + bytes(6 * 1024 * 1024))
    return path


def bad_tool_file(tmp_path: Path) -> Path:
    path = tmp_path / "broken_tools.py"
    path.write_text("raise RuntimeError('the tools file is broken')\n")
    return path


CASES: list[tuple[str, list[str], str]] = [
    ("unknown -o name", ["-o", "bogus", "1"], "elelem: unknown option -o 'bogus' (known: "),
    (
        "-o out of range",
        ["-o", "temperature", "5"],
        "elelem: -o temperature must be between 0 and 2, not 5\n",
    ),
    (
        "-o not a number",
        ["-o", "temperature", "hot"],
        "elelem: -o temperature takes a number, not 'hot'\n",
    ),
    ("--schema not JSON", ["--schema", "{bad"], "elelem: --schema: not JSON ("),
    (
        "--tool not importable",
        ["--tool", "no_such_module_26:fn"],
        "elelem: --tool no_such_module_26:fn: cannot import no_such_module_26: "
        "No module named 'no_such_module_26'\n",
    ),
    (
        "unreachable --mcp URL",
        ["--mcp", "http://127.0.0.1:9/mcp"],
        "elelem: MCP server '127.0.0.1' could not be started: ConnectError: "
        "All connection attempts failed\n",
    ),
]


@pytest.mark.parametrize(("args", "error"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_ask_that_fails_before_sending_stores_nothing(
    env: dict[str, str], provider: LoopbackServer, args: list[str], error: str
) -> None:
    status, stderr = elelem(env, "ask", "-m", MODEL, *args, "hello")
    assert status == 2
    assert stderr.startswith(error) and stderr.count("\n") == 1, stderr
    assert provider.requests == []
    assert stored(env) == []


@pytest.mark.parametrize(("args", "error"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_chat_that_fails_before_sending_stores_nothing(
    env: dict[str, str], provider: LoopbackServer, args: list[str], error: str
) -> None:
    status, stderr = elelem(env, "chat", "-m", MODEL, *args, stdin="hello\n")
    assert status == 2
    assert stderr.startswith(error) and stderr.count("\n") == 1, stderr
    assert provider.requests == []
    assert stored(env) == []


def test_a_broken_functions_file_stores_nothing(
    env: dict[str, str], provider: LoopbackServer, tmp_path: Path
) -> None:
    path = bad_tool_file(tmp_path)
    status, stderr = elelem(env, "ask", "-m", MODEL, "--functions", str(path), "hello")
    assert (status, stderr) == (
        2,
        f"elelem: --functions {path}: RuntimeError: the tools file is broken\n",
    )
    assert provider.requests == []
    assert stored(env) == []


def test_an_attachment_over_the_limit_stores_nothing(
    env: dict[str, str], provider: LoopbackServer, big_png: Path
) -> None:
    status, stderr = elelem(env, "ask", "-m", MODEL, "-a", str(big_png), "describe it")
    assert (status, stderr) == (
        2,
        "elelem: messages[0].content[0]: image big.png is 6,291,529 bytes; "
        "Anthropic takes images up to 5,242,880 bytes\n",
    )
    assert provider.requests == []
    assert stored(env) == []


def test_continuing_with_an_attachment_over_the_limit_appends_nothing(
    env: dict[str, str], provider: LoopbackServer, big_png: Path
) -> None:
    store = open_store(store_path(env))
    conversation = Conversation.create(store)
    conversation.start_turn(model=MODEL)
    conversation.add_user("an earlier question")
    store.close()
    before = stored(env)
    assert before == [(conversation.id, 1, 2)]
    status, _ = elelem(env, "ask", "-c", "last", "-a", str(big_png), "describe it")
    assert status == 2
    assert provider.requests == []
    assert stored(env) == before


def test_the_first_request_going_out_stores_the_conversation(
    env: dict[str, str], provider: LoopbackServer
) -> None:
    """The control: the same command with good options stores one
    conversation of one turn, under the id the command printed."""
    status, stderr = elelem(env, "ask", "-m", MODEL, "-o", "temperature", "0.5", "hello")
    assert status == 0, stderr
    assert len(provider.requests) == 1
    ((cid, turns, _events),) = stored(env)
    assert turns == 1
    assert stderr.endswith(f"conversation {cid}\n")


def test_a_chat_left_before_its_first_message_stores_nothing(
    env: dict[str, str], provider: LoopbackServer
) -> None:
    status, stderr = elelem(env, "chat", "-m", MODEL, stdin="/help\n/exit\n")
    assert status == 0, stderr
    assert stderr.startswith(f"chat with {MODEL} in conversation c_")
    assert provider.requests == []
    assert stored(env) == []
