"""docs/tools.md's example runs as written, against a loopback provider."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from elelem.testing.servers import LoopbackServer
from toolloop_wires import anthropic_calls, anthropic_text

DOC = Path(__file__).resolve().parent.parent / "docs" / "tools.md"


def test_the_function_tool_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    block = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)[0]
    calls = [("toolu_1", "get_weather", {"city": "Paris"})]
    with LoopbackServer([anthropic_calls(calls), anthropic_text("It is 18°C in Paris.")]) as server:
        # Another test may have set the override (the README tour does).
        monkeypatch.delenv("ELELEM_ANTHROPIC_BASE_URL", raising=False)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-doc")
        monkeypatch.setenv("ELELEM_CONFIG", "/nonexistent/elelem.toml")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, str(DOC), "exec"), {"__name__": "tools_doc"})
    assert out.getvalue().splitlines() == ["It is 18°C in Paris.", "completed"]
    sent = json.loads(server.requests[1].body)["messages"][-1]["content"]
    assert sent == [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "18°C"}]


def test_the_testing_example_passes_under_pytest(tmp_path: Path) -> None:
    """The "Testing your agent" example is a pytest module: run it as one."""
    section = DOC.read_text(encoding="utf-8").split("## Testing your agent", 1)[1]
    (block,) = re.findall(r"```python\n(.*?)```", section.split("\n## ", 1)[0], re.S)
    module = tmp_path / "test_agent_doc.py"
    module.write_text(block, encoding="utf-8")
    env = {**os.environ, "ELELEM_CONFIG": "/nonexistent/elelem.toml"}
    # pytest loads the installed plugins' entry points, trio's hypothesis
    # plugin among them: this process sees the whole test environment, not
    # the user's packages the other processes see (tests/user_site).
    env["PYTHONPATH"] = os.pathsep.join(
        p
        for p in env.get("PYTHONPATH", "").split(os.pathsep)
        if p and p != str(Path(__file__).resolve().parent / "user_site")
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(module)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
