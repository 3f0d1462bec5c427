"""Fallback: a failure before any chunk moves the request to the next
target, visibly (a Retry chunk naming the switch, kept in the response
record); the history goes natively to the provider that made it and
portably, with its drops reported, to another."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import elelem
from cli_helpers import KEY, base_env, run
from elelem.conversation import Conversation, SQLiteStore
from elelem.conversation.events import ResponseRecord
from elelem.errors import ConfigError, ServerError
from elelem.render.lines import retry_line
from elelem.stream import Retry
from elelem.testing import FunctionModel, TestModel
from elelem.testing.servers import LoopbackServer, Reply, Send, sse_body, status
from elelem.turns.engine import TurnResult
from toolloop_wires import CONFIG, WIRES, Wire

THREE = WIRES[:3]
OVERLOADED = b'{"type":"error","error":{"type":"overloaded_error","message":"busy"}}'


def env_of(*pairs: tuple[Wire, LoopbackServer]) -> dict[str, str]:
    env: dict[str, str] = {"ELELEM_CONFIG": CONFIG}
    for wire, server in pairs:
        env.update(wire.env(server))
    return env


def records(conv: Conversation) -> list[ResponseRecord]:
    return [e.body for e in conv.events if isinstance(e.body, ResponseRecord)]


@pytest.mark.parametrize(
    ("first", "second"),
    [(THREE[0], THREE[1]), (THREE[1], THREE[2]), (THREE[2], THREE[0])],
    ids=["anthropic-to-responses", "responses-to-chat", "chat-to-anthropic"],
)
def test_an_overloaded_target_falls_back_to_the_next(
    first: Wire, second: Wire, tmp_path: Path
) -> None:
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    seen: list[Any] = []
    with (
        LoopbackServer([status(529, OVERLOADED)]) as failing,
        LoopbackServer([second.text("From the second.")]) as answering,
    ):

        async def main() -> TurnResult:
            env = env_of((first, failing), (second, answering))
            async with elelem.Client(env=env, max_retries=0) as client:
                model = elelem.Fallback([first.model, second.model])
                return await elelem.send(
                    conv, client, model, "hi", on_chunk=lambda c, _: seen.append(c)
                )

        result = asyncio.run(main())
        assert (len(failing.requests), len(answering.requests)) == (1, 1)
    assert result.text == "From the second."
    notice = seen[0]
    assert notice == Retry(
        attempt=1,
        delay=0.0,
        reason=f"falling back to {second.model}",
        kind=notice.kind,
        status=529,
        message=notice.message,
        fallback=second.model,
    )
    assert retry_line(notice) == f"falling back to {second.model} after {notice.kind} (HTTP 529)"
    (record,) = records(conv)
    assert record.provider == second.model.split(":")[0]
    assert record.retries == (notice,)
    assert conv.events[0].body.model == f"{first.model},{second.model}"
    answer = [e.body for e in conv.events if e.kind == "message"][-1]
    assert (answer.provider, answer.role) == (second.model.split(":")[0], "assistant")


def anthropic_thinking(text: str) -> Reply:
    frames: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "msg_t", "type": "message", "role": "assistant",
         "model": "claude-test", "content": [], "stop_reason": None,
         "usage": {"input_tokens": 10, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "thinking_delta", "thinking": "Pondering."}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "signature_delta", "signature": "SIG-abc"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}},
        {"type": "message_stop"},
    ]  # fmt: skip
    return Reply(script=(Send(sse_body([(f["type"], json.dumps(f)) for f in frames])),))


def test_history_is_native_to_its_provider_and_portable_to_others(tmp_path: Path) -> None:
    anthropic, responses, chat = THREE
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    with (
        LoopbackServer([anthropic_thinking("First."), anthropic.text("Second."),
                        status(529, OVERLOADED)]) as a,
        LoopbackServer([responses.text("Third.")]) as r,
        LoopbackServer([status(503, b"{}")]) as c,
    ):  # fmt: skip

        async def main() -> None:
            async with elelem.Client(env=env_of((anthropic, a), (responses, r), (chat, c)),
                                     max_retries=0) as client:  # fmt: skip
                await elelem.send(conv, client, anthropic.model, "one")
                # Chat fails; Anthropic gets its own thinking back, signed.
                await elelem.send(
                    conv, client, elelem.Fallback([chat.model, anthropic.model]), "two"
                )
                # Anthropic fails; Responses gets the history portably.
                await elelem.send(
                    conv, client, elelem.Fallback([anthropic.model, responses.model]), "three"
                )

        asyncio.run(main())
        native = json.loads(a.requests[1].body)
        portable = json.loads(r.requests[0].body)
    assert native["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": "Pondering.",
        "signature": "SIG-abc",
    }
    assert "SIG-abc" not in json.dumps(portable) and "Pondering." not in json.dumps(portable)
    assert "First." in json.dumps(portable) and "Second." in json.dumps(portable)
    second, third = records(conv)[1:]
    assert (second.provider, second.retries[0].fallback) == ("anthropic", anthropic.model)
    assert (third.provider, third.retries[0].fallback) == ("openai", responses.model)
    assert third.retries[0].status == 529
    # The reasoning the portable projection left out is reported, not lost.
    assert [(d.where, d.what, d.why, d.detail) for d in third.dropped] == [
        ("messages[1].content[0]", "reasoning", "foreign-reasoning", "from anthropic")
    ]


def test_an_error_after_content_is_not_moved_past(tmp_path: Path) -> None:
    from elelem.stream import BlockStart, ResponseStart, TextDelta

    def breaks(request: Any) -> Any:
        yield ResponseStart("r1")
        yield BlockStart(0, "text")
        yield TextDelta(0, "half")
        raise ServerError("broke mid-stream", status=500, retryable=True)

    backup = TestModel()
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    with elelem.SyncClient(env={}) as client, pytest.raises(ServerError, match="mid-stream"):
        elelem.send_sync(conv, client, elelem.Fallback([FunctionModel(breaks), backup]), "go")
    assert backup.requests == []
    (record,) = records(conv)
    assert (record.finish, record.retries) == ("aborted", ())


def test_a_request_error_is_not_moved_past_and_the_last_failure_propagates(tmp_path: Path) -> None:
    def bad_request(request: Any) -> Any:
        raise ServerError("bad request", status=400)

    def overloaded(request: Any) -> Any:
        raise ServerError("busy", status=529, retryable=True)

    backup = TestModel()
    with elelem.SyncClient(env={}) as client:
        with pytest.raises(ServerError, match="bad request"):
            client.stream(elelem.Fallback([FunctionModel(bad_request), backup]), "x").final()
        assert backup.requests == []
        stream = client.stream(
            elelem.Fallback([FunctionModel(overloaded), FunctionModel(overloaded)]), "x"
        )
        with pytest.raises(ServerError, match="busy"):
            stream.final()
        assert [n.fallback for n in stream.retries] == ["test:function"]


def test_a_fallback_needs_targets() -> None:
    with pytest.raises(ValueError, match="at least one target"):
        elelem.Fallback([])
    fallback = elelem.Fallback(["anthropic:claude-sonnet-4-5", TestModel()])
    assert (fallback.address, fallback.provider, fallback.model) == (
        "anthropic:claude-sonnet-4-5,test:test-model",
        "anthropic",
        "claude-sonnet-4-5",
    )


def cli_env(tmp_path: Path, anthropic: LoopbackServer, chat: LoopbackServer) -> dict[str, str]:
    return base_env(
        tmp_path,
        ANTHROPIC_BASE_URL=anthropic.url,
        ANTHROPIC_API_KEY=KEY,
        ELELEM_DEEPSEEK_BASE_URL=chat.url,
        DEEPSEEK_API_KEY="sk-deepseek-test",
    )


def test_the_cli_falls_back_along_a_comma_list(tmp_path: Path) -> None:
    anthropic, chat = THREE[0], THREE[2]
    with (
        LoopbackServer([status(529, OVERLOADED)] * 3) as a,
        LoopbackServer([chat.text("From DeepSeek.")]) as c,
    ):
        done = run(cli_env(tmp_path, a, c), "ask", "-m", f"{anthropic.model},{chat.model}", "hi")
        # The client's own two retries of the first target come first.
        assert (len(a.requests), len(c.requests)) == (3, 1)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("From DeepSeek.\n")
    lines = done.stderr.splitlines()
    assert [line.split(": ")[1] for line in lines[:2]] == ["overloaded", "overloaded"]
    assert lines[2] == f"falling back to {chat.model} after overloaded (HTTP 529)"


def test_a_config_alias_to_a_list_is_a_fallback(tmp_path: Path) -> None:
    anthropic, chat = THREE[0], THREE[2]
    config = tmp_path / "elelem.toml"
    config.write_text(f'[aliases]\nsturdy = ["{anthropic.model}", "{chat.model}"]\n')
    with (
        LoopbackServer([status(529, OVERLOADED)] * 3) as a,
        LoopbackServer([chat.text("From DeepSeek.")]) as c,
    ):
        env = {**cli_env(tmp_path, a, c), "ELELEM_CONFIG": str(config)}
        done = run(env, "ask", "--json", "-m", "sturdy", "hi")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e.get("fallback") for e in events[:3]] == [None, None, chat.model]
    assert {k: events[2][k] for k in ("type", "status", "fallback")} == {
        "type": "retry",
        "status": 529,
        "fallback": chat.model,
    }
    bad = tmp_path / "bad.toml"
    bad.write_text("[aliases]\nsturdy = []\n")
    refused = run({**env, "ELELEM_CONFIG": str(bad)}, "ask", "-m", "sturdy", "hi")
    assert refused.returncode != 0
    assert "[aliases] sturdy must be a model" in refused.stderr


def test_a_list_where_one_model_is_taken_is_refused_by_name(tmp_path: Path) -> None:
    # embed, speak and batch take one model: a list (or an alias to one) was
    # resolved as one provider named "b,anthropic" and refused as unknown.
    config = tmp_path / "elelem.toml"
    config.write_text('[aliases]\nsturdy = ["openai:a", "openai:b"]\n')
    env = {**base_env(tmp_path), "ELELEM_CONFIG": str(config), "OPENAI_API_KEY": KEY}
    env["OPENAI_BASE_URL"] = "http://127.0.0.1:9/v1"  # never the network, even if refused late
    for args in (
        ("embed", "-m", "sturdy", "hello"),
        ("embed", "-m", "openai:a,openai:b", "hello"),
        ("speak", "-m", "sturdy", "hi", "-o", str(tmp_path / "x.mp3")),
    ):
        refused = run(env, *args)
        assert refused.returncode == 2, refused.stderr
        name = args[2]
        assert refused.stderr == (
            f"elelem: model {name!r} names a list of models; this takes one"
            " (a list is a fallback, for chat requests: elelem.Fallback)\n"
        )
    with (
        elelem.SyncClient(env={"OPENAI_API_KEY": KEY}) as client,
        pytest.raises(ConfigError, match="names a list of models"),
    ):
        client.target("openai:a, openai:b")
