"""The history tells the truth: a failed turn is shown as failed with its
error wherever a turn is shown (``show``, the Markdown and HTML exports, the
web page), a guardrail's refusal does not poison later requests, a new web
chat refused before it began leaves no empty conversation, ``ask`` says
when ``--max-steps`` left calls unrun, and an error line names the status
once.  Real loopback servers; each CLI run in its own tmp home with no
inherited ELELEM_* variable."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import elelem
from cli_helpers import KEY, MODEL, base_env, run
from elelem.conversation import Conversation, SQLiteStore
from elelem.providers.middleware import Middleware, wrap
from elelem.shapes.openai_chat.errors import classify_error
from elelem.testing.asgi import ASGIServer
from elelem.testing.models import TestModel
from elelem.testing.servers import LoopbackServer, Reply, Send
from elelem.web.app import create_app
from test_cli_tools import TOOLS_PY
from toolloop_wires import anthropic_calls

# https://docs.anthropic.com/en/api/errors: a 401 with an error object.
UNAUTHORIZED = Reply(
    401,
    {"content-type": "application/json"},
    (
        Send(
            b'{"type":"error","error":{"type":"authentication_error",'
            b'"message":"invalid x-api-key"}}'
        ),
    ),
)
FAILED = "failed: authentication: anthropic 401 authentication_error: invalid x-api-key"


def test_a_failed_turn_is_shown_failed_with_its_error_everywhere(tmp_path: Path) -> None:
    with LoopbackServer([UNAUTHORIZED]) as server:
        env = {**base_env(tmp_path), "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY}
        asked = run(env, "ask", "-m", MODEL, "hello")
    assert asked.returncode == 1
    assert asked.stderr == (
        "elelem: authentication: anthropic 401 authentication_error: invalid x-api-key\n"
    )
    shown = run(env, "show")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[1:] == ["> hello", FAILED]
    assert "$0.00" in shown.stdout.splitlines()[0]  # refused before any answer: not billed
    markdown = run(env, "export", "-f", "md").stdout
    assert f"*{FAILED}*" in markdown and "interrupted" not in markdown
    page = run(env, "export", "-f", "html").stdout
    assert f'<span class="error">{FAILED}</span>' in page and "interrupted" not in page
    log = run(env, "log").stdout
    assert "$0.00" in log and "cost unknown" not in log


class Guard(Middleware):
    """A guardrail refusing any request that mentions a secret."""

    def request(self, request: Any) -> Any:
        for message in request.messages:
            for block in message.content:
                if "secret" in getattr(block, "text", ""):
                    raise ValueError("refused: the request mentions a secret")
        return request


def test_a_refused_request_does_not_poison_the_conversation(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "log.db")
    conversation = Conversation.create(store)
    model = TestModel(text="Hello back.")
    with elelem.SyncClient(env={}) as client:
        try:
            elelem.send_sync(conversation, client, wrap(model, Guard()), "tell me the secret")
        except ValueError as exc:
            assert str(exc) == "refused: the request mentions a secret"
        else:
            raise AssertionError("the guardrail did not refuse")
        result = elelem.send_sync(conversation, client, wrap(model, Guard()), "hello")
    assert result.text == "Hello back."
    (sent,) = model.requests
    assert [m.content[0].text for m in sent.messages] == ["hello"]  # type: ignore[union-attr]
    kinds = [e.kind for e in conversation.events]
    assert kinds[:4] == ["turn-start", "message", "response", "rewind"]
    refused = conversation.events[2].body
    assert (refused.finish, refused.error) == (  # type: ignore[union-attr]
        "aborted",
        "ValueError: refused: the request mentions a secret",
    )


def test_a_new_web_chat_that_never_began_leaves_nothing(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "log.db")
    token = "first-hour-token-0123456789abcdef"
    app = create_app(store, token=token, models=[], client=lambda: elelem.Client(env={}))
    with ASGIServer(app) as server:
        request = urllib.request.Request(
            f"{server.url}/api/chat?token={token}",
            data=json.dumps({"model": "anthropic:claude-sonnet-4-5", "text": "hi"}).encode(),
            headers={"content-type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            stream = response.read().decode()
    assert '"type":"error"' in stream and "ANTHROPIC_API_KEY" in stream  # no key given
    assert store.list_conversations() == []


def test_ask_says_when_max_steps_left_calls_unrun(tmp_path: Path) -> None:
    path = tmp_path / "tools.py"
    path.write_text(TOOLS_PY)
    calls = [("c1", "get_weather", {"city": "Paris"})]
    replies = [anthropic_calls(calls), anthropic_calls([("c2", "get_weather", {"city": "Oslo"})])]
    with LoopbackServer(replies) as server:
        env = {**base_env(tmp_path), "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY}
        done = run(env, "ask", "-m", MODEL, "--functions", str(path), "--max-steps", "1", "Hi")
    assert done.returncode == 0, done.stderr
    assert "elelem: stopped at --max-steps 1: the last calls were not run" in (
        done.stderr.splitlines()
    )


def test_an_error_line_names_the_status_once() -> None:
    # LiteLLM's proxy answers errors as {"error": {..., "code": "<status>"}}.
    body = {
        "error": {
            "message": "Rate limit reached for model group gpt-4o",
            "type": "None",
            "param": "None",
            "code": "429",
        }
    }
    error = classify_error(429, {}, json.dumps(body).encode())
    assert str(error) == "chat 429 error: Rate limit reached for model group gpt-4o"
