"""Full-text search benchmark: ``python -m benchmarks.search [--conversations N]``.

Fills a fresh SQLite store with N conversations (default 10,000) of one turn
each — a user question and an assistant answer whose words are the corpus's
real Anthropic text deltas, joined — then measures, in one process:

- **index**: the first ``search``, which brings the full-text index up to
  date over every event (paid once per event: appends never index);
- **search**: ``search`` for a set of queries drawn from the stored text, the
  median over the queries, once the index is current;
- **scan**: the same queries by the verbatim scan every search used before
  the index (the store's own ``_scan``, measured in the same run): the
  baseline the index is compared against.

Prints one table with the ratio of each query's scan time to its indexed
time.  CPU and wall time in milliseconds.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.corpus import text_deltas
from elelem.conversation import Draft, MessageBody
from elelem.conversation.events import TurnStart
from elelem.conversation.sqlite import SQLiteStore
from elelem.vocabulary import TextBlock

QUERIES = 12


def _answers(count: int, seed: int = 7) -> list[str]:
    words = " ".join(text_deltas("anthropic_messages")).split()
    rng = random.Random(seed)
    return [" ".join(rng.choices(words, k=60)) for _ in range(count)]


def fill(store: SQLiteStore, conversations: int) -> list[str]:
    answers = _answers(conversations)
    for i, answer in enumerate(answers):
        info = store.create(title=f"conversation {i}")
        question = TextBlock(f"question number {i}: what about {answer.split()[0]}?")
        store.append(
            info.id,
            [
                Draft.of(TurnStart(), turn=1),
                Draft.of(MessageBody("user", (question,)), turn=1),
                Draft.of(MessageBody("assistant", (TextBlock(answer),)), turn=1),
            ],
        )
    return answers


def _timed(call: object) -> tuple[float, float, object]:
    cpu, wall = time.process_time(), time.perf_counter()
    result = call()  # type: ignore[operator]
    return (time.process_time() - cpu) * 1e3, (time.perf_counter() - wall) * 1e3, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.search", description=__doc__)
    parser.add_argument("--conversations", type=int, default=10_000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "search.db")
        answers = fill(store, args.conversations)
        rng = random.Random(11)
        common = [" ".join(rng.choice(answers).split()[5:7]) for _ in range(QUERIES)]
        rare = [f"number {rng.randrange(args.conversations)}:" for _ in range(QUERIES)]
        index_cpu, index_wall, _ = _timed(lambda: store.search("zzzz-no-such-word"))
        print(f"full-text search over {args.conversations:,} conversations")
        print(
            f"first search, indexing every event: {index_cpu:.0f} ms cpu, {index_wall:.0f} ms wall"
        )
        head = f"queries (median of {QUERIES})"
        print(f"{head:<28}{'indexed cpu':>12}{'wall':>9}{'scan cpu':>10}{'wall':>9}{'ratio':>8}")
        for label, queries in (("two common words", common), ("one conversation's", rare)):
            indexed, scanned = [], []
            for query in queries:
                indexed.append(_timed(lambda q=query: store.search(q, limit=20))[:2])
                scanned.append(_timed(lambda q=query: store._scan(q, 20))[:2])
            i_cpu = statistics.median(c for c, _ in indexed)
            i_wall = statistics.median(w for _, w in indexed)
            s_cpu = statistics.median(c for c, _ in scanned)
            s_wall = statistics.median(w for _, w in scanned)
            ratio = s_cpu / max(i_cpu, 1e-9)
            print(
                f"{label:<28}{i_cpu:>10.1f}ms{i_wall:>7.1f}ms"
                f"{s_cpu:>8.1f}ms{s_wall:>7.1f}ms{ratio:>7.1f}x"
            )
        store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
