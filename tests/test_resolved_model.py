"""The model a conversation records is the resolved ``provider:model``
(issue #26): ``ask -m sonnet`` is logged, shown and continued as
``anthropic:claude-sonnet-4-5``, as a demo's recorded model is."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from cli_helpers import KEY, base_env, text_reply
from elelem.cli import main
from elelem.conversation import open_store
from elelem.testing.servers import LoopbackServer, replay


def stored_id(env: dict[str, str]) -> str:
    store = open_store(Path(env["ELELEM_HOME"]) / "elelem.db")
    try:
        (info,) = store.list_conversations()
        return str(info.id)
    finally:
        store.close()


def log_line(turns: str, cost: str, title: str) -> str:
    """The pattern of ``elelem log``'s one line (its id and time vary)."""
    rest = f"  {turns:>8}  anthropic:claude-sonnet-4-5  {cost}  {title}\n"
    return r"(c_[0-9a-f]{16})  \d{4}-\d\d-\d\d \d\d:\d\d" + re.escape(rest)


def test_ask_with_an_alias_logs_and_continues_the_resolved_model(tmp_path: Path) -> None:
    replies = [replay(text_reply("Hi.")), replay(text_reply("Still here."))]
    with LoopbackServer(replies) as server:
        env = base_env(tmp_path, ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=server.url)
        first = CliRunner().invoke(main, ["ask", "-m", "sonnet", "hello"], env=env)
        assert first.exit_code == 0, first.stderr
        log = CliRunner().invoke(main, ["log"], env=env)
        match = re.fullmatch(log_line("1 turn", "$0.0005", "hello"), log.stdout)
        assert match is not None, log.stdout
        assert match.group(1) == stored_id(env)
        show = CliRunner().invoke(main, ["show"], env=env)
        assert show.stdout == log.stdout + "> hello\nHi.\n\nusage: 120 in · 9 out · $0.0005\n"
        (listed,) = CliRunner().invoke(main, ["log", "--json"], env=env).stdout.splitlines()
        assert json.loads(listed)["model"] == "anthropic:claude-sonnet-4-5"
        # Continued without -m: the recorded model, resolved, is asked again.
        again = CliRunner().invoke(main, ["ask", "-c", "last", "more?"], env=env)
        assert again.exit_code == 0, again.stderr
    assert [json.loads(r.body)["model"] for r in server.requests] == ["claude-sonnet-4-5"] * 2
    log = CliRunner().invoke(main, ["log"], env=env)
    assert re.fullmatch(log_line("2 turns", "$0.0010", "hello"), log.stdout), log.stdout


def test_chat_with_an_alias_shows_and_logs_the_resolved_model(tmp_path: Path) -> None:
    with LoopbackServer([replay(text_reply("Hi."))]) as server:
        env = base_env(tmp_path, ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=server.url)
        chat = CliRunner().invoke(main, ["chat", "-m", "sonnet"], env=env, input="hello\n/model\n")
    assert chat.exit_code == 0, chat.stderr
    assert chat.stderr.startswith(
        f"chat with anthropic:claude-sonnet-4-5 in conversation {stored_id(env)}"
    )
    assert "model: anthropic:claude-sonnet-4-5\n" in chat.stderr
    log = CliRunner().invoke(main, ["log"], env=env)
    assert re.fullmatch(log_line("1 turn", "$0.0005", "hello"), log.stdout), log.stdout
