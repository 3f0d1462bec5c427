"""A provider row's stream in bulk, for an instruction counter:
``python -m benchmarks.bulk_reads PROVIDER {sync,async,floor,floor_async} REPS``.

The loopback server of ``benchmarks.providers`` serves the row's stream
(``--events`` text deltas of the provider's own chunks) as one body;
the client reads it REPS times after two warm-up requests: ``sync``
``SyncClient.stream().final()``, ``async`` ``Client.stream().final()``,
``floor`` and ``floor_async`` the parsing floor (httpx2, line split,
``orjson.loads``, the text picked) over httpx2's blocking and async
clients.  Each request is checked to assemble the row's text.

Run it under ``valgrind --tool=callgrind`` with two values of REPS: the
difference of the counts over the difference of the requests times the
stream's events is the instructions per event, per-process costs cancelled,
so the figure is robust to the machine's load.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from benchmarks.clients import PROMPT, _elelem_setup, _elelem_text, floor, floor_async
from benchmarks.corpus import corpus_root
from benchmarks.providers import _key, build, recordings
from benchmarks.run import start_server


def main(argv: list[str] | None = None) -> int:
    """Run two warm-up requests and REPS measured ones of the chosen client."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("provider")
    ap.add_argument("client", choices=("sync", "async", "floor", "floor_async"))
    ap.add_argument("reps", type=int)
    ap.add_argument("--events", type=int, default=20000)
    args = ap.parse_args(argv)
    rec = next(r for r in recordings(corpus_root()) if r.provider == args.provider)
    stream = build(rec, args.events)
    with tempfile.TemporaryDirectory() as tmp:
        proc, port = start_server(Path(tmp) / "s.pickle", {_key(stream): stream.events})
        base = f"http://127.0.0.1:{port}/s/x/{_key(stream)}/bulk"
        try:
            _run(args.client, rec.shape, base, args.reps + 2, stream.text)
        finally:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(10)
    return 0


def _run(client: str, shape: str, base: str, requests: int, text: str) -> None:
    if client == "floor":
        run = floor(shape, base)
        for _ in range(requests):
            if run() != text:
                raise AssertionError("the floor did not read the row's text")
    elif client == "floor_async":
        arun = floor_async(shape, base)

        async def floors() -> None:
            for _ in range(requests):
                if await arun() != text:
                    raise AssertionError("the floor did not read the row's text")

        asyncio.run(floors())
    elif client == "sync":
        sclient, model = _elelem_setup(shape, base, "SyncClient")
        for _ in range(requests):
            if _elelem_text(sclient.stream(model, PROMPT).final()) != text:
                raise AssertionError("elelem did not assemble the row's text")
    else:
        aclient, model = _elelem_setup(shape, base, "Client")

        async def streams() -> None:
            for _ in range(requests):
                if _elelem_text(await aclient.stream(model, PROMPT).final()) != text:
                    raise AssertionError("elelem did not assemble the row's text")

        asyncio.run(streams())


if __name__ == "__main__":
    raise SystemExit(main())
