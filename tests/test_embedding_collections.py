"""Collections of embeddings in the store (SQLite and a real PostgreSQL on
127.0.0.1), and the ``elelem embed`` / ``similar`` / ``collections``
commands against a loopback OpenAI stand-in."""

from __future__ import annotations

import json
import os
from array import array
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli_helpers import base_env
from elelem.cli import main
from elelem.conversation import open_store
from elelem.conversation.store import Store
from elelem.embeddings.collections import Collections, Hit, Item, cosine, from_bytes, to_bytes
from elelem.errors import ConfigError
from elelem.testing.servers import LoopbackServer, RecordedRequest, Reply, status
from test_store import Ticker, opener, pg_url  # noqa: F401  (pg_url: the fixture)


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest) -> Iterator[Store]:
    s = opener(request.param, request)(clock=Ticker())
    yield s
    s.close()


def vec(*values: float) -> array[float]:
    return array("f", values)


def test_a_collection_round_trips_and_ranks_by_cosine(store: Store) -> None:
    found = Collections(store).open("docs", "openai:e", 2)
    found.upsert(
        [
            Item("a", vec(1.0, 0.0), "east", {"n": 1}),
            Item("b", vec(0.0, 1.0), "north\x00\\side"),
            Item("c", vec(1.0, 1.0), None),
        ]
    )
    assert found.count() == 3
    hits = found.similar(vec(2.0, 0.5), number=2)
    assert [h.id for h in hits] == ["a", "c"]
    assert hits[0] == Hit("a", cosine(vec(2.0, 0.5), vec(1.0, 0.0)), "east", {"n": 1})
    assert found.similar(vec(0.0, 1.0), number=1)[0].content == "north\x00\\side"
    assert [h.id for h in found.similar(found.vector("a"), skip="a")] == ["c", "b"]
    # an upsert replaces the row of the same id
    found.upsert([Item("a", vec(0.0, 1.0), "moved")])
    assert list(found.vector("a")) == [0.0, 1.0] and found.count() == 3
    [info] = Collections(store).list()
    assert (info.name, info.model, info.dimensions, info.count) == ("docs", "openai:e", 2, 3)


def test_unchanged_content_is_known_by_its_hash(store: Store) -> None:
    found = Collections(store).open("docs", "m", 1)
    found.upsert([Item("1", vec(1.0), "same"), Item("2", vec(1.0), "old")])
    assert found.unchanged([("1", "same"), ("2", "new"), ("3", "same")]) == {"1"}


def test_mismatches_are_typed_errors_and_store_nothing(store: Store) -> None:
    collections = Collections(store)
    found = collections.open("docs", "m", 2)
    with pytest.raises(ConfigError, match="item 'x' has 3 dimensions; collection 'docs' holds 2"):
        found.upsert([Item("ok", vec(1.0, 2.0)), Item("x", vec(1.0, 2.0, 3.0))])
    assert found.count() == 0
    with pytest.raises(ConfigError, match="holds 2-dimension vectors of m; these are 2-dimension"):
        collections.open("docs", "other", 2)
    with pytest.raises(ConfigError, match="no collection named 'nope'"):
        collections.get("nope")
    with pytest.raises(ConfigError, match="has no item 'z'"):
        found.vector("z")
    collections.delete("docs")
    assert collections.list() == []


def test_vectors_are_stored_little_endian() -> None:
    assert to_bytes(vec(1.0)) == b"\x00\x00\x80\x3f"
    assert list(from_bytes(b"\x00\x00\x80\x3f")) == [1.0]
    assert cosine(vec(0.0, 0.0), vec(1.0, 0.0)) == 0.0


def test_the_log_is_untouched_by_collections(tmp_path: Path) -> None:
    store = open_store(tmp_path / "e.db")
    version = store.schema_version  # type: ignore[attr-defined]
    Collections(store).open("c", "m", 1).upsert([Item("1", vec(1.0))])
    store.close()
    again = open_store(tmp_path / "e.db")
    assert again.schema_version == version  # type: ignore[attr-defined]
    assert Collections(again).get("c").count() == 1
    again.close()


# -- the commands ---------------------------------------------------------------

WORDS = {"cat": [1.0, 0.0], "dog": [0.8, 0.6], "car": [0.0, 1.0], "kitten": [0.96, 0.28]}


