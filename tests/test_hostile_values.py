"""Hostile values that reached an internal error (issue #41): a lone
surrogate (what a ``\\ud800`` JSON escape decodes to) in an embedding row's
id, content or metadata, on SQLite and on a real PostgreSQL, and in a
request's text."""

from __future__ import annotations

import json
import uuid
from array import array
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_helpers import base_env
from elelem.conversation.store import Store
from elelem.embeddings.collections import Collections, Item
from elelem.errors import ConfigError
from elelem.testing.servers import LoopbackServer
from test_embedding_collections import cli_env, fake_openai, run
from test_store import Ticker, opener, pg_url  # noqa: F401  (pg_url: the fixture)


@pytest.fixture(params=["sqlite", "postgres"])
def any_store(request: pytest.FixtureRequest) -> Iterator[Store]:
    opened = opener(request.param, request)(clock=Ticker())
    yield opened
    opened.close()


ROWS = {
    "id": '{"id": "\\ud800", "content": "cat"}\n',
    "content": '{"id": "a", "content": "c\\udc00t"}\n',
    "metadata": '{"id": "a", "content": "cat", "metadata": {"k\\udbff": 1}}\n',
}


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
@pytest.mark.parametrize("field", sorted(ROWS))
def test_embed_jsonl_with_a_lone_surrogate_is_a_usage_error(
    tmp_path: Path, request: pytest.FixtureRequest, backend: str, field: str
) -> None:
    with LoopbackServer(fake_openai) as server:
        env = cli_env(tmp_path, server)
        if backend == "postgres":
            url = request.getfixturevalue("pg_url")
            env["ELELEM_STORE"] = f"{url}?schema=s_{uuid.uuid4().hex[:12]}"
        done = run(
            env, "embed", "-m", "local:e", "-c", "pets", "-i", "-", "--jsonl", stdin=ROWS[field]
        )
        sent = server.requests
    assert done.returncode == 2, done.stderr
    unit = {"id": "D800", "content": "DC00", "metadata": "DBFF"}[field]
    assert done.stderr == (f"elelem: line 1 holds a lone surrogate (U+{unit}), which is not text\n")
    assert sent == []  # refused before any request


@pytest.mark.parametrize("field", ["id", "content", "metadata"])
def test_a_collection_refuses_a_lone_surrogate(any_store: Store, field: str) -> None:
    notes = Collections(any_store).open("notes", "openai:text-embedding-3-small", 2)
    given = {"id": "a", "content": "cat", "metadata": None}
    given[field] = "x\udfffy" if field != "metadata" else {"k": "\ud800"}  # type: ignore[assignment]
    item = Item(given["id"], array("f", [1.0, 0.0]), given["content"], given["metadata"])  # type: ignore[arg-type]
    with pytest.raises(ConfigError) as caught:
        notes.upsert([item])
    unit = "D800" if field == "metadata" else "DFFF"
    assert f"its {field} holds a lone surrogate (U+{unit}), which is not text" in str(caught.value)
    assert notes.unchanged([("a", "cat")]) == set()  # nothing was stored


def test_a_request_holding_a_lone_surrogate_is_a_config_error(tmp_path: Path) -> None:
    from elelem import SyncClient

    with LoopbackServer(fake_openai) as server:
        env = cli_env(tmp_path, server)
        env["ELELEM_CONFIG"] = str(tmp_path / "elelem.toml")
        with SyncClient(env=env) as client, pytest.raises(ConfigError) as caught:
            client.embed("local:e", ["fine", "bro\udc80ken"])
        sent = server.requests
    assert str(caught.value) == "the request holds a lone surrogate (U+DC80), which is not text"
    assert sent == []


