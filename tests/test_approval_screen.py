"""--approve in a real terminal, read off the screen as the user sees it
(pyte emulates the terminal): the question stays on screen, not erased by the
live region's redraw, until it is answered, in `ask` and in `chat`."""

from __future__ import annotations

import time
from pathlib import Path

import pexpect
import pyte

from cli_helpers import ELELEM
from elelem.testing.servers import LoopbackServer
from test_cli_tools import MODEL, TOOLS_PY, env_for
from toolloop_wires import anthropic_text, anthropic_text_then_calls

QUESTION = 'run get_weather(city="Paris")? [y/N]'
ROWS, COLS = 30, 100


class Terminal:
    """A child process on a pty, and the screen its output draws."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.screen = pyte.Screen(COLS, ROWS)
        self.stream = pyte.Stream(self.screen)
        self.child = pexpect.spawn(
            ELELEM,
            args,
            # pyte answers no cursor-position request: prompt-toolkit is told.
            env={**env, "TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1"},
            encoding="utf-8",
            dimensions=(ROWS, COLS),
            timeout=30,
        )

    def pump(self, seconds: float) -> None:
        """Draw what the child writes for ``seconds``."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            try:
                self.stream.feed(self.child.read_nonblocking(65536, timeout=min(left, 0.05)))
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF:
                return

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    def wait_for(self, wanted: str, seconds: float = 30) -> None:
        end = time.monotonic() + seconds
        while wanted not in self.text():
            assert time.monotonic() < end, f"{wanted!r} never shown:\n{self.text()}"
            self.pump(0.05)


def _approve_on_screen(args: list[str], tmp_path: Path, after: str) -> str:
    path = tmp_path / "tools.py"
    path.write_text(TOOLS_PY)
    call = [("c1", "get_weather", {"city": "Paris"})]
    replies = [anthropic_text_then_calls("Let me check the weather.", call), anthropic_text(after)]
    with LoopbackServer(replies, lifetime=120) as server:
        term = Terminal([*args, "--functions", str(path), "--approve"], env_for(tmp_path, server))
        try:
            if args[0] == "chat":
                term.wait_for("\n>\n")  # the prompt, alone on its line
                term.child.sendline("Weather in Paris?")
            term.wait_for(QUESTION)
            # A live region redraws ten times a second: a second later the
            # question must still be there, with the text streamed before it.
            term.pump(1.0)
            screen = term.text()
            assert QUESTION in screen, screen
            assert "Let me check the weather." in screen, screen
            term.child.sendline("y")
            term.wait_for(after)
            if args[0] == "chat":
                term.wait_for("\n>\n")  # the next prompt
                term.child.sendline("/exit")
            term.child.expect(pexpect.EOF)
        finally:
            term.child.close(force=True)
        assert term.child.exitstatus == 0
        assert len(server.requests) == 2
    return screen


def test_ask_approval_question_stays_on_screen(tmp_path: Path) -> None:
    screen = _approve_on_screen(["ask", "-m", MODEL, "Weather in Paris?"], tmp_path, "18°C.")
    assert screen.index("Let me check the weather.") < screen.index(QUESTION)


def test_chat_approval_question_stays_on_screen(tmp_path: Path) -> None:
    screen = _approve_on_screen(["chat", "-m", MODEL], tmp_path, "It is 18°C.")
    assert screen.index("Let me check the weather.") < screen.index(QUESTION)


def test_a_quiet_indicator_shows_until_the_first_byte(tmp_path: Path) -> None:
    """At a terminal, 'waiting for anthropic…' is on screen while the
    provider says nothing, and gone once the answer arrives."""
    from cli_helpers import text_reply
    from elelem.recordings.loopback import Pause, Reply, Send

    slow = Reply(200, {"content-type": "text/event-stream"}, (Pause(2.0), Send(text_reply("Hi."))))
    with LoopbackServer([slow], lifetime=60) as server:
        term = Terminal(["ask", "-m", MODEL, "hello"], env_for(tmp_path, server))
        try:
            term.wait_for("waiting for anthropic…", seconds=10)
            term.wait_for("Hi.")
            term.child.expect(pexpect.EOF)
            term.stream.feed(term.child.before or "")
        finally:
            term.child.close(force=True)
    assert term.child.exitstatus == 0
    assert "waiting for" not in term.text()
