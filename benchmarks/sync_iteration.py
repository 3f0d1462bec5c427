"""A blocking caller taking a stream chunk by chunk: ``python -m benchmarks.sync_iteration``.

``SyncClient.stream(...).text()`` iterated delta by delta over a loopback
Anthropic stream of ``--deltas`` text deltas, against the floor (httpx2's
blocking client, an SSE line split and ``orjson.loads`` per line) reading the
same body in the same process; CPU µs per delta, the least of ``--runs``,
the two interleaved.  It is the path a blocking chat loop takes, and the one
where a client that hops to another thread per chunk pays for it.
"""

from __future__ import annotations

import argparse
import time

from benchmarks.clients import MODELS, floor
from elelem import SyncClient
from elelem.testing.servers import LoopbackServer, replay, sse_body

_START = (
    '{"type":"message_start","message":{"id":"m","type":"message","role":"assistant",'
    '"model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}'
)
_DELTA = '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"word "}}'


def body(deltas: int) -> bytes:
    """An Anthropic Messages stream of one text block of ``deltas`` deltas."""
    return sse_body(
        [
            ("message_start", _START),
            (
                "content_block_start",
                '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
            ),
            *[("content_block_delta", _DELTA)] * deltas,
            ("content_block_stop", '{"type":"content_block_stop","index":0}'),
            (
                "message_delta",
                '{"type":"message_delta","delta":{"stop_reason":"end_turn"},'
                '"usage":{"output_tokens":3}}',
            ),
            ("message_stop", '{"type":"message_stop"}'),
        ]
    )


def measure(deltas: int, runs: int) -> tuple[float, float]:
    """CPU µs per delta: (floor, ``SyncClient.text()`` taken delta by delta)."""
    stream = body(deltas)
    with LoopbackServer([replay(stream)] * (2 * runs + 2)) as server:
        env = {
            "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": "bench",
            "ELELEM_CONFIG": "/nonexistent/elelem.toml",
        }
        read_floor = floor("anthropic_messages", server.url)
        best_floor = best_mine = float("inf")
        with SyncClient(env=env) as client:
            for run in range(runs + 1):  # the first of each is a warm-up
                start = time.process_time()
                text = read_floor()
                spent = time.process_time() - start
                assert text == "word " * deltas, "the floor read the wrong text"
                if run:
                    best_floor = min(best_floor, spent)
                start = time.process_time()
                with client.stream(f"anthropic:{MODELS['anthropic_messages']}", "hi") as s:
                    pieces = list(s.text())
                spent = time.process_time() - start
                assert pieces == ["word "] * deltas, "SyncClient read the wrong text"
                if run:
                    best_mine = min(best_mine, spent)
    return best_floor / deltas * 1e6, best_mine / deltas * 1e6


def main(argv: list[str] | None = None) -> int:
    """Measure and print one line."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.sync_iteration", description=__doc__)
    p.add_argument("--deltas", type=int, default=5000)
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args(argv)
    base, mine = measure(args.deltas, args.runs)
    print(
        f"{args.deltas} deltas, best of {args.runs}: floor {base:.2f} µs/delta, "
        f"SyncClient text() delta by delta {mine:.2f} µs/delta ({mine / base:.2f}x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
