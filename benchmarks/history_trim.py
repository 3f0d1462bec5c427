"""Is ``TrimToTokens`` near linear in a conversation's turns?
``python -m benchmarks.history_trim``

A long conversation (a chat loop left running, an agent's thousand steps)
is trimmed before every request.  This times ``TrimToTokens(budget=500)``
on a history of ``n`` turns (a user message and an answer of 20 words
each) for two sizes, in the same run.

Printed: seconds per turn for each size and the slope, the per-turn cost
at the larger size over that at the smaller.  Dropping one turn at a time
(re-estimating the whole history after each) gave about 5 from 1,000 to
2,000 turns (1.2 s, then 5.9 s); bisection gives about 1 (n log n).  The
bar is 1.5.
"""

from __future__ import annotations

import argparse
import sys
import time

from elelem.turns.history import History, TrimToTokens
from elelem.vocabulary import Message, TextBlock

SLOPE_BAR = 1.5


def history(n: int) -> History:
    """``n`` turns of a user message and an answer of 20 words each."""
    messages: list[Message] = []
    for turn in range(n):
        messages += [
            Message.user(f"question {turn} " * 20),
            Message("assistant", (TextBlock(f"answer {turn} " * 20),)),
        ]
    turns = tuple(t for t in range(n) for _ in (0, 1))
    return History(
        tuple(messages), ((None,),) * len(messages), turns, "anthropic", "claude-sonnet-4-5"
    )


def measure(n: int, runs: int = 3) -> float:
    """The best of ``runs`` timings of one trim of ``n`` turns, per turn."""
    whole = history(n)
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        kept = TrimToTokens(budget=500)(whole)
        best = min(best, time.perf_counter() - started)
    assert len(kept.turn_numbers()) < n, "nothing was trimmed"
    print(f"{n:>7} turns: {best:8.4f} s ({best / n * 1e6:7.2f} µs/turn)")
    return best / n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[2_000, 20_000])
    args = parser.parse_args(argv)
    small, large = measure(args.sizes[0]), measure(args.sizes[1])
    slope = large / small
    print(f"slope: {slope:.2f}x (bar {SLOPE_BAR}x)")
    return 0 if slope <= SLOPE_BAR else 1


if __name__ == "__main__":
    sys.exit(main())
