"""`elelem chat` in a real pseudo-terminal: a bracketed paste is one message,
slash commands act and are never sent, /model switches provider mid-
conversation, and Ctrl-C mid-stream shows the partial reply exactly once."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pexpect
import pyte

from cli_helpers import ELELEM, KEY, MODEL, base_env, text_frames, text_reply
from elelem.testing.servers import LoopbackServer, Pause, Reply, Send, replay, sse_body
from test_chat import PROMPT, strip

PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        **base_env(tmp_path),
        "ANTHROPIC_API_KEY": KEY,
        "TERM": "xterm-256color",
        "PROMPT_TOOLKIT_NO_CPR": "1",
        **extra,
    }


@contextmanager
def chat(env: dict[str, str], *args: str, rows: int = 40) -> Iterator[pexpect.spawn]:
    child = pexpect.spawn(
        ELELEM,
        ["chat", "-m", MODEL, *args],
        env=env,
        dimensions=(rows, 120),
        encoding="utf-8",
        timeout=30,
    )
    try:
        child.expect(PROMPT)
        yield child
        child.sendeof()
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, strip(child.before or "")


def _user_texts(body: bytes) -> list[str]:
    messages = json.loads(body)["messages"]
    return [
        part["text"]
        for m in messages
        if m["role"] == "user"
        for part in m["content"]
        if part["type"] == "text"
    ]


def test_a_pasted_block_of_three_lines_is_one_message(tmp_path: Path) -> None:
    with (
        LoopbackServer([replay(text_reply("Three lines read."))], lifetime=60) as server,
        chat(_env(tmp_path, ANTHROPIC_BASE_URL=server.url)) as child,
    ):
        child.send(f"{PASTE_START}first line\nsecond line\nthird line{PASTE_END}")
        child.send("\r")
        child.expect_exact("Three lines read.")
        child.expect(PROMPT)
    assert len(server.requests) == 1
    assert _user_texts(server.requests[0].body) == ["first line\nsecond line\nthird line"]


def test_escape_enter_starts_a_new_line(tmp_path: Path) -> None:
    with (
        LoopbackServer([replay(text_reply("Two lines."))], lifetime=60) as server,
        chat(_env(tmp_path, ANTHROPIC_BASE_URL=server.url)) as child,
    ):
        child.send("one\x1b\rtwo\r")
        child.expect_exact("Two lines.")
        child.expect(PROMPT)
    assert _user_texts(server.requests[0].body) == ["one\ntwo"]


def test_slash_commands_act_and_are_never_sent(tmp_path: Path) -> None:
    replies = [
        replay(text_reply("First.")),
        replay(text_reply("Again.")),
        replay(text_reply("Slash.")),
    ]
    with (
        LoopbackServer(replies, lifetime=60) as server,
        chat(_env(tmp_path, ANTHROPIC_BASE_URL=server.url)) as child,
    ):
        child.sendline("/help")
        child.expect_exact("/retry              answer your last message again")
        child.expect(PROMPT)
        child.sendline("/nope")
        child.expect_exact("unknown command /nope (/help lists them)")
        child.expect(PROMPT)
        child.sendline("/system Answer in one word.")
        child.expect_exact("system prompt set")
        child.expect(PROMPT)
        child.sendline("hello")
        child.expect_exact("First.")
        child.expect(PROMPT)
        child.sendline("/retry")
        child.expect_exact("Again.")
        child.expect(PROMPT)
        child.sendline("//etc/passwd is a path")
        child.expect_exact("Slash.")
        child.expect(PROMPT)
    first, _again, _slash = (json.loads(r.body) for r in server.requests)
    assert first["system"] == "Answer in one word."
    assert _user_texts(server.requests[0].body) == ["hello"]
    # /retry regenerates: the old answer is not sent back, nor the question twice.
    assert _user_texts(server.requests[1].body) == ["hello"]
    assert _user_texts(server.requests[2].body)[-1] == "/etc/passwd is a path"
    assert len(server.requests) == 3


RESPONSES_FRAMES = [
    ("response.created", '{"type":"response.created","response":{"id":"resp_9","model":"gpt-5","status":"in_progress","output":[]}}'),
    ("response.output_item.added", '{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_9","type":"message","role":"assistant","status":"in_progress","content":[]}}'),
    ("response.content_part.added", '{"type":"response.content_part.added","item_id":"msg_9","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}'),
    ("response.output_text.delta", '{"type":"response.output_text.delta","item_id":"msg_9","output_index":0,"content_index":0,"delta":"From OpenAI."}'),
    ("response.output_text.done", '{"type":"response.output_text.done","item_id":"msg_9","output_index":0,"content_index":0,"text":"From OpenAI."}'),
    ("response.output_item.done", '{"type":"response.output_item.done","output_index":0,"item":{"id":"msg_9","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"From OpenAI.","annotations":[]}]}}'),
    ("response.completed", '{"type":"response.completed","response":{"id":"resp_9","model":"gpt-5","status":"completed","output":[],"usage":{"input_tokens":5,"output_tokens":3,"total_tokens":8}}}'),
]  # fmt: skip


def test_model_switches_provider_mid_conversation(tmp_path: Path) -> None:
    with (
        LoopbackServer([replay(text_reply("From Claude."))], lifetime=60) as anthropic,
        LoopbackServer([replay(sse_body(RESPONSES_FRAMES))], lifetime=60) as openai,
    ):
        env = _env(
            tmp_path,
            ANTHROPIC_BASE_URL=anthropic.url,
            OPENAI_BASE_URL=openai.url + "/v1",
            OPENAI_API_KEY=KEY,
        )
        with chat(env) as child:
            child.sendline("first question")
            child.expect_exact("From Claude.")
            child.expect(PROMPT)
            child.sendline("/model openai:gpt-5")
            child.expect_exact("model: openai:gpt-5")
            child.expect(PROMPT)
            child.sendline("second question")
            child.expect_exact("From OpenAI.")
            child.expect(PROMPT)
            child.sendline("/model nope:x")
            child.expect_exact("elelem: unknown provider 'nope'")
            child.expect(PROMPT)
    assert len(anthropic.requests) == 1 and len(openai.requests) == 1
    sent = json.loads(openai.requests[0].body)
    assert sent["model"] == "gpt-5"
    texts = json.dumps(sent["input"])
    assert "first question" in texts and "From Claude." in texts and "second question" in texts


PARTIAL = "Its iron lattice was"


def _stalled() -> Reply:
    body = sse_body(text_frames(PARTIAL, "msg_03Stall", finished=False))
    return Reply(200, {"content-type": "text/event-stream"}, (Send(body), Pause(60.0)))


def test_ctrl_c_mid_stream_shows_the_partial_reply_exactly_once(tmp_path: Path) -> None:
    # What the user sees is the screen, not the bytes (the live region redraws
    # the text as it grows): a terminal emulator replays the whole session.
    tries = 4
    screen = pyte.Screen(120, 60)
    stream = pyte.Stream(screen)
    with (
        LoopbackServer([_stalled() for _ in range(tries)], lifetime=120) as server,
        chat(_env(tmp_path, ANTHROPIC_BASE_URL=server.url), rows=60) as child,
    ):
        stream.feed(child.before + child.after)
        for n in range(tries):
            child.sendline(f"question {n}")
            child.expect_exact(PARTIAL)
            stream.feed(child.before + child.after)
            child.sendintr()
            child.expect(PROMPT)
            stream.feed(child.before + child.after)
    shown = [line.rstrip() for line in screen.display]
    assert sum(line.count(PARTIAL) for line in shown) == tries, "\n".join(shown)
    assert [line for line in shown if "interrupted: kept what arrived" in line] == [
        "interrupted: kept what arrived"
    ] * tries
    assert len(server.requests) == tries
