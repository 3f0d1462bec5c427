"""The child process of the deferred-approval kill test (tests/test_deferred.py).

``python deferred_kill.py run DB URL``: a tool loop on the SQLite log at DB
against the Anthropic loopback at URL, with approvals deferred; it prints the
conversation id, then ``awaiting-approval`` once the run stopped, and waits
to be killed.  ``python deferred_kill.py resume DB URL CONV CALL``: resumes
conversation CONV approving CALL and prints the answer.  The ``charge`` tool
appends a line to ``$ELELEM_TEST_MARKERS/charge`` each time it runs (and
hangs there when ``$ELELEM_TEST_HANG`` is set).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from elelem.tools import tool

HANG = "ELELEM_TEST_HANG"


@tool
def charge(amount: int) -> str:
    """Charge a card (never repeat)."""
    markers = os.environ.get("ELELEM_TEST_MARKERS")
    if markers:
        with (Path(markers) / "charge").open("a") as out:
            out.write(f"{os.getpid()}\n")
    if os.environ.get(HANG):
        time.sleep(600)
    return f"charged {amount}"


def main(mode: str, db: str, url: str, *rest: str) -> None:
    import elelem
    from elelem.conversation import Conversation, SQLiteStore

    env = {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "k",
           "ELELEM_CONFIG": "/nonexistent/elelem.toml"}  # fmt: skip
    store = SQLiteStore(db)

    async def go() -> None:
        async with elelem.Client(env=env) as client:
            if mode == "run":
                conv = Conversation.create(store)
                print(conv.id, flush=True)
                result = await elelem.run(
                    conv, client, "anthropic:claude-test", "pay 5", tools=[charge], approve="defer"
                )
                print(result.end, flush=True)
                await asyncio.sleep(600)  # killed here, between awaiting and resume
            else:
                conv_id, call = rest
                conv = Conversation.open(store, conv_id)
                result = await elelem.resume(conv, client, approvals={call: True}, tools=[charge])
                print(result.text, flush=True)

    asyncio.run(go())


if __name__ == "__main__":
    main(*sys.argv[1:])
