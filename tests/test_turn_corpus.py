"""Done-when: a recorded multi-turn Anthropic web-search conversation, run
through the turn API against a loopback server replaying the recording,
stored, reloaded and re-encoded, reproduces the assistant content the
recording sent back — and every Anthropic recording's responses survive the
log the same way."""

from __future__ import annotations

import asyncio
import importlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from elelem import Client
from elelem.codec import to_builtins
from elelem.conversation import Conversation, SQLiteStore
from elelem.recordings.cassettes import load
from elelem.shapes.anthropic_messages import SHAPE, assistant_wire
from elelem.testing.servers import LoopbackServer, replay
from elelem.turns.drive import send
from elelem.vocabulary import (
    GenerationOptions,
    HostedActivity,
    Message,
    ProviderId,
    ReasoningBlock,
    ReasoningOptions,
    TextBlock,
    UnknownBlock,
    WebSearch,
)
from elelem.vocabulary.drop import FOREIGN_BLOCK, FOREIGN_PAYLOAD, FOREIGN_REASONING
from elelem.wire import ModelRequest
from test_anthropic_corpus import FILES, _fold, missing_fields, parse, wire_blocks

PAUSE = (
    "pydantic__pydantic-ai/"
    "tests__models__cassettes__test_anthropic__test_pause_turn_web_search_streaming_vcr.yaml"
)
ANT = ProviderId("anthropic")


def test_recorded_paused_web_search_conversation_replays_from_the_log(
    corpus: Path, tmp_path: Path
) -> None:
    recording = load(corpus / PAUSE).interactions
    assert len(recording) == 2
    first = recording[0].request
    assert first is not None
    prompt = first.json["messages"][0]["content"][0]["text"]
    bodies = [replay(i.response.body, chunk_size=4096) for i in recording]
    path = tmp_path / "log.db"

    async def main() -> Any:
        with LoopbackServer(bodies) as server:
            env = {
                "ANTHROPIC_BASE_URL": server.url,
                "ANTHROPIC_API_KEY": "sk-ant-test",
                "ELELEM_CONFIG": "/nonexistent/elelem.toml",
            }
            async with Client(env=env) as client:
                with SQLiteStore(path) as store:
                    conv = Conversation.create(store)
                    result = await send(
                        conv,
                        client,
                        "anthropic:claude-sonnet-4-5",
                        prompt,
                        hosted_tools=(WebSearch(),),
                        options=GenerationOptions(
                            max_tokens=15000, reasoning=ReasoningOptions(budget_tokens=4096)
                        ),
                    )
                    return conv.id, result, [json.loads(r.body) for r in server.requests]

    conv_id, result, sent = asyncio.run(main())
    assert [r.finish for r in result.responses] == ["paused", "stop"]
    assert [r.continuation for r in result.responses] == [0, 1]
    assert result.end == "completed"

    # The continuation request our client sent carries the paused assistant
    # content as the recorded client sent it (pydantic-ai drops citations, we
    # keep them: only the recorded fields must match).
    assert len(sent) == 2
    ours = sent[1]["messages"][-1]
    recorded = recording[1].request.json["messages"][-1]  # type: ignore[union-attr]
    assert ours["role"] == recorded["role"] == "assistant"
    assert [b["type"] for b in ours["content"]] == [b["type"] for b in recorded["content"]]
    assert missing_fields(_fold(ours["content"]), _fold(recorded["content"])) == []
    assert sent[1]["tools"] == [{"type": "web_search_20250305", "name": "web_search"}]

    # Reload from disk in a fresh store and re-encode: each response's
    # assistant content comes back exactly as the recording sent it.
    with SQLiteStore(path) as store:
        conv = Conversation.open(store, conv_id)
        history = conv.history()
        assert [m.role for m in history] == ["user", "assistant", "assistant"]
        for message, interaction in zip(history[1:], recording, strict=True):
            wire, dropped = assistant_wire(message, ANT)
            assert dropped == ()
            assert wire["content"] == wire_blocks(interaction)
        encoded = SHAPE.encode_request(ModelRequest("claude-sonnet-4-5", history), provider=ANT)
        assert encoded.dropped == ()
        diagnostics = conv.diagnostics()
    # The paused response ended on a search whose result came in the continuation.
    assert diagnostics.unfinished == ()
    searches = [p for m in history[1:] for p in m.content if isinstance(p, HostedActivity)]
    assert len({a.id for a in searches}) >= 10
    cited = [
        p for m in history[1:] for p in m.content if isinstance(p, TextBlock) and p.attributions
    ]
    assert cited, "the recording's citations were stored"


@pytest.mark.parametrize("name", FILES)
def test_every_recorded_anthropic_response_survives_store_reload_and_re_encoding(
    corpus: Path, tmp_path: Path, name: str
) -> None:
    interactions = [i for i in load(corpus / name).interactions if i.response.status < 400]
    path = tmp_path / "c.db"
    with SQLiteStore(path) as store:
        conv = Conversation.create(store)
        for interaction in interactions:
            conv.start_turn(model="anthropic:x")
            conv.add_message(parse(interaction).to_message())
        conv_id = conv.id
    with SQLiteStore(path) as store:
        projection = Conversation.open(store, conv_id).history()
    # Tool calls these recordings never answered get synthetic results in
    # between; the assistant messages are what the recording sent.
    history = [m for m in projection if m.role == "assistant"]
    assert len(history) == len(interactions)
    for message, interaction in zip(history, interactions, strict=True):
        wire, dropped = assistant_wire(message, ANT)
        assert dropped == ()
        assert wire["content"] == wire_blocks(interaction)


