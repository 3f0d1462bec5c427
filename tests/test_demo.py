"""`elelem demo`: the shipped recording, and corpus recordings with --cassette."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli_helpers import EXPECTED_ANSWER, QUESTION, base_env, run
from elelem.cli.demo import recorded_tools, sample_recording, user_text
from elelem.conversation import ResponseRecord, SQLiteStore
from elelem.recordings.cassettes import load
from elelem.testing.servers import sse_body
from elelem.vocabulary import CodeExecution, WebFetch, WebSearch

STORED = re.compile(
    r"^stored in (/\S+/elelem\.db) \(temporary: removed on exit; --keep keeps it\); elelem log:$"
)
LISTED = re.compile(
    r"^c_[0-9a-f]{16}  \d{4}-\d\d-\d\d \d\d:\d\d    1 turn  anthropic:claude-sonnet-4-5  "
    + re.escape(QUESTION)
    + "$"
)


def test_demo_plays_the_sample_through_the_real_path(tmp_path: Path) -> None:
    result = run(base_env(tmp_path), "demo", "--pace", "0")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    head, tail = result.stdout.rsplit("\n\n", 1)
    assert head + "\n" == f"> {QUESTION}\n" + EXPECTED_ANSWER
    stored, listed = tail.splitlines()
    where = STORED.match(stored)
    assert where, stored
    assert not Path(where.group(1)).exists()  # the temporary store is gone
    assert LISTED.match(listed), listed
    assert not (tmp_path / "home").exists()  # the user's store was not touched


def test_demo_keep_stores_in_the_user_store(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    result = run(env, "demo", "--pace", "0", "--keep", "--citations", "full")
    assert result.returncode == 0, result.stderr
    assert "    “Height: 330 metres (with antennas)”\n" in result.stdout
    assert "stored in your conversation store; elelem log:\n" in result.stdout
    shown = run(env, "show")
    assert shown.returncode == 0
    assert shown.stdout.split("\n", 1)[1] == f"> {QUESTION}\n" + EXPECTED_ANSWER


def test_recorded_request_helpers() -> None:
    request = load(sample_recording()).interactions[0].request
    assert request is not None
    assert user_text(request.json) == QUESTION
    assert recorded_tools("anthropic_messages", request.json) == (
        WebSearch(version="web_search_20250305"),
    )
    assert recorded_tools(
        "openai_responses",
        {"tools": [{"type": "web_search"}, {"type": "code_interpreter"}, {"type": "function"}]},
    ) == (WebSearch(), CodeExecution())
    assert recorded_tools("anthropic_messages", {"tools": [{"type": "web_fetch_20250910"}]}) == (
        WebFetch(version="web_fetch_20250910"),
    )
    openai = {"input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]}
    assert user_text(openai) == "hi"
    gemini = {"contents": [{"role": "user", "parts": [{"text": "a"}, {"text": "b"}]}]}
    assert user_text(gemini) == "a\nb"
    tool_only = {
        "messages": [{"role": "user", "content": [{"type": "tool_result", "content": "x"}]}]
    }
    assert user_text(tool_only) is None


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "vercel__ai/packages__anthropic__src____fixtures____anthropic-web-search-tool.1.chunks.txt",
            [
                'searched "tech news today September 26 2025" → 10 results',
                "\n[1] The all-new Apple Ginza opens",
            ],
        ),
        (
            "vercel__ai/packages__openai__src__responses____fixtures____openai-web-search-tool.1.chunks.txt",
            [
                "\n[7] AI coding startup Vercel raises $300 million, valued at $9.3 billion — finance.yahoo.com\n"
            ],
        ),
        (
            "dcdpr__jp/crates__jp_llm__tests__fixtures__anthropic__test_multi_turn_conversation.yml",
            [
                "> Test message\n",
                "> Repeat my previous message\n",
                "→ run_me(",
                "**The secret code is: 42**",
                "   5 turns  anthropic:claude-haiku-4-5  Test message\n",
            ],
        ),
    ],
)
def test_demo_cassette(corpus: Path, tmp_path: Path, name: str, expected: list[str]) -> None:
    path = corpus / name
    if not path.is_file():
        pytest.skip(f"{name} is not in this corpus")
    result = run(base_env(tmp_path), "demo", "--pace", "0", "--cassette", str(path))
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout
    for piece in expected:
        assert piece in result.stdout


def test_demo_cassette_plays_a_gemini_interactions_recording(corpus: Path, tmp_path: Path) -> None:
    # Gemini's Interactions API is a working shape (#42): its recordings play.
    name = (
        "vercel__ai/packages__google__src__interactions____fixtures____tool-call-step1.chunks.txt"
    )
    result = run(base_env(tmp_path), "demo", "--pace", "0", "--cassette", str(corpus / name))
    assert result.returncode == 0, result.stderr
    assert '→ getWeather({"location":"San Francisco"})' in result.stdout


def _paused_recording(path: Path) -> None:
    """A HAR of one paused turn: the pause_turn response, then the request
    that continued it (the paused message last) and its answer."""
    from cli_helpers import text_frames

    def sse(frames: list[tuple[str | None, str]], stop: str) -> str:
        body = sse_body(frames).decode()
        return body.replace('"end_turn"', f'"{stop}"')

    question = {"role": "user", "content": "Search a lot"}
    first = {"model": "claude-sonnet-4-5", "max_tokens": 64, "stream": True, "messages": [question]}
    second = {**first, "messages": [question,
              {"role": "assistant", "content": [{"type": "text", "text": "Searching... "}]}]}  # fmt: skip
    entries = []
    for request, frames, stop in (
        (first, text_frames("Searching... ", "msg_p1"), "pause_turn"),
        (second, text_frames("Found it.", "msg_p2"), "end_turn"),
    ):
        entries.append({
            "request": {"method": "POST", "url": "https://api.anthropic.com/v1/messages",
                        "headers": [], "postData": {"text": json.dumps(request)}},
            "response": {"status": 200, "headers": [{"name": "content-type",
                         "value": "text/event-stream"}],
                         "content": {"mimeType": "text/event-stream", "text": sse(frames, stop)}},
        })  # fmt: skip
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": entries}}), encoding="utf-8")


def test_demo_cassette_of_a_paused_turn_makes_exactly_the_recorded_requests(
    tmp_path: Path,
) -> None:
    path = tmp_path / "paused.har"
    _paused_recording(path)
    env = base_env(tmp_path)
    result = run(env, "demo", "--pace", "0", "--keep", "--cassette", str(path))
    assert result.returncode == 0, result.stderr
    assert "recorded error" not in result.stdout  # a third request would get one
    assert "Searching... " in result.stdout and "Found it." in result.stdout
    store = SQLiteStore(tmp_path / "home" / "elelem.db")
    try:
        (info,) = store.list_conversations()
        events = store.load(info.id)
    finally:
        store.close()
    records = [e.body for e in events if isinstance(e.body, ResponseRecord)]
    # One response per recorded interaction: the pause was not continued by a
    # request of elelem's own; the recorded continuation was played instead.
    assert [(r.response_id, r.finish) for r in records] == [
        ("msg_p1", "paused"),
        ("msg_p2", "stop"),
    ]
