"""A finished answer is never formatted as text by the event loop (issue #33).

``asyncio.run`` (and ``asyncio.Runner.run``) on the main thread end by
asking ``signal.getsignal`` for their SIGINT handler; the standard library
formats that handler's repr, which holds the task's, which holds
``reprlib.repr`` of the task's result: the whole assembled answer, as text,
once per run (``elelem inspect`` of a 20 MB stream peaked at 17 MB traced
instead of 10).  The command's runs hand their result over beside the task.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli_helpers import KEY, base_env
from elelem.cli import main
from elelem.cli.inspect import inspect_recording
from elelem.recordings.loopback import LoopbackServer, anthropic_text_body, replay
from elelem.stream import AssembledResponse
from elelem.turns.engine import TurnResult


def counting_reprs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    plain: Callable[[Any], str] = reprlib.repr

    def counted(value: Any) -> str:
        if isinstance(value, (AssembledResponse, TurnResult)) or (
            isinstance(value, tuple) and any(isinstance(v, AssembledResponse) for v in value)
        ):
            seen.append(type(value).__name__)
        return plain(value)

    monkeypatch.setattr(reprlib, "repr", counted)
    return seen


def test_inspect_never_formats_a_replayed_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "answer.sse"
    path.write_bytes(anthropic_text_body("hello"))
    seen = counting_reprs(monkeypatch)
    lines = inspect_recording(str(path))
    assert lines[1]["block"]["text"] == "hello"
    assert seen == []  # before: ["tuple", "tuple"], the (result, error) outcome, twice


def test_ask_never_formats_its_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with LoopbackServer([replay(anthropic_text_body("hello"))]) as server:
        env = base_env(tmp_path, ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=server.url)
        seen = counting_reprs(monkeypatch)
        result = CliRunner().invoke(
            main, ["ask", "-m", "anthropic:claude-sonnet-4-5", "hi"], env=env
        )
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("hello\n")
    assert seen == []  # before: ["TurnResult", "TurnResult"]
