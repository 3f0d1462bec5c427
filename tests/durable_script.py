"""The scripted model and tools of the durable-run tests (tests/test_durable_temporal.py).

Workers import them by path (``durable_script:SCRIPTED``), so the script
depends only on the request: every worker answers a request alike, and call
ids are numbered from the request's history, not from a per-process counter.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
from pathlib import Path

from elelem.testing import FunctionModel, Reply
from elelem.testing.models import reply_chunks
from elelem.tools import call_key, tool
from elelem.vocabulary import ToolResultBlock
from elelem.wire import ModelRequest

LINES = "ELELEM_DURABLE_LINES"
"""The file the non-idempotent tool appends a line to (outside the log)."""

DELAY = "ELELEM_DURABLE_DELAY"
"""Seconds each model request takes (0 unless set)."""

STEPS = 2
"""Tool-calling steps before the model answers."""


KEY_MARK = "\tkey="
"""What separates a line's note from the idempotency key of the call that wrote it."""


@tool(idempotent=True)
def append_line(note: str) -> str:
    """Append a line to the file outside the log, once per call, as an
    application's tool with an effect outside the log does: the line carries
    the call's idempotency key in the same write, and a call whose key is
    already in the file (a worker died after writing it) writes nothing again.
    Keyed so, the tool is safe to run again: it is marked idempotent."""
    key = call_key()
    if key is None:
        raise RuntimeError("append_line runs only inside the tool loop (no call key)")
    path = Path(os.environ[LINES])
    with path.open("a+") as out:
        fcntl.flock(out, fcntl.LOCK_EX)  # two attempts of one call check and write in turn
        out.seek(0)
        if not any(line.endswith(KEY_MARK + key) for line in out.read().splitlines()):
            out.write(f"{note}{KEY_MARK}{key}\n")
    return f"wrote {note}"


def notes(path: Path) -> str:
    """The notes ``append_line`` wrote to ``path``, one a line, in order;
    checks no call's key was written twice."""
    lines = path.read_text().splitlines()
    keys = [line.rpartition(KEY_MARK)[2] for line in lines]
    assert len(set(keys)) == len(keys), lines
    return "".join(line.rpartition(KEY_MARK)[0] + "\n" for line in lines)


async def _script(request: ModelRequest) -> object:
    # A request takes a while, as a provider's does: time for a kill to land in.
    await asyncio.sleep(float(os.environ.get(DELAY, "0")))
    results = [p for m in request.messages for p in m.content if isinstance(p, ToolResultBlock)]
    prompt = request.messages[0].text if request.messages else ""
    number = sum(1 for m in request.messages if m.role == "assistant") + 1
    if len(results) < STEPS:
        reply = Reply(
            text=f"step {len(results)}",
            calls=[("append_line", {"note": f"{prompt} #{len(results)}"})],
        )
    else:
        reply = Reply(text=f"done: {results[-1].content}")
    return reply_chunks(reply, request, SCRIPTED.provider, SCRIPTED.model, number)


SCRIPTED = FunctionModel(_script, model="scripted")


def _overloaded_pair() -> object:
    from elelem import Fallback

    return Fallback(["anthropic:claude-test", "openai:gpt-test"])


OVERLOADED_PAIR = _overloaded_pair()
"""Two loopback targets the Fallback test overloads (their base URLs come
from each worker's environment)."""


def _wrapped() -> object:
    from elelem.providers.middleware import DefaultOptions, wrap
    from elelem.vocabulary import GenerationOptions

    return wrap(SCRIPTED, DefaultOptions(GenerationOptions(temperature=0.5)))


WRAPPED = _wrapped()
"""The scripted model behind middleware that sets a default temperature."""


def _keep_last() -> object:
    from elelem.turns.history import KeepLastTurns

    return KeepLastTurns(1)


KEEP_LAST = _keep_last()
"""A history processor: each request carries the last turn only."""
