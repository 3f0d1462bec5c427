"""What looked broken in the first hour, driven through a real terminal
(pexpect spawns `elelem` on a pty; pyte draws the screen as the user sees
it): Ctrl-C at an `--approve` question or during a slow tool ends `ask` at
once with one line and exit status 130, and returns `chat` to a working
prompt; bare command groups print their help; a missing extra names the
install line.  Each process runs in its own tmp home with no inherited
ELELEM_* variable (`base_env` builds the environment from nothing)."""

from __future__ import annotations

import time
from pathlib import Path

import pexpect

from elelem.testing.servers import LoopbackServer
from test_approval_screen import QUESTION, Terminal
from test_cli_tools import MODEL, TOOLS_PY, env_for
from toolloop_wires import anthropic_calls, anthropic_text, anthropic_text_then_calls

SLOW_PY = '''
"""A tool that takes long, and says when it has started."""
import os
import time
from pathlib import Path

def slow_lookup(city: str) -> str:
    """Look a city up, slowly."""
    Path(os.environ["SLOW_MARK"]).write_text("started")
    time.sleep(30)
    return "done"
'''


def _wait_started(term: Terminal, mark: Path) -> None:
    """Pump the screen until the slow tool says it has started."""
    end = time.monotonic() + 30
    while not mark.exists():
        assert time.monotonic() < end, term.text()
        term.pump(0.05)


def _interrupt_then_chat_on(term: Terminal, seconds: float) -> float:
    """Ctrl-C, then a next message answered at the prompt, then /exit: how
    long the end took."""
    term.child.sendintr()
    term.wait_for("interrupted")
    term.pump(0.5)
    term.child.sendline("Say hello")
    term.wait_for("Hello again.", seconds=10)
    term.child.sendline("/exit")
    return _ended(term, seconds)


def _ended(term: Terminal, seconds: float) -> float:
    """Wait for the child to end (at most ``seconds``); how long it took."""
    start = time.monotonic()
    term.child.expect(pexpect.EOF, timeout=seconds)
    term.stream.feed(term.child.before or "")
    term.child.close()
    return time.monotonic() - start


def test_ctrl_c_at_an_approval_question_ends_ask_at_once(tmp_path: Path) -> None:
    path = tmp_path / "tools.py"
    path.write_text(TOOLS_PY)
    call = [("c1", "get_weather", {"city": "Paris"})]
    with LoopbackServer([anthropic_text_then_calls("Checking.", call)], lifetime=60) as server:
        args = ["ask", "-m", MODEL, "--functions", str(path), "--approve", "Weather in Paris?"]
        term = Terminal(args, env_for(tmp_path, server))
        try:
            term.wait_for(QUESTION)
            term.child.sendintr()
            took = _ended(term, 10)
        finally:
            term.child.close(force=True)
        assert len(server.requests) == 1
    assert term.child.exitstatus == 130, term.text()
    assert took < 10, term.text()  # at once: no thread left waiting on stdin
    screen = term.text()
    assert "Fatal Python error" not in screen and "Traceback" not in screen
    assert screen.count("elelem: interrupted") == 1, screen
    assert "18°C" not in screen  # refused: the tool never ran


def test_ctrl_c_during_a_slow_tool_ends_ask_at_once_saying_it_is_abandoned(
    tmp_path: Path,
) -> None:
    path = tmp_path / "slow.py"
    path.write_text(SLOW_PY)
    mark = tmp_path / "started"
    call = [("c1", "slow_lookup", {"city": "Paris"})]
    with LoopbackServer([anthropic_calls(call)], lifetime=60) as server:
        env = {**env_for(tmp_path, server), "SLOW_MARK": str(mark)}
        term = Terminal(["ask", "-m", MODEL, "--functions", str(path), "Look Paris up"], env)
        try:
            _wait_started(term, mark)
            term.child.sendintr()
            took = _ended(term, 20)
        finally:
            term.child.close(force=True)
    assert term.child.exitstatus == 130, term.text()
    assert took < 10, term.text()  # the tool sleeps 30 s: not waited for
    screen = term.text()
    assert "Traceback" not in screen
    lines = [line for line in screen.splitlines() if line.startswith("elelem:")]
    assert lines == ["elelem: interrupted (a tool still running was abandoned)"], screen


def test_ctrl_c_at_an_approval_question_returns_chat_to_a_working_prompt(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tools.py"
    path.write_text(TOOLS_PY)
    call = [("c1", "get_weather", {"city": "Paris"})]
    replies = [anthropic_text_then_calls("Checking.", call), anthropic_text("Hello again.")]
    with LoopbackServer(replies, lifetime=60) as server:
        args = ["chat", "-m", MODEL, "--functions", str(path), "--approve"]
        term = Terminal(args, env_for(tmp_path, server))
        try:
            term.wait_for("\n>\n")
            term.child.sendline("Weather in Paris?")
            term.wait_for(QUESTION)
            _interrupt_then_chat_on(term, 10)
        finally:
            term.child.close(force=True)
        assert len(server.requests) == 2
    assert term.child.exitstatus == 0, term.text()
    assert "18°C" not in term.text()


def test_ctrl_c_during_a_slow_tool_returns_chat_to_a_working_prompt(tmp_path: Path) -> None:
    path = tmp_path / "slow.py"
    path.write_text(SLOW_PY)
    mark = tmp_path / "started"
    call = [("c1", "slow_lookup", {"city": "Paris"})]
    replies = [anthropic_calls(call), anthropic_text("Hello again.")]
    with LoopbackServer(replies, lifetime=60) as server:
        env = {**env_for(tmp_path, server), "SLOW_MARK": str(mark)}
        term = Terminal(["chat", "-m", MODEL, "--functions", str(path)], env)
        try:
            term.wait_for("\n>\n")
            term.child.sendline("Look Paris up")
            _wait_started(term, mark)
            took = _interrupt_then_chat_on(term, 20)
        finally:
            term.child.close(force=True)
    assert took < 10, term.text()  # the tool sleeps 30 s: not waited for at the end either
    assert term.child.exitstatus == 0, term.text()
    assert "elelem: a tool still running was abandoned" in term.text()
