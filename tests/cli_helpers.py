"""Helpers for the CLI tests: run `elelem` as a subprocess against loopback servers."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from elelem.cli.demo import sample_recording
from elelem.testing.cassettes import load

ELELEM = str(Path(sys.executable).with_name("elelem"))
QUESTION = "How tall is the Eiffel Tower, and when was it finished?"


def demo_body() -> bytes:
    """The SSE body of the shipped demo recording."""
    return load(sample_recording()).interactions[0].response.body


def base_env(tmp: Path, **extra: str) -> dict[str, str]:
    """An environment with no provider key, no config and a private store."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp),
        "ELELEM_HOME": str(tmp / "home"),
        "ELELEM_CONFIG": str(tmp / "no-config.toml"),
        "LANG": "C.UTF-8",
        "PYTHONUNBUFFERED": "1",
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

USAGE = "usage: 9,873 in · 418 out · 1 web search\n"

EXPECTED_ANSWER = ANSWER + "\n" + FOOTNOTES + "\n" + USAGE
