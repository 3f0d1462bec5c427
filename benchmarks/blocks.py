"""Is a turn's cost linear in its blocks?  ``python -m benchmarks.blocks``

A hostile (or just chatty) provider can answer with tens of thousands of
one-letter text blocks.  This runs, through the real client, driver, turn
engine and SQLite store, against a loopback server: a turn answered by ``n``
one-letter blocks (each block one stored event), then a follow-up turn in
the same conversation (it loads those ``n`` events, projects them into one
assistant message and encodes them into its request).  Both are timed for
each size.

Printed: seconds per block for each size and step, and the slope — the
per-block cost at the largest size over that at the smallest, in the same
run.  Linear work gives about 1.0; the quadratic history builder this
guards against gave about 10 from 10,000 to 100,000 blocks.  The issue's
bar is 1.3.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

MODEL = "anthropic:claude-sonnet-4-5"
SLOPE_BAR = 1.3


def blocks_body(n: int) -> bytes:
    """An Anthropic Messages SSE body of ``n`` one-letter text blocks."""
    start: dict[str, object] = {
        "id": "msg_blocks",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [],
        "usage": {"input_tokens": 5, "output_tokens": 1},
    }
    frames: list[tuple[str, dict[str, object]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    for i in range(n):
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": chr(97 + i % 26)}
        frames += [
            (
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": block},
            ),
            ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": i}),
        ]
    frames += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": n},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return b"".join(
        f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in frames
    )


async def _turns(url: str, db: Path) -> tuple[float, float, int]:
    from elelem import Client
    from elelem.conversation import Conversation, SQLiteStore
    from elelem.turns.drive import send

    env = {
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "sk-ant-bench",
        "ELELEM_CONFIG": "/nonexistent/elelem.toml",
    }
    store = SQLiteStore(db)
    async with Client(env=env) as client:
        conv = Conversation.create(store)
        started = time.perf_counter()
        await send(conv, client, MODEL, "many blocks, please")
        first = time.perf_counter() - started
        started = time.perf_counter()
        await send(conv, client, MODEL, "and again")
        second = time.perf_counter() - started
        events = len(conv.events)
    store.close()
    return first, second, events


def measure(n: int) -> dict[str, float]:
    """Seconds per block of the ``n``-block turn and of the turn after it."""
    from elelem.testing.servers import LoopbackServer, replay

    with (
        tempfile.TemporaryDirectory() as tmp,
        LoopbackServer(
            [replay(blocks_body(n), chunk_size=65536), replay(blocks_body(1))], lifetime=900
        ) as server,
    ):
        first, second, events = asyncio.run(_turns(server.url, Path(tmp) / "blocks.db"))
        sent = len(server.requests[1].body)
    assert events >= n, f"only {events} events stored for {n} blocks"
    row = {"blocks": n, "turn_s_per_block": first / n, "next_turn_s_per_block": second / n}
    print(
        f"{n:>7} blocks: turn {first:7.2f} s ({first / n * 1e6:6.1f} µs/block)   "
        f"next turn {second:6.2f} s ({second / n * 1e6:6.1f} µs/block, request {sent} bytes)"
    )
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[10_000, 100_000])
    args = parser.parse_args(argv)
    small, large = measure(args.sizes[0]), measure(args.sizes[1])
    worst = 0.0
    for step in ("turn_s_per_block", "next_turn_s_per_block"):
        slope = large[step] / small[step]
        worst = max(worst, slope)
        print(f"slope {step.removesuffix('_s_per_block')}: {slope:.2f}x (bar {SLOPE_BAR}x)")
    return 0 if worst <= SLOPE_BAR else 1


if __name__ == "__main__":
    sys.exit(main())
