"""``-m test``: every command runs with no key and no network, and the same
prompt gets the same answer: ``ask`` (reasoning, a citation), ``--functions``
(each tool called once), ``--mcp`` (each listed tool of a real MCP server
called once, with arguments from its schema), ``chat``, and ``serve``'s chat
(the page's stream).  Each process runs in its own tmp home with no
inherited ELELEM_* variable or key."""

from __future__ import annotations

import json
import sys
import urllib.request
import wave
from pathlib import Path

import pytest

from cli_helpers import base_env, run, serving

HERE = Path(__file__).resolve().parent

TOOLS = '''
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"18°C in {city}"
'''

ANSWER = """\
thinking: The test model answers without a key: it repeats the prompt. (11 words)
Test answer to: Hello there[1]

[1] Test source — example.com
    https://example.com/test-source

usage: 9 in · 22 out · $0.00
"""


def test_ask_with_the_test_model_needs_no_key(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    first = run(env, "ask", "-m", "test", "Hello there")
    again = run(env, "ask", "-m", "test", "Hello there")
    assert first.returncode == 0, first.stderr
    assert first.stdout == again.stdout == ANSWER
    log = run(env, "log").stdout.splitlines()
    assert len(log) == 2 and all("test:test-model" in line for line in log)


def test_functions_with_the_test_model_call_each_tool_once(tmp_path: Path) -> None:
    path = tmp_path / "tools.py"
    path.write_text(TOOLS)
    done = run(base_env(tmp_path), "ask", "-m", "test", "--functions", str(path), "Weather?")
    assert done.returncode == 0, done.stderr
    assert 'The tools answered: {"get_weather": "18°C in a"}[1]' in done.stdout
    calls = [line for line in done.stderr.splitlines() if line.startswith("called ")]
    assert calls == ['called get_weather(city="a") → 18°C in a']


def test_mcp_with_the_test_model_calls_each_listed_tool_once(tmp_path: Path) -> None:
    server = f"{sys.executable} {HERE / 'mcp_weather_server.py'}"
    env = {**base_env(tmp_path), "PYTHONPATH": str(HERE)}
    done = run(env, "ask", "-m", "test", "--mcp", server, "Weather?")
    calls = sorted(
        line.partition(" → ")[0] for line in done.stderr.splitlines() if line.startswith("called ")
    )
    # Every tool offered, each once, arguments built from their schemas: the
    # weather server's own, and read_resource, which elelem offers for a
    # server with resources (the user sees it among the tools offered).
    assert (
        "thinking: Tools are offered (get_weather, radar, snapshot, die, read_resource): "
        "I call each once. (12 words)"
    ) in done.stdout.splitlines()
    assert calls == [
        'called die(reason="a")',
        'called get_weather(city="a")',
        'called radar(city="a")',
        'called read_resource(uri="a")',
        'called snapshot(city="a")',
    ]


def test_chat_with_the_test_model(tmp_path: Path) -> None:
    done = run(base_env(tmp_path), "chat", "-m", "test", stdin="Hello there\n/exit\n")
    assert done.returncode == 0, done.stderr
    assert "Test answer to: Hello there[1]" in done.stdout


def test_serves_chat_with_the_test_model(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    with serving(env, "-m", "test") as (base, token):
        request = urllib.request.Request(
            f"{base}/api/chat?token={token}",
            data=json.dumps({"text": "Hello there"}).encode(),
            headers={"content-type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            chunks = [
                json.loads(line[6:])
                for line in response.read().decode().splitlines()
                if line.startswith("data: {")
            ]
    kinds = [c["type"] for c in chunks]
    assert "reasoning-delta" in kinds and "source-url" in kinds, kinds
    text = "".join(c["delta"] for c in chunks if c["type"] == "text-delta")
    assert text == "Test answer to: Hello there"
    assert chunks[-1]["type"] == "finish"


def test_embed_and_similar_with_the_test_model(tmp_path: Path) -> None:
    from elelem.cli.testmodel import test_vector

    env = base_env(tmp_path)
    done = run(env, "embed", "-m", "test", "hello world", "bye")
    assert done.returncode == 0, done.stderr
    vectors = [json.loads(line) for line in done.stdout.splitlines()]
    assert vectors == [
        [pytest.approx(v, abs=1e-6) for v in test_vector("hello world")],
        [pytest.approx(v, abs=1e-6) for v in test_vector("bye")],
    ]
    assert done.stderr == "2 vectors; 1 request, 3 tokens, $0.00\n"
    rows = tmp_path / "rows.txt"
    rows.write_text("cats purr\ndogs bark\n")
    stored = run(env, "embed", "-m", "test", "-i", str(rows), "-c", "pets")
    assert stored.returncode == 0, stored.stderr
    found = run(env, "similar", "pets", "dogs bark")
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines()[0].startswith("1.0000\t")


def test_speak_with_the_test_model(tmp_path: Path) -> None:
    out = tmp_path / "out.wav"
    done = run(
        base_env(tmp_path),
        "speak",
        "-m",
        "test",
        "--format",
        "wav",
        "-o",
        str(out),
        "one two three",
    )
    assert done.returncode == 0, done.stderr
    with wave.open(str(out)) as audio:
        assert (audio.getnchannels(), audio.getframerate(), audio.getnframes()) == (1, 8000, 2400)
    refused = run(base_env(tmp_path), "speak", "-m", "test", "-o", str(out), "hi")
    assert refused.returncode == 1  # the (test) provider refused it
    assert refused.stderr == (
        "elelem: invalid-request: test 400 invalid_request_error: "
        "the test speech model speaks WAV only: --format wav\n"
    )
