"""The Python examples of docs/live.md run as written, offline, against the
loopback Realtime and Gemini Live servers of tests/live_servers.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("websockets")
pytest.importorskip("openai")
pytest.importorskip("google.genai")

from elelem.conversation import Conversation, open_store
from live_servers import (
    ScriptedServer,
    gemini_client_message,
    kind_of_gemini,
    kind_of_openai,
    openai_client_event,
    pcm,
)
from test_live import OPENAI_RATE, _check_openai_log, openai_script

DOC = Path(__file__).resolve().parent.parent / "docs" / "live.md"


def _examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ELELEM_CONFIG", str(tmp_path / "no-config.toml"))
    monkeypatch.setenv("ELELEM_HOME", str(tmp_path / "home"))
    return tmp_path


def test_the_async_example(workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    (workdir / "question.pcm").write_bytes(pcm(200, OPENAI_RATE))
    with ScriptedServer([openai_script()], openai_client_event, kind_of_openai) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-doc")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url + "/v1")
        exec(compile(_examples()[0], str(DOC), "exec"), {"__name__": "__main__"})
        assert server.received[0]["session"]["instructions"] == "Answer briefly."
    store = open_store("live.db")
    (info,) = store.list_conversations()
    _check_openai_log(Conversation.open(store, info.id), server)
    printed = capsys.readouterr().out
    assert printed.startswith("It is sunny in Paris.\n")


def test_the_blocking_example(workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    script = [
        ("expect", "setup"),
        ("send", [{"setupComplete": {}}]),
        ("expect", "clientContent"),
        ("send", [{"serverContent": {"modelTurn": {"parts": [{"text": "Hello"}]}}},
                  {"serverContent": {"modelTurn": {"parts": [{"text": ", there."}]}}},
                  {"serverContent": {"turnComplete": True},
                   "usageMetadata": {"promptTokenCount": 4, "responseTokenCount": 3}}]),
    ]  # fmt: skip
    server = ScriptedServer([script], gemini_client_message, kind_of_gemini, binary=True)
    with server:
        monkeypatch.setenv("GEMINI_API_KEY", "g-doc")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.base_url)
        exec(compile(_examples()[1], str(DOC), "exec"), {"__name__": "__main__"})
    assert capsys.readouterr().out == "Hello, there.\n"
    store = open_store("live.db")
    (info,) = store.list_conversations()
    assert "Hello, there." in Conversation.open(store, info.id).text


def test_every_example_is_run() -> None:
    assert len(_examples()) == 2
