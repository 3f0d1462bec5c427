"""`elelem chat` driven in a real pseudo-terminal: a question, an answer
interrupted with Ctrl-C and kept, and the conversation continued."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pexpect
from prompt_toolkit.history import FileHistory

from cli_helpers import ELELEM, KEY, MODEL, QUESTION, base_env, run, text_frames, text_reply
from elelem.cli.demo import paced, sample_recording
from elelem.recordings.cassettes import load
from elelem.testing.servers import LoopbackServer, Pause, Reply, Send, sse_body

PARTIAL = "Its iron lattice was"


def stalled_reply() -> Reply:
    """An answer that sends a few words, then stalls until interrupted."""
    body = sse_body(text_frames(PARTIAL, "msg_03Stall", finished=False))
    return Reply(200, {"content-type": "text/event-stream"}, (Send(body), Pause(60.0)))


PROMPT = r"\x1b\[\?2004h"
"""prompt-toolkit turns bracketed paste on each time it waits for a message."""


def strip(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\r", "", text)


def test_chat_question_interrupt_and_continue(tmp_path: Path) -> None:
    replies = [
        paced(load(sample_recording()).interactions[0], 0.002),
        stalled_reply(),
        Reply(
            200,
            {"content-type": "text/event-stream"},
            (Send(text_reply("Wrought iron, 18,038 pieces.")),),
        ),
    ]
    with LoopbackServer(replies, lifetime=120.0) as server:
        env = {
            **base_env(tmp_path),
            "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": KEY,
            "TERM": "xterm-256color",
            "PROMPT_TOOLKIT_NO_CPR": "1",
        }
        child = pexpect.spawn(
            ELELEM,
            ["chat", "-m", MODEL, "--web-search"],
            env=env,
            dimensions=(40, 120),
            encoding="utf-8",
            timeout=30,
        )
        try:
            child.expect(
                r"chat with anthropic:claude-sonnet-4-5 in conversation (c_[0-9a-f]{16}) \(Ctrl-C stops an answer, Ctrl-D leaves, /help for more\)"
            )
            cid = child.match.group(1)
            child.expect(PROMPT)

            # 1. A question, answered with a web search and footnotes.
            child.sendline(QUESTION)
            child.expect_exact("usage: 9,873 in · 418 out · 1 web search · $0.0459")
            answer = strip(child.before)
            assert 'searched "Eiffel Tower height and completion date" → 5 results' in answer
            assert "[1] Eiffel Tower - Wikipedia — en.wikipedia.org" in answer
            assert "https://www.britannica.com/topic/Eiffel-Tower-Paris-France" in answer
            child.expect(PROMPT)

            # 2. An answer interrupted with Ctrl-C: what arrived stays.
            child.sendline("What is it made of?")
            child.expect_exact(PARTIAL)
            child.sendintr()
            child.expect_exact("interrupted: kept what arrived")
            assert PARTIAL in strip(child.before)
            child.expect(PROMPT)

            # 3. The conversation goes on, the interrupted answer in its history.
            child.sendline("Go on, please.")
            child.expect_exact("Wrought iron, 18,038 pieces.")
            child.expect(PROMPT)
            child.sendeof()
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
        assert child.exitstatus == 0, strip(child.before or "")

    third = json.loads(server.requests[2].body)
    roles = [m["role"] for m in third["messages"]]
    assert roles == ["user", "assistant", "user", "assistant", "user"]
    assert third["messages"][3]["content"] == [{"type": "text", "text": PARTIAL}]
    assert third["messages"][4]["content"][-1]["text"] == "Go on, please."

    shown = run(env, "show", cid)
    assert shown.returncode == 0
    assert f"> What is it made of?\n{PARTIAL}\ninterrupted: kept what arrived\n" in shown.stdout
    assert shown.stdout.endswith(
        "> Go on, please.\nWrought iron, 18,038 pieces.\n\nusage: 120 in · 9 out · $0.0005\n"
    )
    history = FileHistory(str(tmp_path / "home" / "chat_history"))
    assert list(history.load_history_strings())[:3] == [
        "Go on, please.",
        "What is it made of?",
        QUESTION,
    ]


def test_ask_interrupted_in_a_terminal_exits_130_and_keeps_the_answer(tmp_path: Path) -> None:
    with LoopbackServer([stalled_reply()], lifetime=60.0) as server:
        env = {
            **base_env(tmp_path),
            "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": KEY,
            "TERM": "xterm-256color",
        }
        child = pexpect.spawn(
            ELELEM,
            ["ask", "-m", MODEL, "What is it made of?"],
            env=env,
            dimensions=(30, 100),
            encoding="utf-8",
            timeout=30,
        )
        try:
            child.expect_exact(PARTIAL)
            child.sendintr()
            child.expect_exact("interrupted: kept what arrived")
            child.expect_exact("elelem: interrupted")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
    assert child.exitstatus == 130
    shown = run(env, "show")
    assert shown.stdout.endswith(
        f"> What is it made of?\n{PARTIAL}\ninterrupted: kept what arrived\n\nusage: 120 in · 1 out · $0.0004\n"
    )
