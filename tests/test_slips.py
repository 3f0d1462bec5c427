"""The first-contact slips of issue #26, each fixed: -s for --system, -a on
chat, the empty store's wording, the deadline's wording."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from cli_helpers import KEY, base_env, text_reply
from elelem.cli import main
from elelem.testing.servers import LoopbackServer, replay
from media_fixtures import png

MODEL = "anthropic:claude-sonnet-4-5"


def test_dash_s_is_the_system_prompt(tmp_path: Path) -> None:
    with LoopbackServer([replay(text_reply("Hi."))]) as server:
        env = base_env(tmp_path, ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=server.url)
        result = CliRunner().invoke(main, ["ask", "-m", MODEL, "-s", "Be brief.", "hi"], env=env)
    assert result.exit_code == 0, result.stderr
    assert json.loads(server.requests[0].body)["system"] == "Be brief."


def test_chat_dash_a_attaches_to_the_first_message(tmp_path: Path) -> None:
    image = tmp_path / "tower.png"
    image.write_bytes(png())
    replies = [replay(text_reply("A tower.")), replay(text_reply("Yes."))]
    with LoopbackServer(replies) as server:
        env = base_env(tmp_path, ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=server.url)
        lines = "what is this?\nsure?\n"
        result = CliRunner().invoke(
            main, ["chat", "-m", MODEL, "-a", str(image)], env=env, input=lines
        )
    assert result.exit_code == 0, result.stderr
    first, second = (json.loads(r.body)["messages"] for r in server.requests)
    assert [b["type"] for b in first[0]["content"]] == ["image", "text"]
    assert second[-1]["content"] == [{"type": "text", "text": "sure?"}]
    assert "-a, --attach" in CliRunner().invoke(main, ["chat", "--help"]).stdout


def test_chat_dash_a_stdin_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["chat", "-m", MODEL, "-a", "-"], env=base_env(tmp_path))
    assert (result.exit_code, result.stderr) == (
        2,
        "elelem: chat -a takes a PATH or URL: stdin carries the messages\n",
    )


def test_an_empty_store_says_so(tmp_path: Path) -> None:
    for argv in (["show"], ["export"], ["ask", "-c", "last", "-m", MODEL, "hi"]):
        result = CliRunner().invoke(main, argv, env=base_env(tmp_path, ANTHROPIC_API_KEY=KEY))
        assert (result.exit_code, result.stderr) == (
            2,
            "elelem: there are no conversations in this store yet\n",
        ), argv


def test_search_snippets_cut_at_word_boundaries() -> None:
    from elelem.conversation.store import snippet

    text = (
        "Sure! Here is what I found about the Eiffel Tower: it is 330 metres tall and it "
        "was finished in 1889 for the World Fair, which was a huge event in Paris at the time."
    )
    assert snippet(text, "finished") == (
        "…about the Eiffel Tower: it is 330 metres tall and it was finished in 1889 for the "
        "World Fair, which was a huge event in Paris…"
    )
    assert snippet("The Quick brown fox jumps", "quick brown") == "The Quick brown fox jumps"


def test_log_search_shows_the_title_and_highlights_on_a_terminal(tmp_path: Path) -> None:
    from elelem.cli.history import highlighted

    env = base_env(tmp_path)
    assert CliRunner().invoke(main, ["demo", "--pace", "0", "--keep"], env=env).exit_code == 0
    result = CliRunner().invoke(main, ["log", "-s", "tower"], env=env)
    assert result.exit_code == 0
    rows = [line.split("  ") for line in result.stdout.splitlines()]
    assert [row[1:] for row in rows] == [
        [
            "How tall is the Eiffel Tower, and when…",
            "turn 1",
            "How tall is the Eiffel Tower, and when was it finished?",
        ],
        [
            "How tall is the Eiffel Tower, and when…",
            "turn 1",
            "The tower is 330 metres (1,083 ft) tall, including the antennas at…",
        ],
    ]
    assert "\x1b" not in result.stdout  # not a terminal: no escapes
    assert highlighted("The tower, the Tower", "tower", True) == (
        "The \x1b[1m\x1b[4mtower\x1b[0m, the \x1b[1m\x1b[4mTower\x1b[0m"
    )
