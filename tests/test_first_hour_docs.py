"""Getting started as the README tells it: the five live lines at its top
run (here against a loopback server speaking Anthropic's wire), Install comes
before the tour and Performance after it, no install hint points at an
index elelem is not on, and ``make demo`` installs only the ``cli`` extra in
a virtualenv of its own, then says what to do next."""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
from pathlib import Path

import pytest

from elelem.testing.servers import LoopbackServer, anthropic_text_body, replay

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_five_live_lines_at_the_top_run(monkeypatch: pytest.MonkeyPatch) -> None:
    first = re.findall(r"```python\n(.*?)```", README, re.S)[0]
    assert len(first.strip().splitlines()) == 4  # with the blank line: five
    body = anthropic_text_body("The tower is ", "330 metres tall.")
    with LoopbackServer([replay(body)]) as server:
        monkeypatch.setenv("ELELEM_ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-readme")
        monkeypatch.setenv("ELELEM_CONFIG", "/nonexistent/config.toml")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(first, "README.md", "exec"), {"__name__": "readme_top"})
        (sent,) = server.requests
    assert out.getvalue() == "The tower is 330 metres tall.\n"
    assert b'"model":"claude-sonnet-4-5"' in sent.body


def test_install_comes_first_and_performance_after_the_tour() -> None:
    headings = re.findall(r"^## (.+)$", README, re.M)
    assert headings.index("Install") < headings.index("A short tour of the public API")
    assert headings.index("A short tour of the public API") < headings.index("Performance")
    install = README.split("## Install", 1)[1].split("\n## ", 1)[0]
    for way in ("pip install -e '.[cli,web]'", "@ git+URL", "pipx install '.[cli,web]'"):
        assert way in install


def test_no_install_hint_points_at_an_index_elelem_is_not_on() -> None:
    hint = re.compile(r"pip install '?elelem\[[^]]*\]'?(?! @ git)")
    places = [*(ROOT / "src").rglob("*.py"), ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    found = [
        f"{path.relative_to(ROOT)}: {m.group(0)}"
        for path in places
        for m in hint.finditer(path.read_text(encoding="utf-8"))
        if path.name != "errors.py"  # install_line's docstring names the index form it avoids
    ]
    assert found == []


def test_make_demo_installs_only_the_cli_extra_and_says_what_next(tmp_path: Path) -> None:
    venv = tmp_path / "demo-venv"
    planned = subprocess.run(
        ["make", "-n", "demo", f"DEMO_VENV={venv}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    installs = [
        line
        for line in planned.splitlines()
        if "pip install" in line and not line.startswith("echo")
    ]
    assert installs == [f"{venv}/bin/python -m pip install --quiet -e '.[cli]'"]
    assert f"{venv}/bin/elelem demo" in planned
    assert "Next steps" in planned and 'elelem -m test \\"Hello\\"' in planned
