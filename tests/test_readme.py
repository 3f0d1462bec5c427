"""The README's tour runs as written (offline, against a loopback server)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_tour_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 2  # the live five lines at the top (test_first_hour_docs.py), the tour
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    # The tour points os.environ at its loopback server; recording the variable
    # here makes monkeypatch remove it afterwards, so no later test is sent there.
    monkeypatch.setenv("ELELEM_ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(blocks[1], str(README), "exec"), {"__name__": "readme_tour"})
    assert out.getvalue().splitlines() == [
        "reasoning signed: True",
        "hosted: web_search started ",
        "hosted: web_search completed 5 results",
        "cited: https://en.wikipedia.org/wiki/Eiffel_Tower",
        "cited: https://www.toureiffel.paris/en/the-monument/key-figures",
        "cited: https://www.toureiffel.paris/en/the-monument/history",
        "cited: https://www.toureiffel.paris/en/the-monument/key-figures",
        "cited: https://www.britannica.com/topic/Eiffel-Tower-Paris-France",
        "cited: https://en.wikipedia.org/wiki/Eiffel_Tower",
        "{'web_search': 1}",
        "stop",
        "I'll look up the current figures.",
        "",
        "**Height.** The tower is  10291",
        "$0.0459",
        "The tower is 330 metres tall.",
        "rate limit 1.0",
        "{'name': 'Eiffel Tower'}",
        "{'name': 'Eiffel Tower', 'height_m': 330}",
        "Tower(name='Eiffel Tower', height_m=330)",
    ]
