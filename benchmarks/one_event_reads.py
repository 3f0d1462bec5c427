"""Reads of exactly one event, for an instruction counter:
``python -m benchmarks.one_event_reads PROVIDER {sync,async,floor} REPS [--probe]``.

A paced stream hands the client one event per network read; what elelem
does per such read (the shell's loop, ``StreamCore``, the SSE decoder, the
shape's fast path, the assembler) is what this runs.  The loopback server
serves a short stream of the provider's table row (``benchmarks.providers``)
so the request, headers and connection are real; the shell's iterator of
body pieces is then the long stream's events, one per piece, so nothing
below the shell (socket, h11) is counted per event.  ``floor`` runs the
parsing floor (line split, ``orjson.loads``, text extraction) on the same
pieces.  Each request is checked to assemble the row's text.

Run it under ``valgrind --tool=callgrind`` with REPS 1 and 3: the
difference divided by ``2 * EVENTS`` is the instructions per event, every
per-process and per-request cost cancelled (robust to the machine's load).
The heap is frozen before the requests (:mod:`benchmarks.heap`), the
floor's as elelem's, so the collector's timing does not move the count.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from benchmarks.clients import PROMPT, _elelem_setup, _elelem_text, _floor_extractor, _floor_lines
from benchmarks.corpus import corpus_root
from benchmarks.heap import frozen_heap
from benchmarks.providers import ProviderStream, _key, build, recordings
from benchmarks.run import start_server
from elelem.transport.stream_core import StreamCore

EVENTS = 2000  # text deltas of the long stream


def _pieces(events: list[bytes], body: Any) -> Iterator[bytes] | AsyncIterator[bytes]:
    if not hasattr(body, "__anext__"):
        return iter(events)

    async def pieces() -> AsyncIterator[bytes]:
        for event in events:
            yield event

    return pieces()


def _floor(stream: ProviderStream, shape: str, reps: int) -> None:
    import orjson

    take = _floor_extractor(shape)
    with frozen_heap():
        for _ in range(reps):
            out: list[str] = []
            pending = b""
            for event in stream.events:
                pending = _floor_lines(pending, event, orjson.loads, take, out)
            if "".join(out) != stream.text:
                raise AssertionError("the floor did not read the row's text")


def main(argv: list[str] | None = None) -> int:
    """Run REPS requests of one-event reads with the chosen client."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("provider")
    ap.add_argument("client", choices=("sync", "async", "floor"))
    ap.add_argument("reps", type=int)
    ap.add_argument("--probe", action="store_true", help="the row's +unknown variant")
    args = ap.parse_args(argv)
    rec = next(r for r in recordings(corpus_root()) if r.provider == args.provider)
    long = build(rec, EVENTS, probe=args.probe)
    if args.client == "floor":
        _floor(long, rec.shape, args.reps)
        return 0
    short = build(rec, 3, probe=args.probe)
    events = list(long.events)
    opened = StreamCore._opened

    def one_event_reads(core: StreamCore, body: Any) -> bool:
        return opened(core, _pieces(events, body))

    StreamCore._opened = one_event_reads  # type: ignore[method-assign,assignment]
    with tempfile.TemporaryDirectory() as tmp:
        proc, port = start_server(Path(tmp) / "s.pickle", {_key(short): short.events})
        url = f"http://127.0.0.1:{port}/s/x/{_key(short)}/bulk"
        try:
            if args.client == "sync":
                client, model = _elelem_setup(rec.shape, url, "SyncClient")
                with frozen_heap():
                    for _ in range(args.reps):
                        if _elelem_text(client.stream(model, PROMPT).final()) != long.text:
                            raise AssertionError("elelem did not assemble the row's text")
            else:
                aclient, model = _elelem_setup(rec.shape, url, "Client")

                async def run() -> None:
                    for _ in range(args.reps):
                        result = await aclient.stream(model, PROMPT).final()
                        if _elelem_text(result) != long.text:
                            raise AssertionError("elelem did not assemble the row's text")

                with frozen_heap():
                    asyncio.run(run())
        finally:
            StreamCore._opened = opened  # type: ignore[method-assign]
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
