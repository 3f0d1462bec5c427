"""``streamed=False`` (``--no-stream``) reaches the wire through a model that
is not one catalog target: each target a :class:`elelem.Fallback` tries, the
model a :func:`elelem.wrap` wraps, and the CLI's ``-m a,b --no-stream`` and
``--cache --no-stream``; the request body asks for no stream."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import elelem
from cli_helpers import KEY, base_env, run
from elelem.providers.middleware import DefaultOptions
from elelem.testing.servers import LoopbackServer, RecordedRequest, Reply, replay, status
from elelem.vocabulary import GenerationOptions
from toolloop_wires import CONFIG, WIRES, Wire

THREE = WIRES[:3]
OVERLOADED = b'{"type":"error","error":{"type":"overloaded_error","message":"busy"}}'


def whole(wire: Wire, text: str) -> Reply:
    """The non-streamed body of ``wire``'s shape answering ``text``."""
    body: dict[str, Any]
    if wire.shape == "anthropic_messages":
        body = {"id": "msg_w", "type": "message", "role": "assistant", "model": "claude-test",
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                "usage": {"input_tokens": 10, "output_tokens": 5}}  # fmt: skip
    elif wire.shape == "openai_responses":
        message = {"type": "message", "id": "msg_w", "role": "assistant", "status": "completed",
                   "content": [{"type": "output_text", "text": text, "annotations": []}]}  # fmt: skip
        body = {"id": "resp_w", "object": "response", "model": "gpt-test", "status": "completed",
                "output": [message],
                "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}}  # fmt: skip
    else:
        body = {"id": "chatcmpl-w", "object": "chat.completion", "created": 1,
                "model": "deepseek-chat",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}  # fmt: skip
    return replay(json.dumps(body).encode(), content_type="application/json")


ASKED_WHOLE: dict[str, dict[str, Any]] = {
    "anthropic_messages": {},
    "openai_responses": {"stream": False},
    "openai_chat": {"stream": False},
}
"""What a whole request of each shape says about streaming."""


def streaming_keys(request: RecordedRequest) -> dict[str, Any]:
    """What the request body says about streaming (nothing, when whole)."""
    body = json.loads(request.body)
    return {k: body[k] for k in ("stream", "stream_options") if k in body}


@pytest.mark.parametrize(
    ("first", "second"),
    [(THREE[0], THREE[1]), (THREE[1], THREE[2]), (THREE[2], THREE[0])],
    ids=["anthropic-to-responses", "responses-to-chat", "chat-to-anthropic"],
)
def test_every_target_of_a_fallback_is_asked_whole(first: Wire, second: Wire) -> None:
    with (
        LoopbackServer([status(529, OVERLOADED)]) as failing,
        LoopbackServer([whole(second, "From the second, whole.")]) as answering,
    ):
        env = {**first.env(failing), **second.env(answering), "ELELEM_CONFIG": CONFIG}
        model = elelem.Fallback([first.model, second.model])
        with (
            elelem.SyncClient(env=env, max_retries=0) as client,
            client.stream(model, "hi", streamed=False) as stream,
        ):
            assert list(stream.text()) == ["From the second, whole."]
        assert [n.fallback for n in stream.retries] == [second.model]
        ((tried,), (answered,)) = failing.requests, answering.requests
    assert (streaming_keys(tried), streaming_keys(answered)) == (
        ASKED_WHOLE[first.shape],
        ASKED_WHOLE[second.shape],
    )


@pytest.mark.parametrize("wire", THREE, ids=[w.shape for w in THREE])
def test_a_wrapped_model_is_asked_whole(wire: Wire) -> None:
    with LoopbackServer([whole(wire, "Whole."), wire.text("Streamed.")]) as server:
        model = elelem.wrap(wire.model, DefaultOptions(GenerationOptions(temperature=0.25)))

        async def both() -> list[str]:
            async with elelem.Client(env=wire.env(server)) as client:
                got = [(await client.stream(model, "hi", streamed=False).final()).text]
                got.append((await client.stream(model, "hi").final()).text)
            return got

        assert asyncio.run(both()) == ["Whole.", "Streamed."]
        asked_whole, asked_streamed = (json.loads(r.body) for r in server.requests)
    assert asked_whole["temperature"] == 0.25  # the middleware ran
    assert streaming_keys(server.requests[0]) == ASKED_WHOLE[wire.shape]
    assert asked_streamed["stream"] is True
    assert {k: v for k, v in asked_whole.items() if k != "stream"} == {
        k: v for k, v in asked_streamed.items() if k not in ("stream", "stream_options")
    }


def test_complete_asks_the_targets_of_a_model_whole() -> None:
    anthropic = THREE[0]
    with LoopbackServer([whole(anthropic, "Complete.")]) as server:
        model = elelem.wrap(anthropic.model, DefaultOptions(GenerationOptions(max_tokens=64)))
        with elelem.SyncClient(env=anthropic.env(server)) as client:
            assert client.complete(model, "hi").text == "Complete."
        (request,) = server.requests
    assert streaming_keys(request) == {}
    assert json.loads(request.body)["max_tokens"] == 64


def test_the_cli_no_stream_through_a_fallback_and_the_cache(tmp_path: Path) -> None:
    anthropic, chat = THREE[0], THREE[2]
    with (
        LoopbackServer([status(529, OVERLOADED)] * 3 + [whole(anthropic, "Cached, whole.")]) as a,
        LoopbackServer([whole(chat, "From DeepSeek, whole.")]) as c,
    ):
        env = base_env(
            tmp_path,
            ANTHROPIC_BASE_URL=a.url,
            ANTHROPIC_API_KEY=KEY,
            ELELEM_DEEPSEEK_BASE_URL=c.url,
            DEEPSEEK_API_KEY="sk-deepseek-test",
        )
        fell = run(env, "ask", "--no-stream", "-m", f"{anthropic.model},{chat.model}", "hi")
        cached = run(env, "ask", "--no-stream", "--cache", "-m", anthropic.model, "hi")
        sent = [*a.requests, *c.requests]
    assert fell.returncode == 0, fell.stderr
    assert fell.stdout.startswith("From DeepSeek, whole.\n")
    assert cached.returncode == 0, cached.stderr
    assert cached.stdout.startswith("Cached, whole.\n")
    assert [streaming_keys(r) for r in sent] == [{}] * 4 + [{"stream": False}]
    # The cache's marks are on the request that went out whole.
    assert json.loads(a.requests[3].body)["cache_control"] == {"type": "ephemeral"}
