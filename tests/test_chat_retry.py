"""`/retry` in chat regenerates the last answer: the same message, its
attachments included, sent without the old answer, which stays in the log
as a replaced turn (a Rewind overlay)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from cli_helpers import KEY, base_env, text_reply
from elelem.cli import main
from elelem.conversation import Conversation, open_store, turn_views
from elelem.testing.servers import LoopbackServer, replay
from media_fixtures import png

MODEL = "anthropic:claude-sonnet-4-5"


def test_retry_sends_the_same_message_with_its_attachment_and_rewinds(tmp_path: Path) -> None:
    image = tmp_path / "tower.png"
    image.write_bytes(png(3, 2))
    replies = [replay(text_reply("First.")), replay(text_reply("Second."))]
    with LoopbackServer(replies, lifetime=60) as server:
        env = base_env(tmp_path, ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=server.url)
        lines = f"/attach {image}\nwhat is this?\n/retry\n"
        result = CliRunner().invoke(main, ["chat", "-m", MODEL], env=env, input=lines)
    assert result.exit_code == 0, result.stderr
    assert "First." in result.stdout and "Second." in result.stdout
    first, again = (json.loads(r.body)["messages"] for r in server.requests)
    assert first == again  # the same request: one user message, image then text
    ((message,),) = [first]
    assert message["role"] == "user"
    assert [block["type"] for block in message["content"]] == ["image", "text"]
    assert message["content"][1]["text"] == "what is this?"
    store = open_store(Path(env["ELELEM_HOME"]) / "elelem.db")
    try:
        (info,) = store.list_conversations()
        views = turn_views(Conversation.open(store, info.id).events)
    finally:
        store.close()
    assert [(v.turn, v.rewound, v.end) for v in views if v.turn] == [
        (1, "retry", "completed"),
        (2, None, "completed"),
    ]


def test_retry_before_any_message_sends_nothing(tmp_path: Path) -> None:
    with LoopbackServer([], lifetime=60) as server:
        env = base_env(tmp_path, ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=server.url)
        result = CliRunner().invoke(main, ["chat", "-m", MODEL], env=env, input="/retry\n")
    assert result.exit_code == 0
    assert result.stderr.splitlines()[1:] == ["nothing to retry yet"]
    assert server.requests == []
