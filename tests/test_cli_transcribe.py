"""``elelem transcribe`` (issue #30): the text printed, sanitized, as it is
heard, against a loopback ``audio/transcriptions``.

The answers are written from OpenAI's API reference (no recording exists),
as in tests/test_transcribe_stream.py, whose gate proves the ordering here
too: the server sends the rest only once the command's stdout shows the
first piece.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

from click.testing import CliRunner, Result

from cli_helpers import ELELEM, base_env
from elelem.cli import main
from elelem.testing.servers import Await, LoopbackServer, Pause, Reply, Send, status
from test_transcribe_stream import DONE, KEY, PIECES, USAGE, VOICE, delta, event, fields

MODEL = "openai:gpt-4o-transcribe"
AUDIO = VOICE.source.blob.data  # type: ignore[union-attr]


def transcribe(env: dict[str, str], *args: str) -> Result:
    blank = {k: None for k in os.environ if k not in env}
    return CliRunner().invoke(main, ["transcribe", *args], env={**blank, **env})


def env_of(tmp_path: Path, server: LoopbackServer) -> dict[str, str]:
    return base_env(tmp_path, OPENAI_BASE_URL=server.url + "/v1", OPENAI_API_KEY=KEY)


def test_text_is_printed_sanitized_before_the_body_ends(tmp_path: Path) -> None:
    wav = tmp_path / "voice.wav"
    wav.write_bytes(AUDIO)
    gate = threading.Event()
    hostile = " \x1b]52;c;cHduZWQ=\x07\x1b[31mred"
    script = (
        Send(delta(PIECES[0])),
        Await(gate),
        Pause(0.02),
        Send(delta(hostile) + delta(PIECES[2])),
        Send(DONE),
    )
    reply = Reply(200, {"content-type": "text/event-stream"}, script, chunked=True)
    with LoopbackServer([reply]) as server:
        argv = [ELELEM, "transcribe", str(wav), "-m", MODEL, "--language", "en"]
        env = env_of(tmp_path, server)
        with subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as p:
            assert p.stdout is not None and p.stderr is not None
            # The gate opens only once stdout shows the first piece: a
            # command that printed at the end would leave it shut.
            first = p.stdout.read(len(PIECES[0]))
            gate.set()
            rest, err = p.stdout.read(), p.stderr.read()
            assert p.wait(timeout=30) == 0, err
        (sent,) = server.requests
    assert first == PIECES[0].encode()
    assert rest == b" red general.\n"
    assert err == b"120 input and 30 output tokens, $0.0010\n"
    form = fields(sent.body, sent.headers["content-type"])
    assert (form["stream"], form["language"], form["file"]) == (b"true", b"en", AUDIO)


def test_no_stream_json_is_one_ascii_object(tmp_path: Path) -> None:
    wav = tmp_path / "voice.wav"
    wav.write_bytes(AUDIO)
    answer = {"text": "Hé \x1b[2J", "usage": USAGE}
    with LoopbackServer([status(200, json.dumps(answer).encode())]) as server:
        result = transcribe(
            env_of(tmp_path, server), str(wav), "-m", MODEL, "--no-stream", "--json"
        )
        (sent,) = server.requests
    assert result.exit_code == 0, result.stderr
    assert "stream" not in fields(sent.body, sent.headers["content-type"])
    assert result.stdout.isascii() and "\x1b" not in result.stdout
    assert json.loads(result.stdout) == {
        "text": "Hé \x1b[2J",
        "usage": USAGE,
        "cost": None,
        "cost_unknown": [],
        "request_id": None,
        "raw": answer,
    }
    assert result.stderr == "120 input and 30 output tokens, cost unknown\n"


def test_streamed_json_holds_the_cost(tmp_path: Path) -> None:
    wav = tmp_path / "voice.wav"
    wav.write_bytes(AUDIO)
    body = delta(PIECES[0]) + event({"type": "transcript.text.done", "text": "Hi", "usage": USAGE})
    with LoopbackServer([status(200, body, content_type="text/event-stream")]) as server:
        result = transcribe(env_of(tmp_path, server), str(wav), "-m", MODEL, "--json")
    assert result.exit_code == 0, result.stderr
    row = json.loads(result.stdout)
    assert (row["text"], row["cost"], row["cost_unknown"]) == ("Hi", "0.00095", [])


def test_a_fifo_and_a_missing_model_are_refused_before_any_request(tmp_path: Path) -> None:
    fifo = tmp_path / "audio.wav"
    os.mkfifo(fifo)
    with LoopbackServer([]) as server:
        env = env_of(tmp_path, server)
        refused = transcribe(env, str(fifo), "-m", MODEL)
        unnamed = transcribe(env, str(fifo))
        assert server.requests == []
    assert refused.exit_code == 2
    assert refused.stderr == f"elelem: {fifo}: not a regular file (a FIFO)\n"
    assert unnamed.exit_code == 2
    assert "ELELEM_TRANSCRIBE_MODEL" in unnamed.stderr
