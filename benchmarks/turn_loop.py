"""Does a turn's store I/O stall the event loop?  ``python -m benchmarks.turn_loop``

The async turn driver commits each block to the store in a worker thread.
This measures what that buys: ``TURNS`` turns, each answered by an Anthropic
stream built from the corpus' recorded text deltas, are run through the real
client, driver and SQLite store (a file, ``synchronous=FULL``: every commit
waits for the disk) while a ticker task on the same loop wakes every
millisecond and records how late it woke.  The baseline, in the same run, is
the same turns with each commit made on the event loop itself (what the
driver did before: a synchronous append inside ``async def``).

Printed: the ticker's lateness (median, 99th percentile, max, in ms) for
both, and the ratio of the maxima.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.corpus import text_deltas
from benchmarks.streams import anthropic_messages

TURNS = 20
DELTAS = 400
TICK = 0.001


async def _ticker(lateness: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        start = time.perf_counter()
        await asyncio.sleep(TICK)
        lateness.append(time.perf_counter() - start - TICK)


def _inline_append(conversation: Any, drafts: Sequence[Any]) -> Any:
    async def append() -> Any:
        return conversation.append(*drafts)

    return append()


async def _turns(url: str, db: Path) -> list[float]:
    from elelem import Client
    from elelem.conversation import Conversation, SQLiteStore
    from elelem.turns.drive import send

    env = {
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "sk-ant-bench",
        "ELELEM_CONFIG": "/nonexistent/elelem.toml",
    }
    store = SQLiteStore(db, synchronous="FULL")
    lateness: list[float] = []
    stop = asyncio.Event()
    async with Client(env=env) as client:
        conv = Conversation.create(store)
        # A warm-up turn first: imports, the connection, the worker thread.
        await send(conv, client, "anthropic:claude-sonnet-4-5", "warm-up")
        ticker = asyncio.create_task(_ticker(lateness, stop))
        for n in range(TURNS):
            await send(conv, client, "anthropic:claude-sonnet-4-5", f"question {n}")
        stop.set()
        await ticker
    store.close()
    return lateness


def _row(name: str, lateness: list[float]) -> dict[str, float]:
    ordered = sorted(lateness)
    row = {
        "median_ms": statistics.median(ordered) * 1e3,
        "p99_ms": ordered[int(len(ordered) * 0.99)] * 1e3,
        "max_ms": ordered[-1] * 1e3,
    }
    print(
        f"{name:<28} ticks {len(ordered):>6}  median {row['median_ms']:6.3f} ms  "
        f"p99 {row['p99_ms']:7.3f} ms  max {row['max_ms']:7.3f} ms"
    )
    return row


def main() -> int:
    from elelem.testing.servers import LoopbackServer, replay
    from elelem.turns import drive as turn

    body = anthropic_messages(text_deltas("anthropic_messages"), DELTAS).body
    results: dict[str, dict[str, float]] = {}
    offloaded = turn._append
    with tempfile.TemporaryDirectory() as tmp:
        for name, append in (
            ("commit on the event loop", _inline_append),
            ("commit in a worker thread", offloaded),
        ):
            with LoopbackServer([replay(body, chunk_size=512)] * (TURNS + 1)) as server:
                turn._append = append  # type: ignore[assignment]
                try:
                    lateness = asyncio.run(_turns(server.url, Path(tmp) / f"{len(results)}.db"))
                finally:
                    turn._append = offloaded
            results[name] = _row(name, lateness)
    base, now = results["commit on the event loop"], results["commit in a worker thread"]
    print(f"max lateness: worker thread / event loop = {now['max_ms'] / base['max_ms']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
