"""The tools and the child process of the kill test (tests/test_tool_loop_kill.py).

Run as ``python toolloop_kill.py DB URL MARKERS``: a tool loop on the SQLite
log at DB against the loopback provider at URL; both tools write a marker in
MARKERS and then hang, so the parent can kill the process mid-step.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from elelem.tools import tool

HANG = "ELELEM_TEST_HANG"


def _mark(name: str) -> None:
    markers = os.environ.get("ELELEM_TEST_MARKERS")
    if markers:
        (Path(markers) / name).write_text(str(os.getpid()))
    if os.environ.get(HANG):
        time.sleep(600)


@tool(idempotent=True)
def lookup(key: str) -> str:
    """Read a value (safe to repeat)."""
    _mark("lookup")
    return f"value of {key}"


@tool
def charge(amount: int) -> str:
    """Charge a card (never repeat)."""
    _mark("charge")
    return f"charged {amount}"


def main(db: str, url: str) -> None:
    from elelem import Client
    from elelem.conversation import Conversation, SQLiteStore
    from elelem.turns.toolloop import run

    env = {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "k",
           "ELELEM_CONFIG": "/nonexistent/elelem.toml"}  # fmt: skip
    conv = Conversation.create(SQLiteStore(db))
    print(conv.id, flush=True)

    async def go() -> None:
        async with Client(env=env) as client:
            await run(conv, client, "anthropic:claude-test", "look and pay", tools=[lookup, charge])

    asyncio.run(go())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
