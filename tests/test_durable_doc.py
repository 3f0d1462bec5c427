"""docs/durable.md's Python examples run as written: against the Temporal
development server of the tests, a loopback Anthropic server and DBOS on
SQLite, in a folder holding the ``mypackage.tools`` they name."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

pytest.importorskip("temporalio")
pytest.importorskip("dbos")

from elelem.testing.servers import LoopbackServer
from toolloop_wires import WIRES

DOC = Path(__file__).resolve().parent.parent / "docs" / "durable.md"
TOOL = 'def get_weather(city: str) -> str:\n    """The weather in a city."""\n    return "18°C"\n'


def _examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def _run(code: str, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp / "mypackage").mkdir(exist_ok=True)
    (tmp / "mypackage" / "__init__.py").write_text("")
    (tmp / "mypackage" / "tools.py").write_text(TOOL)
    monkeypatch.chdir(tmp)
    monkeypatch.syspath_prepend(str(tmp))
    wire = WIRES[0]
    call = ("toolu_01", "get_weather", {"city": "Paris"})
    with LoopbackServer([wire.calls([call], 1), wire.text("It is 18°C in Paris.", 2)]) as server:
        for key, value in wire.env(server).items():
            monkeypatch.setenv(key, value)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(DOC), "exec"), {"__name__": "__doc_example__"})
        assert len(server.requests) == 2
    return out.getvalue()


def test_the_doc_has_its_two_examples() -> None:
    assert len(_examples()) == 2


def test_the_temporal_example_runs(
    temporal_address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = _examples()[0].replace("127.0.0.1:7233", temporal_address)
    assert _run(code, tmp_path, monkeypatch) == "It is 18°C in Paris.\n"


def test_the_dbos_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _run(_examples()[1], tmp_path, monkeypatch) == "It is 18°C in Paris.\n"
