"""Profile one client's streaming path: ``python -m benchmarks.profile``.

Builds one stream from the corpus, serves it from the loopback server, warms
the client up once, then runs one request under :mod:`cProfile` and prints
the functions that dominate (own time and cumulative time).  Default: elelem
on an Anthropic Messages stream of 20,000 deltas, whole body at once.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.clients import CLIENTS, call
from benchmarks.plan import QUICK
from benchmarks.run import Driver
from benchmarks.server import MODES
from benchmarks.streams import SHAPES, text_digest


def main(argv: list[str] | None = None) -> int:
    """Profile one request and print the top functions."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.profile", description=__doc__)
    p.add_argument("--client", default="elelem", choices=list(CLIENTS))
    p.add_argument("--shape", default="anthropic_messages", choices=SHAPES)
    p.add_argument("--mode", default="bulk", choices=MODES)
    p.add_argument("--events", type=int, default=20_000)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--sort", default="tottime", choices=("tottime", "cumulative"))
    args = p.parse_args(argv)

    plan = QUICK.__class__(**{**QUICK.__dict__, "events": args.events, "scaling_sizes": ()})
    driver = Driver(plan, [args.client], [args.shape], [args.mode])
    driver.build_streams()
    with tempfile.TemporaryDirectory(prefix="elelem-profile-") as tmp:
        server = driver.start_server(Path(tmp))
        try:
            task = driver.task(args.client, args.shape, args.mode, args.events)
            url = f"{driver.base}/s/{task['nonce']}/{task['warm']},{task['key']}/{args.mode}"
            loop = asyncio.new_event_loop()
            runner = CLIENTS[args.client].prepare(args.shape, url)
            call(runner, loop)
            profiler = cProfile.Profile()
            cpu = time.process_time()
            profiler.enable()
            text = call(runner, loop)
            profiler.disable()
            cpu = time.process_time() - cpu
        finally:
            assert server.stdin is not None
            server.stdin.close()
            server.wait(timeout=10)
    if text_digest(text) != task["digest"]:
        print(f"wrong result: {len(text)} chars, expected {task['chars']}", file=sys.stderr)
        return 1
    events = len(driver.streams[task["key"]].events)
    print(
        f"{args.client} {args.shape} {args.mode}: {events} events, {cpu * 1e6 / events:.2f} µs/event"
    )
    print("(under the profiler, which inflates small calls; the ratios are what matter)\n")
    pstats.Stats(profiler).strip_dirs().sort_stats(args.sort).print_stats(args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
