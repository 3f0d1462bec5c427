"""Middleware: wrap(model, …) transforms the request before encoding and the
chunks after parsing; composable; the prompt cache is one."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest

import elelem
from elelem.conversation import Conversation, SQLiteStore
from elelem.providers.middleware import DefaultOptions, Middleware, PromptCaching
from elelem.stream import Chunk, TextDelta
from elelem.testing import FunctionModel, TestModel
from elelem.testing.servers import LoopbackServer
from elelem.vocabulary import GenerationOptions, PromptCache, TextBlock
from elelem.wire import ModelRequest
from test_test_model import rows
from toolloop_wires import WIRES, Wire

THREE = WIRES[:3]


class Shout(Middleware):
    """Upper-cases the answer's text."""

    def chunk(self, chunk: Chunk) -> Sequence[Chunk]:
        if isinstance(chunk, TextDelta):
            return (TextDelta(chunk.index, chunk.text.upper()),)
        return (chunk,)


class Guard(Middleware):
    """Refuses a request that mentions a secret; marks the system prompt."""

    def __init__(self, mark: str) -> None:
        self.mark = mark

    def request(self, request: ModelRequest) -> ModelRequest:
        for m in request.messages:
            if any(isinstance(p, TextBlock) and "secret" in p.text for p in m.content):
                raise PermissionError("the request mentions a secret")
        system = (request.system or "") + self.mark
        return msgspec.structs.replace(request, system=system)


MAX_TOKENS = {
    "anthropic_messages": ("max_tokens", 77),
    "openai_responses": ("max_output_tokens", 77),
    "openai_chat": ("max_tokens", 77),
}


@pytest.mark.parametrize("wire", THREE, ids=[w.shape for w in THREE])
def test_request_and_chunk_transforms_on_each_wire(wire: Wire, tmp_path: Path) -> None:
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    model = elelem.wrap(
        wire.model,
        DefaultOptions(GenerationOptions(max_tokens=77)),
        Guard("[a]"),
        Guard("[b]"),
        Shout(),
    )
    with LoopbackServer([wire.text("quiet words")]) as server:

        async def main() -> Any:
            async with elelem.Client(env=wire.env(server)) as client:
                return await elelem.send(conv, client, model, "hello", system="sys")

        result = asyncio.run(main())
        body = json.loads(server.requests[0].body)
    key, value = MAX_TOKENS[wire.shape]
    assert body[key] == value
    # Requests pass the layers in order: a, then b.
    assert "sys[a][b]" in json.dumps(body)
    # Chunks come out transformed, into the log.
    assert result.text == "QUIET WORDS"
    assert rows(conv)[1][2:4] == ("text", "QUIET WORDS")
    assert conv.events[0].body.model == wire.model  # type: ignore[union-attr]


def test_a_guardrail_refuses_before_anything_is_sent() -> None:
    inner = TestModel()
    with elelem.SyncClient(env={}) as client:
        with pytest.raises(PermissionError, match="mentions a secret"):
            client.stream(elelem.wrap(inner, Guard("")), "my secret is 42").final()
        assert inner.requests == []
        assert (
            client.stream(elelem.wrap(inner, Guard("!")), "hi").final().text
            == "success (no tool calls)"
        )
    assert inner.requests[0].system == "!"


def test_the_prompt_cache_as_middleware() -> None:
    seen: list[Any] = []

    def answer(request: ModelRequest) -> str:
        seen.append(request.options.cache)
        return "ok"

    model = elelem.wrap(FunctionModel(answer), PromptCaching(ttl="1h"))
    with elelem.SyncClient(env={}) as client:
        client.stream(model, "a").final()
        own = GenerationOptions(cache=PromptCache(ttl="5m"))
        client.stream(model, "b", options=own).final()
    # A request's own cache wins over the middleware's default.
    assert seen == [PromptCache(ttl="1h"), PromptCache(ttl="5m")]


def test_a_dropped_chunk_and_an_added_one(tmp_path: Path) -> None:
    class Censor(Middleware):
        def chunk(self, chunk: Chunk) -> Sequence[Chunk]:
            if isinstance(chunk, TextDelta) and "bad" in chunk.text:
                return ()
            if isinstance(chunk, TextDelta) and chunk.text.startswith("end"):
                return (chunk, TextDelta(chunk.index, " [checked]"))
            return (chunk,)

    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    with elelem.SyncClient(env={}) as client:
        result = elelem.send_sync(
            conv, client, elelem.wrap(TestModel(text="good bad end"), Censor()), "x"
        )
    assert result.text == "good end [checked]"


def test_wrap_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="at least one middleware"):
        elelem.wrap("anthropic:claude-sonnet-4-5")
    with pytest.raises(TypeError, match="is not a Middleware"):
        elelem.wrap("anthropic:claude-sonnet-4-5", object())  # type: ignore[arg-type]
    wrapped = elelem.wrap("anthropic:claude-sonnet-4-5", Shout())
    assert (wrapped.address, wrapped.provider, wrapped.model) == (
        "anthropic:claude-sonnet-4-5",
        "anthropic",
        "claude-sonnet-4-5",
    )