def test_inspect_of_a_wrapper_whose_body_is_nested_100k_deep(tmp_path: Path) -> None:
    """A JSON ``{status, headers, body}`` recording whose body (a string) is
    JSON nested 100,000 deep: a typed refusal naming it, exit 2, one line."""
    deep = "[" * 100_000 + "]" * 100_000
    path = tmp_path / "wrapper.json"
    path.write_text(
        json.dumps({"status": 200, "headers": {"content-type": "application/json"}, "body": deep}),
        encoding="utf-8",
    )
    done = run(base_env(tmp_path), "inspect", str(path))
    assert done.returncode == 2
    assert done.stderr == f"elelem: {path}: interaction 0: its body is nested too deeply to read\n"


def zero_usage_reply(text: str) -> bytes:
    """An Anthropic stream of ``text`` whose usage says 0 output tokens."""
    from elelem.testing.servers import sse_body

    start = {"id": "msg_0", "type": "message", "role": "assistant", "model": "claude-x",
             "content": [], "usage": {"input_tokens": 3, "output_tokens": 0}}  # fmt: skip
    frames = [
        {"type": "message_start", "message": start},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 0},
        },
        {"type": "message_stop"},
    ]
    return sse_body([(str(f["type"]), json.dumps(f)) for f in frames])


def test_an_output_limit_counts_what_was_received_when_the_provider_reports_0(
    tmp_path: Path,
) -> None:
    from elelem import SyncClient, run_sync
    from elelem.conversation import Conversation, SQLiteStore
    from elelem.testing.servers import replay
    from elelem.turns.limits import UsageLimitExceeded, UsageLimits

    text = "word " * 80  # 400 characters: 100 tokens at four a token
    with LoopbackServer([replay(zero_usage_reply(text))]) as server:
        env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-ant-limits-0123",
               "ELELEM_CONFIG": str(tmp_path / "none.toml")}  # fmt: skip
        conversation = Conversation.create(SQLiteStore(tmp_path / "log.db"))
        with SyncClient(env=env) as client, pytest.raises(UsageLimitExceeded) as caught:
            run_sync(
                conversation,
                client,
                "anthropic:claude-x",
                "talk",
                limits=UsageLimits(output_tokens=50),
            )
    exc = caught.value
    assert (exc.limit, exc.maximum, exc.value, exc.when) == (
        "output_tokens",
        50,
        100,
        "after-response",
    )
    assert exc.result.text == text and exc.result.usage.output == 0


@pytest.mark.parametrize(
    ("count", "bound"),
    [(2_001, 2_000), pytest.param(100_001, None, marks=pytest.mark.slow)],
    ids=["past-a-lowered-bound", "past-the-real-bound"],
)
def test_streamed_speech_of_more_audio_deltas_than_max_blocks_is_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count: int, bound: int | None
) -> None:
    """A narration of more ``speech.audio.delta`` events (a block each) than
    ``Assembler.max_blocks`` (100,000; lowered in the default run) is read
    whole: the assembler's default bound on blocks is not the speech
    answer's (its body size is)."""
    import base64

    from elelem import SyncClient
    from elelem.stream import assembler
    from elelem.testing.servers import status

    if bound is not None:
        monkeypatch.setattr(assembler, "MAX_BLOCKS", bound)
    piece = base64.b64encode(b"\xff").decode()
    one = b'data: {"type":"speech.audio.delta","audio":"' + piece.encode() + b'"}\n\n'
    done = b'data: {"type":"speech.audio.done","usage":{"input_tokens":1,"output_tokens":2}}\n\n'
    body = one * count + done
    with LoopbackServer([status(200, body, content_type="text/event-stream")]) as server:
        env = {"OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": "sk-speech-0123456789",
               "ELELEM_CONFIG": str(tmp_path / "none.toml")}  # fmt: skip
        with SyncClient(env=env, max_retries=0) as client:
            speech = client.speak_stream(
                "openai:gpt-4o-mini-tts", "Hi.", format="pcm", stream_format="sse"
            )
            with speech:
                whole = speech.final()
    assert whole.audio.source.blob.data == b"\xff" * count  # type: ignore[union-attr]
