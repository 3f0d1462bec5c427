"""Memory under hostile bodies: peak RSS of one request per bomb, against a
normal response measured in the same run (issue #13).

    .venv/bin/python -m benchmarks.bombs            # 1 MiB gzip bombs, as reported
    .venv/bin/python -m benchmarks.bombs --mib 0.25 # smaller and quicker

Each row runs in a fresh process: a loopback server on 127.0.0.1 (its own
thread, holding only the compressed body) serves the body once, the driver
requests it, and the row reports how far the resident set peaked above its
level before the request (Linux ``VmHWM`` after ``clear_refs``), the typed
outcome and the CPU time.  Bodies:

- ``baseline``: a real Anthropic stream (the demo's recording);
- ``gzip-json``: gzip of spaces served as ``application/json`` to a
  streaming request (a JSON type switches to reading the whole body);
- ``gzip-newlines``: gzip of newlines served as ``text/event-stream``;
- ``plain-newlines``: 64 MiB of newlines, uncompressed (the CPU bound).

A bomb row is good when its peak is within a small multiple of the
baseline's and it ends in ``LimitExceededError`` (or, for uncompressed
newlines, the stream's own incomplete error) rather than holding the body.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import zlib

ROWS = ("baseline", "gzip-json", "gzip-newlines", "plain-newlines")


def _body(row: str, mib: float) -> tuple[bytes, dict[str, str]]:
    if row == "baseline":
        from elelem.cli.demo import sample_recording
        from elelem.recordings.cassettes import load

        body = load(sample_recording()).interactions[0].response.body
        return body, {"content-type": "text/event-stream"}
    if row == "plain-newlines":
        return b"\n" * (64 * 1024 * 1024), {"content-type": "text/event-stream"}
    # Compressed to about ``mib`` MiB: deflate reaches ~1030:1 on one byte repeated.
    plain = (b" " if row == "gzip-json" else b"\n") * int(mib * 1030 * 1024 * 1024)
    kind = "application/json" if row == "gzip-json" else "text/event-stream"
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    body = packer.compress(plain) + packer.flush()
    del plain
    return body, {"content-type": kind, "content-encoding": "gzip"}


def _status_kb(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def child(row: str, mib: float) -> dict[str, object]:
    """Measure one row in this process."""
    import asyncio
    import gc
    import time

    from elelem.errors import StreamError
    from elelem.providers import load_shape
    from elelem.testing.servers import LoopbackServer, Reply, Send
    from elelem.transport import Driver, Endpoint
    from elelem.vocabulary import Message, ProviderId
    from elelem.wire import ModelRequest

    body, headers = _body(row, mib)
    shape = load_shape("anthropic_messages")
    request = ModelRequest(model="m-1", messages=(Message.user("hi"),))
    outcome: dict[str, object] = {"row": row, "body_bytes": len(body)}

    async def main() -> None:
        with LoopbackServer([Reply(200, headers, (Send(body),))], lifetime=120) as server:
            driver = Driver()
            endpoint = Endpoint(ProviderId("anthropic"), server.url, api_key="sk-bench-0123")
            gc.collect()
            with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
                fh.write("5")
            rss0 = _status_kb("VmRSS")
            cpu0 = time.process_time()
            try:
                async with driver.stream(endpoint, shape, request) as stream:
                    await stream.final()
                outcome["outcome"] = "finished"
            except StreamError as exc:
                outcome["outcome"] = f"{type(exc).__name__}: {exc.message[:90]}"
            finally:
                await driver.aclose()
            outcome["cpu_s"] = round(time.process_time() - cpu0, 3)
            outcome["peak_rss_growth_mib"] = round((_status_kb("VmHWM") - rss0) / 1024, 1)

    asyncio.run(main())
    return outcome


def main(argv: list[str] | None = None) -> int:
    """Run every row in its own process and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=float, default=1.0, help="compressed size of a gzip bomb")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.mib)))
        return 0
    results = []
    for row in ROWS:
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.bombs", "--child", row, "--mib", str(args.mib)],
            capture_output=True,
            text=True,
            check=True,
        )
        results.append(json.loads(done.stdout))
    base = max(float(results[0]["peak_rss_growth_mib"]), 1.0)  # type: ignore[arg-type]
    print(f"{'row':<16}{'body':>12}{'peak RSS +MiB':>15}{'x baseline':>12}{'CPU s':>8}  outcome")
    for r in results:
        growth = float(r["peak_rss_growth_mib"])  # type: ignore[arg-type]
        print(
            f"{r['row']:<16}{r['body_bytes']:>12}{growth:>15.1f}{growth / base:>12.1f}"
            f"{r['cpu_s']:>8}  {r['outcome']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["ROWS", "child", "main"]
