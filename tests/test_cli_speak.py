"""``elelem speak`` (issue #30): streamed speech written to a file or stdout
as it arrives, never to a terminal, against a loopback ``audio/speech``.

The answers are written from OpenAI's API reference (no recording exists),
as in tests/test_speech_stream.py, whose gate proves the ordering here too:
the server sends the rest of the audio only once the file already holds the
first piece.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pexpect
from click.testing import CliRunner, Result

from cli_helpers import ELELEM, base_env
from elelem.cli import main
from elelem.testing.servers import Await, LoopbackServer, Pause, Reply, Send, status
from test_speech_stream import DONE, DONE_USAGE, KEY, PIECES, delta

MODEL = "openai:gpt-4o-mini-tts"


def speak(env: dict[str, str], *args: str, stdin: str | None = None) -> Result:
    blank = {k: None for k in os.environ if k not in env}
    return CliRunner().invoke(main, ["speak", *args], input=stdin, env={**blank, **env})


def env_of(tmp_path: Path, server: LoopbackServer) -> dict[str, str]:
    return base_env(tmp_path, OPENAI_BASE_URL=server.url + "/v1", OPENAI_API_KEY=KEY)


def test_audio_reaches_the_file_before_the_body_ends(tmp_path: Path) -> None:
    gate = threading.Event()
    out = tmp_path / "hello.mp3"
    script = (Send(PIECES[0]), Await(gate), Pause(0.02), Send(PIECES[1]), Send(PIECES[2]))
    reply = Reply(200, {"content-type": "audio/mpeg"}, script, chunked=True)
    results: list[Result] = []
    with LoopbackServer([reply]) as server:
        env = env_of(tmp_path, server)
        args = ("-m", MODEL, "Hello", "there.", "-o", str(out), "--voice", "coral")
        worker = threading.Thread(target=lambda: results.append(speak(env, *args)))
        worker.start()
        # The gate opens only when the file holds the first piece: a command
        # that wrote at the end would leave it shut (and the server resets).
        deadline = time.monotonic() + 10
        while not (out.exists() and out.read_bytes() == PIECES[0]):
            assert time.monotonic() < deadline and worker.is_alive(), results
            time.sleep(0.005)
        gate.set()
        worker.join(timeout=20)
        (sent,) = server.requests
    (result,) = results
    assert result.exit_code == 0, result.stderr
    assert out.read_bytes() == b"".join(PIECES)
    assert result.stdout == ""
    size = sum(map(len, PIECES))
    assert result.stderr == (
        f"{size} bytes of audio/mpeg to {out}; usage not reported, cost unknown\n"
    )
    assert json.loads(sent.body) == {
        "model": "gpt-4o-mini-tts",
        "input": "Hello there.",
        "voice": "coral",
        "response_format": "mp3",
    }


def test_sse_to_stdout_with_usage_and_cost(tmp_path: Path) -> None:
    body = delta(PIECES[0]) + delta(PIECES[1]) + DONE
    reply = status(200, body, content_type="text/event-stream")
    with LoopbackServer([reply]) as server:
        args = ("-m", MODEL, "--format", "wav", "--stream-format", "sse", "--speed", "1.5")
        result = speak(env_of(tmp_path, server), *args, stdin="Piped text.\n")
        (sent,) = server.requests
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes == PIECES[0] + PIECES[1]
    size = len(PIECES[0]) + len(PIECES[1])
    assert result.stderr == (
        f"{size} bytes of audio/wav to stdout; {DONE_USAGE['input_tokens']} input and "
        f"{DONE_USAGE['output_tokens']} output tokens, $0.0014\n"
    )
    body_sent: Any = json.loads(sent.body)
    assert (body_sent["input"], body_sent["stream_format"], body_sent["speed"]) == (
        "Piped text.\n",
        "sse",
        1.5,
    )


def test_a_refusal_before_any_audio_leaves_no_file(tmp_path: Path) -> None:
    refusal = status(400, b'{"error": {"message": "voice not found", "type": "invalid_request"}}')
    out = tmp_path / "never.mp3"
    with LoopbackServer([refusal]) as server:
        result = speak(env_of(tmp_path, server), "-m", MODEL, "Hi", "-o", str(out))
    assert result.exit_code == 1
    assert result.stderr.startswith("elelem: ") and result.stderr.count("\n") == 1
    assert "voice not found" in result.stderr and not out.exists()


def test_a_break_after_some_audio_says_how_much_the_file_holds(tmp_path: Path) -> None:
    body = delta(PIECES[0])  # no speech.audio.done: the answer is incomplete
    out = tmp_path / "part.mp3"
    with LoopbackServer([status(200, body, content_type="text/event-stream")]) as server:
        args = ("-m", MODEL, "Hi", "-o", str(out), "--stream-format", "sse")
        result = speak(env_of(tmp_path, server), *args)
    assert result.exit_code != 0
    first, second = result.stderr.splitlines()
    assert first == f"{out} holds only the first {len(PIECES[0])} bytes of the audio"
    assert second.startswith("elelem: ")
    assert out.read_bytes() == PIECES[0]


def test_a_terminal_stdout_is_refused(tmp_path: Path) -> None:
    env = base_env(tmp_path, OPENAI_API_KEY=KEY, OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    child = pexpect.spawn(ELELEM, ["speak", "-m", MODEL, "Hi"], env=env, encoding="utf-8")
    child.expect(pexpect.EOF, timeout=30)
    child.close()
    assert child.exitstatus == 2
    assert "elelem: audio is data: redirect stdout or use -o FILE" in (child.before or "")
