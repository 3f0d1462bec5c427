"""``elelem live`` against loopback Realtime and Gemini Live servers
(tests/live_servers.py): audio in and out, a tool call, the transcript
sanitized as it streams, Ctrl-C and SIGKILL keeping what arrived, and the
stored session read back by ``elelem show``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("websockets")
pytest.importorskip("openai")
pytest.importorskip("google.genai")

from cli_helpers import ELELEM, base_env
from elelem.conversation import Conversation, SQLiteStore
from elelem.conversation.events import ResponseRecord
from elelem.conversation.session import SessionNote
from elelem.shapes.live_items import wav_bytes, wav_pcm
from live_servers import (
    ScriptedServer,
    b64,
    gemini_client_message,
    kind_of_gemini,
    kind_of_openai,
    openai_client_event,
    pcm,
)

RATE = 24_000
CHUNK = pcm(100, RATE)
TOOLS = '''
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"
'''


def _call_events() -> list[dict[str, object]]:
    # https://platform.openai.com/docs/api-reference/realtime-server-events
    return [
        {"type": "input_audio_buffer.committed", "event_id": "e1", "item_id": "item_u",
         "previous_item_id": None},
        {"type": "conversation.item.input_audio_transcription.completed", "event_id": "e2",
         "item_id": "item_u", "content_index": 0, "transcript": "Weather?",
         "usage": {"type": "duration", "seconds": 0.5}},
        {"type": "response.created", "event_id": "e3", "response": {"id": "resp_1"}},
        {"type": "response.function_call_arguments.done", "event_id": "e4",
         "response_id": "resp_1", "item_id": "item_fc", "output_index": 0, "call_id": "call_1",
         "name": "get_weather", "arguments": '{"city": "Paris"}'},
        {"type": "response.done", "event_id": "e5",
         "response": {"id": "resp_1", "status": "completed",
                      "usage": {"input_tokens": 50, "output_tokens": 10}}},
    ]  # fmt: skip


def _answer_events(words: list[str], done: bool = True) -> list[dict[str, object]]:
    out: list[dict[str, object]] = [
        {"type": "response.created", "event_id": "e6", "response": {"id": "resp_2"}}
    ]
    for n, word in enumerate(words):
        out.append({"type": "response.output_audio.delta", "event_id": f"a{n}",
                    "response_id": "resp_2", "item_id": "item_a", "output_index": 0,
                    "content_index": 0, "delta": b64(CHUNK)})  # fmt: skip
        out.append({"type": "response.output_audio_transcript.delta", "event_id": f"t{n}",
                    "response_id": "resp_2", "item_id": "item_a", "output_index": 0,
                    "content_index": 0, "delta": word})  # fmt: skip
    if done:
        out.append({"type": "response.done", "event_id": "e9",
                    "response": {"id": "resp_2", "status": "completed",
                                 "usage": {"input_tokens": 80, "output_tokens": 30}}})  # fmt: skip
    return out


def _script(words: list[str], then: list[tuple[str, object]]) -> list[tuple[str, object]]:
    return [
        ("send", [{"type": "session.created", "event_id": "e0", "session": {"id": "sess"}}]),
        ("expect", "session.update"),
        ("expect", "input_audio_buffer.commit"),
        ("expect", "response.create"),
        ("send", _call_events()),
        ("expect", "conversation.item.create"),
        ("expect", "response.create"),
        ("send", _answer_events(words, done=not then)),
        *then,
    ]


def run(env: dict[str, str], *args: str) -> Any:
    """``elelem ARGS`` in this process (the signal tests start a process of
    their own); the environment is exactly ``env``."""
    from click.testing import CliRunner

    from elelem.cli import main

    blank = {k: None for k in os.environ if k not in env}
    result = CliRunner().invoke(main, list(args), env={**blank, **env})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def _setup(tmp_path: Path, server: ScriptedServer) -> dict[str, str]:
    (tmp_path / "tools.py").write_text(TOOLS)
    (tmp_path / "q.wav").write_bytes(wav_bytes(pcm(500, 16_000), 16_000))
    return base_env(tmp_path, OPENAI_API_KEY="sk-cli-live", OPENAI_BASE_URL=server.base_url + "/v1")


def _store(tmp_path: Path) -> SQLiteStore:
    return SQLiteStore(tmp_path / "home" / "elelem.db")


def test_live_audio_in_out_with_a_tool(tmp_path: Path) -> None:
    words = ["It is ", "\x1b[31msunny\x1b[0m ", "in Paris."]
    script = _script(words, [])
    with ScriptedServer([script], openai_client_event, kind_of_openai) as server:
        env = _setup(tmp_path, server)
        done = run(env, "live", "-m", "openai:gpt-realtime", "--audio-in", str(tmp_path / "q.wav"),
                   "--audio-out", str(tmp_path / "a.wav"), "--functions",
                   str(tmp_path / "tools.py"))  # fmt: skip
        assert done.exit_code == 0, done.stderr
        sent = [e for e in server.received if e["type"] == "input_audio_buffer.append"]
        # 500 ms at 16 kHz, sent at the session's 24 kHz in pieces of 100 ms.
        assert len(sent) == 5
        assert sum(len(e["audio"]) for e in sent) == len(b64(pcm(500, RATE)))
    assert done.stdout == "It is sunny in Paris.\n"
    assert 'called get_weather(city="Paris") → sunny in Paris' in done.stderr
    samples, rate, _ = wav_pcm((tmp_path / "a.wav").read_bytes())
    assert (samples, rate) == (CHUNK * 3, RATE)
    conversation_id = done.stderr.strip().splitlines()[-1].split()[-1]
    shown = run(env, "show", conversation_id)
    assert shown.exit_code == 0, shown.stderr
    assert "Weather?" in shown.stdout and "sunny" in shown.stdout and "\x1b[31m" not in shown.stdout
    assert "sk-cli-live" not in done.stderr + done.stdout + shown.stdout


def test_live_text_on_gemini(tmp_path: Path) -> None:
    script = [
        ("expect", "setup"),
        ("send", [{"setupComplete": {}}]),
        ("expect", "clientContent"),
        ("send", [{"serverContent": {"modelTurn": {"parts": [{"text": "Hi!"}]}}},
                  {"serverContent": {"turnComplete": True}}]),
        ("expect", "clientContent"),
        ("send", [{"serverContent": {"modelTurn": {"parts": [{"text": "Fine."}]}}},
                  {"serverContent": {"turnComplete": True},
                   "usageMetadata": {"promptTokenCount": 9, "responseTokenCount": 2}}]),
    ]  # fmt: skip
    server = ScriptedServer([script], gemini_client_message, kind_of_gemini, binary=True)
    with server:
        env = base_env(tmp_path, GEMINI_API_KEY="g-cli", GOOGLE_GEMINI_BASE_URL=server.base_url)
        done = run(env, "live", "-m", "google:gemini-live-2.5-flash", "--text", "Hello",
                   "--text", "How are you?")  # fmt: skip
        assert done.exit_code == 0, done.stderr
        assert server.received[0]["setup"]["generationConfig"]["responseModalities"] == ["TEXT"]
    assert done.stdout == "Hi!\nFine.\n"


def _start(tmp_path: Path, server: ScriptedServer) -> subprocess.Popen[str]:
    env = _setup(tmp_path, server)
    return subprocess.Popen(
        [ELELEM, "live", "-m", "openai:gpt-realtime", "--audio-in", str(tmp_path / "q.wav"),
         "--functions", str(tmp_path / "tools.py")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _wait_for(process: subprocess.Popen[str], text: str) -> None:
    assert process.stderr is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if text in line:
            return
    raise AssertionError(f"never printed {text!r}")


def _stalled_script() -> list[tuple[str, object]]:
    # The answer starts, then the server waits (for a message that never comes).
    return _script(["It is ", "sunny"], [("expect", "never.sent")])


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "sigkill"])
def test_live_stopped_keeps_what_arrived(tmp_path: Path, how: signal.Signals) -> None:
    server = ScriptedServer([_stalled_script()], openai_client_event, kind_of_openai)
    server.__enter__()
    try:
        process = _start(tmp_path, server)
        _wait_for(process, "called get_weather")  # the tool step is in the log: acknowledged
        assert process.stdout is not None
        assert process.stdout.read(6) == "It is "  # the answer is streaming (stdout unbuffered)
        os.kill(process.pid, how)
        process.communicate(timeout=30)
    finally:
        server.server.shutdown()
    events = Conversation.open(_store(tmp_path), _only_conversation(tmp_path)).events
    records = [e.body for e in events if isinstance(e.body, ResponseRecord)]
    assert records[0].finish == "tool-calls"
    notes = [e.body.what for e in events if isinstance(e.body, SessionNote)]
    if how == signal.SIGINT:
        assert process.returncode == 130
        assert (records[1].finish, records[1].complete) == ("aborted", False)
        assert notes == ["opened", "closed"]
    else:
        assert process.returncode == -signal.SIGKILL
        assert notes == ["opened"]


def _only_conversation(tmp_path: Path) -> str:
    (info,) = _store(tmp_path).list_conversations()
    return str(info.id)


def test_json_of_session_notes_round_trips(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "x.db")
    conversation = Conversation.create(store)
    from elelem.conversation.events import Draft

    conversation.append(Draft.of(SessionNote("rate-limits", [{"name": "tokens"}])))
    (event,) = Conversation.open(store, conversation.id).events
    assert event.kind == "session" and event.body == SessionNote(
        "rate-limits", [{"name": "tokens"}]
    )
    assert json.loads(json.dumps(event.body.detail)) == [{"name": "tokens"}]