def _payloads_in(value: Any) -> int:
    """How many provider payloads a projected value holds, anywhere."""
    if isinstance(value, dict):
        here = 1 if {"provider", "format", "version", "value"} <= value.keys() else 0
        return here + sum(_payloads_in(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_payloads_in(v) for v in value)
    return 0


@pytest.mark.parametrize("name", FILES)
def test_recorded_anthropic_responses_project_portably_with_no_payload(
    corpus: Path, name: str
) -> None:
    interactions = [i for i in load(corpus / name).interactions if i.response.status < 400]
    with SQLiteStore(":memory:") as store:
        conv = Conversation.create(store)
        for interaction in interactions:
            conv.start_turn(model="anthropic:x")
            conv.add_message(parse(interaction).to_message())
        native = conv.history()
        portable = conv.portable()
    parts = [p for m in native for p in m.content]
    held = sum(
        len(getattr(p, "payloads", ()))
        + sum(a.replay is not None for a in getattr(p, "attributions", ()))
        + (isinstance(p, HostedActivity) and p.payload is not None)
        for p in parts
    )
    assert _payloads_in(to_builtins(native)) == held
    assert _payloads_in(to_builtins(portable.messages)) == 0
    assert all(m.provider is None for m in portable.messages)
    # Reasoning and unknown blocks do not travel, nor any payload of a part
    # that does; each is reported, once.
    lost = [p for p in parts if isinstance(p, (UnknownBlock, ReasoningBlock))]
    payloads_of_lost = sum(len(getattr(p, "payloads", ())) for p in lost)
    assert len(portable.dropped) == len(lost) + held - payloads_of_lost
    assert {d.why for d in portable.dropped} <= {FOREIGN_BLOCK, FOREIGN_PAYLOAD, FOREIGN_REASONING}
    # Sent to the same provider, the portable history carries no native data.
    encoded = SHAPE.encode_request(
        ModelRequest("claude-sonnet-4-5", portable.messages), provider=ANT
    )
    wire = json.dumps(encoded.body)
    for secret in ('"signature"', "encrypted_content", "encrypted_index", '"data"'):
        assert secret not in wire, secret


OPAQUE_KEYS = {"encrypted_content", "encrypted_index", "signature", "data"}


def _opaque(value: Any, key: str = "") -> list[str]:
    """The opaque strings (encrypted content and indexes, signatures) in a
    payload value."""
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in _opaque(v, k)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _opaque(v, key)]
    return [value] if isinstance(value, str) and key in OPAQUE_KEYS and len(value) > 8 else []


def _secrets(history: Sequence[Message]) -> set[str]:
    found: set[str] = set()
    for m in history:
        for p in m.content:
            payloads = list(getattr(p, "payloads", ()))
            payloads += [a.replay for a in getattr(p, "attributions", ()) if a.replay]
            if isinstance(p, HostedActivity) and p.payload is not None:
                payloads.append(p.payload)
            for payload in payloads:
                if payload.format == "signature" and isinstance(payload.value, str):
                    found.add(payload.value)
                found.update(_opaque(payload.value))
    return found


@pytest.mark.parametrize(
    ("shape", "provider"),
    [("openai_responses", "openai"), ("openai_chat", "deepseek"), ("gemini", "google")],
)
def test_a_recorded_anthropic_conversation_continued_elsewhere_sends_no_anthropic_payload(
    corpus: Path, shape: str, provider: str
) -> None:
    recording = load(corpus / PAUSE).interactions
    with SQLiteStore(":memory:") as store:
        conv = Conversation.create(store)
        conv.start_turn(model="anthropic:claude-sonnet-4-5")
        conv.add_user("Search the web for me")
        for interaction in recording:
            conv.add_message(parse(interaction).to_message())
        conv.start_turn(model=f"{provider}:some-model")
        conv.add_user("Now summarize that in one line.")
        history = conv.history()
    secrets = _secrets(history)
    assert len(secrets) > 20  # signatures, encrypted results and citation indexes
    # They are real wire values: native replay to Anthropic sends every one.
    native = json.dumps(SHAPE.encode_request(ModelRequest("m", history), provider=ANT).body)
    assert [s for s in secrets if s not in native] == []
    target = importlib.import_module(f"elelem.shapes.{shape}").SHAPE
    encoded = target.encode_request(
        ModelRequest("some-model", history), provider=ProviderId(provider)
    )
    wire = json.dumps(encoded.body)
    assert [s for s in secrets if s in wire] == []
    assert encoded.dropped, "the encoder reports what it left out"
    # What travels portably does arrive: the assistant's text and the question.
    assert "Now summarize that in one line." in wire
    text = next(p.text for m in history for p in m.content if isinstance(p, TextBlock) and p.text)
    assert json.dumps(text)[1:-1] in wire
