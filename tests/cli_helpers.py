"""Helpers for the CLI tests: run `elelem` as a subprocess against loopback servers."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from elelem.cli.demo import sample_recording
from elelem.recordings.cassettes import load
from elelem.testing.servers import sse_body

ELELEM = str(Path(sys.executable).with_name("elelem"))
QUESTION = "How tall is the Eiffel Tower, and when was it finished?"
MODEL = "anthropic:claude-sonnet-4-5"
KEY = "sk-ant-test-0123456789"


def text_frames(text: str, msg_id: str, *, finished: bool = True) -> list[tuple[str | None, str]]:
    """The SSE frames of an Anthropic response holding one text block; with
    ``finished`` False it stops after the text, as a stream that stalls."""
    model = "claude-sonnet-4-5-20250929"
    start: dict[str, object] = {
        "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
    }  # fmt: skip
    start["usage"] = {"input_tokens": 120, "output_tokens": 1}
    frames: list[dict[str, object]] = [
        {"type": "message_start", "message": start},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
    ]
    if finished:
        frames += [
            {"type": "content_block_stop", "index": 0},
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"input_tokens": 120, "output_tokens": 9},
            },
            {"type": "message_stop"},
        ]
    return [(str(f["type"]), json.dumps(f)) for f in frames]


def text_reply(text: str, msg_id: str = "msg_02FollowUp") -> bytes:
    """A small Anthropic SSE response body holding one text block."""
    return sse_body(text_frames(text, msg_id))


def demo_body() -> bytes:
    """The SSE body of the shipped demo recording."""
    return load(sample_recording()).interactions[0].response.body


def base_env(tmp: Path, **extra: str) -> dict[str, str]:
    """An environment with no provider key, no config and a private store."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp),
        "ELELEM_HOME": str(tmp / "home"),
        # No ELELEM_CONFIG: the default config file is under HOME, and absent.
        "XDG_CONFIG_HOME": str(tmp / "config"),
        "LANG": "C.UTF-8",
        "PYTHONUNBUFFERED": "1",
        # A user's install has no trio (tests/user_site/trio.py says why).
        "PYTHONPATH": str(Path(__file__).resolve().parent / "user_site"),
    }
    env.update(extra)
    return env


def run(
    env: dict[str, str], *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``elelem ARGS`` and capture its output (never a terminal)."""
    return subprocess.run(
        [ELELEM, *args],
        env=env,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


SERVE_LINE = re.compile(
    r"elelem serve: open (http://127\.0\.0\.1:\d+)/\?token=([A-Za-z0-9_-]{32})\n"
)
"""The first line `elelem serve` prints: the URL, with its random token."""


@contextmanager
def serving(env: dict[str, str], *args: str) -> Iterator[tuple[str, str]]:
    """``elelem serve --port 0 ARGS`` running until the block ends: the base
    URL and the token of the line it printed first (which must be that
    line); then it is stopped (SIGTERM) and must end cleanly."""
    process = subprocess.Popen(
        [ELELEM, "serve", "--port", "0", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        first = process.stdout.readline()
        found = SERVE_LINE.fullmatch(first)
        assert found, (first, process.stderr.read() if not first else "")
        yield found.group(1), found.group(2)
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert process.returncode in (0, -15)


CONVERSATION_LINE = re.compile(r"^conversation (c_[0-9a-f]{16})\n$")

ANSWER = """\
thinking: The user wants the current height of the Eiffel Tower and when it was finished. The height has chan… (45 words)
I'll look up the current figures.
searched "Eiffel Tower height and completion date" → 5 results
**Height.** The tower is 330 metres (1,083 ft) tall, including the antennas at its top[1][2]; it grew from its original 312 metres as broadcasting antennas were added over the decades.

**Completed.** Construction began in January 1887 and was finished on 31 March 1889, after two years, two months and five days of work[3][2], in time for the 1889 Exposition Universelle (World's Fair), which marked the centennial of the French Revolution[4]. It remained the tallest human-made structure in the world until the Chrysler Building in New York was finished in 1930[1].
"""

FOOTNOTES = """\
[1] Eiffel Tower - Wikipedia — en.wikipedia.org
    https://en.wikipedia.org/wiki/Eiffel_Tower
[2] The Eiffel Tower in figures | Official website — toureiffel.paris
    https://www.toureiffel.paris/en/the-monument/key-figures
[3] History of the Eiffel Tower | Official website — toureiffel.paris
    https://www.toureiffel.paris/en/the-monument/history
[4] Eiffel Tower | History, Height, & Facts | Britannica — britannica.com
    https://www.britannica.com/topic/Eiffel-Tower-Paris-France
"""

USAGE = "usage: 9,873 in · 418 out · 1 web search · $0.0459\n"

EXPECTED_ANSWER = ANSWER + "\n" + FOOTNOTES + "\n" + USAGE