def fake_openai(request: RecordedRequest) -> Reply:
    """An OpenAI embeddings stand-in: each word's fixed 2-d vector, as floats."""
    body = json.loads(request.body)
    data = [
        {"index": i, "embedding": WORDS.get(t, [1.0, 0.0])} for i, t in enumerate(body["input"])
    ]
    usage = {"prompt_tokens": len(data), "total_tokens": len(data)}
    return status(200, json.dumps({"data": data, "usage": usage}).encode())


class Done:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def run(env: dict[str, str], *args: str, stdin: str = "") -> Done:
    """``elelem ARGS`` in this process (a subprocess per call costs seconds
    here); the environment is exactly ``env``."""
    blank = {k: None for k in os.environ if k not in env}
    result = CliRunner().invoke(main, list(args), input=stdin, env={**blank, **env})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Done(result.exit_code, result.stdout, result.stderr)


def cli_env(tmp_path: Path, server: LoopbackServer) -> dict[str, str]:
    return base_env(
        tmp_path, ELELEM_LOCAL_BASE_URL=server.url + "/v1", ELELEM_CONFIG=str(config(tmp_path))
    )


def config(tmp_path: Path) -> Path:
    path = tmp_path / "elelem.toml"
    path.write_text(
        '[providers.local]\ncompatible = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
    )
    return path


def test_embed_prints_vectors_and_reports_to_stderr(tmp_path: Path) -> None:
    with LoopbackServer(fake_openai) as server:
        done = run(cli_env(tmp_path, server), "embed", "-m", "local:e", "cat", "car")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[1.0, 0.0]\n[0.0, 1.0]\n"
    assert done.stderr == "2 vectors; 1 request, 2 tokens, cost unknown\n"


def test_embed_into_a_collection_then_similar(tmp_path: Path) -> None:
    rows = "".join(json.dumps({"id": w, "content": w, "metadata": {"w": w}}) + "\n" for w in WORDS)
    with LoopbackServer(fake_openai) as server:
        env = cli_env(tmp_path, server)
        first = run(env, "embed", "-m", "local:e", "-c", "pets", "-i", "-", "--jsonl", stdin=rows)
        again = run(env, "embed", "-c", "pets", "-i", "-", "--jsonl", stdin=rows)
        similar = run(env, "similar", "pets", "--id", "cat", "-n", "2")
        by_text = run(env, "similar", "pets", "kitten", "--json", "-n", "1")
        listed = run(env, "collections")
        sent = [json.loads(r.body)["input"] for r in server.requests]
    assert first.returncode == 0, first.stderr
    assert first.stderr == "stored 4 in pets; 1 request, 4 tokens, cost unknown\n"
    # nothing changed: nothing is embedded again (an empty run sends nothing)
    assert (
        again.stderr
        == "stored 0 in pets, 4 unchanged; 0 requests, tokens not reported, cost unknown\n"
    )
    assert similar.stdout == "0.9600\tkitten\tkitten\n0.8000\tdog\tdog\n"
    hit = json.loads(by_text.stdout)
    assert (hit["id"], hit["content"], hit["metadata"]) == ("kitten", "kitten", {"w": "kitten"})
    assert listed.stdout == "pets\tlocal:e\t2\t4\tpython\n" and listed.stderr == ""
    assert sent == [list(WORDS), ["kitten"]]


def test_embed_usage_errors_exit_2(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    no_model = run(env, "embed", "x")
    assert (no_model.returncode, no_model.stderr) == (
        2,
        "elelem: name the embedding model with -m provider:model or $ELELEM_EMBEDDING_MODEL\n",
    )
    missing = run(env, "similar", "nope", "x")
    assert (missing.returncode, missing.stderr) == (2, "elelem: no collection named 'nope'\n")


def test_hostile_stored_content_is_shown_sanitized(tmp_path: Path) -> None:
    hostile = "\x1b]8;;http://evil\x07click\x1b[2J\u202ex"
    with LoopbackServer(fake_openai) as server:
        env = cli_env(tmp_path, server)
        row = json.dumps({"id": "cat", "content": hostile}) + "\n"
        run(env, "embed", "-m", "local:e", "-c", "p", "-i", "-", "--jsonl", stdin=row)
        shown = run(env, "similar", "p", "cat")
        as_json = run(env, "similar", "p", "cat", "--json")
    assert "\x1b" not in shown.stdout and "\u202e" not in shown.stdout
    assert shown.stdout.startswith("1.0000\tcat\t")
    assert "\x1b" not in as_json.stdout and "\u202e" not in as_json.stdout
    assert json.loads(as_json.stdout)["content"] == hostile
