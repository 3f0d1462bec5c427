"""Is the renderer's cost per delta flat?  ``python -m benchmarks.render``

One text block of 10,000, 40,000 and 160,000 deltas (the corpus' recorded
Anthropic text deltas, repeated in order) is fed to the plain renderer as
the driver hands it over: each chunk with what the one assembler committed
for it (the pairs are built before the clock starts; assembling is the
driver's work, measured on its own row for reference).  Output goes to
``os.devnull``.  CPU time per delta is printed for each size, with its ratio
to the first size: flat means the last ratio stays within 1.3x.

``--sizes 1000,4000`` picks other sizes; ``--runs N`` (default 3) takes the
best of N runs per cell.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from benchmarks.corpus import text_deltas

SIZES = (10_000, 40_000, 160_000)


def chunks_for(deltas: list[str], n: int) -> list[Any]:
    """One response holding one text block of ``n`` deltas."""
    from elelem.stream import BlockEnd, BlockStart, Finish, ResponseStart, TextDelta

    texts = [deltas[i % len(deltas)] for i in range(n)]
    return [
        ResponseStart("msg_bench", "claude-sonnet-4-5"),
        BlockStart(0, "text"),
        *(TextDelta(0, t) for t in texts),
        BlockEnd(0),
        Finish("stop"),
    ]


def assemble_cpu(chunks: list[Any]) -> tuple[float, list[Any]]:
    """CPU seconds the driver's assembler takes, and the pairs it made."""
    from elelem.stream import Assembler

    assembler = Assembler()
    start = time.process_time()
    pairs = [(c, assembler.feed(c)) for c in chunks]
    return time.process_time() - start, pairs


def render_cpu(pairs: list[Any], sink: Any) -> float:
    """CPU seconds the plain renderer takes to show ``pairs``."""
    from rich.console import Console

    from elelem.render import Renderer, RenderOptions

    renderer = Renderer(Console(file=sink, width=100), RenderOptions(usage=False))
    feed = renderer.feed
    start = time.process_time()
    for chunk, committed in pairs:
        feed(chunk, committed)
    renderer.end_answer()
    return time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    deltas = text_deltas("anthropic_messages")
    rows: list[tuple[int, float, float]] = []
    with open(os.devnull, "w", encoding="utf-8") as sink:
        for n in sizes:
            chunks = chunks_for(deltas, n)
            best_render = best_assemble = float("inf")
            for _ in range(args.runs):
                assemble, pairs = assemble_cpu(chunks)
                best_assemble = min(best_assemble, assemble)
                best_render = min(best_render, render_cpu(pairs, sink))
            rows.append((n, best_render / n * 1e6, best_assemble / n * 1e6))
    first = rows[0][1]
    print("renderer (plain), one text block: CPU per delta, best of", args.runs)
    print(f"{'deltas':>8} {'render µs':>10} {'ratio':>6} {'assembler µs':>13}")
    for n, render, assemble in rows:
        print(f"{n:>8} {render:>10.3f} {render / first:>5.2f}x {assemble:>13.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
