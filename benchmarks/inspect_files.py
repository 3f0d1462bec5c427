"""Is ``elelem inspect``'s work in proportion to the file?  ``python -m benchmarks.inspect_files``

Two recordings are generated in a temporary folder and each is inspected
by ``elelem inspect`` in a fresh process (its wall time and peak resident
set, from ``wait4``):

- **HAR**: every streamed SSE exchange of the corpus' VCR.py cassettes (real
  requests, real bodies), repeated into HAR entries up to ``--har-mb``
  megabytes of bodies, and the same at a quarter of that size.  Printed:
  milliseconds per entry at each size and the slope (per-entry cost at the
  large size over the small, same run; linear work gives about 1.0, the
  bar is 1.3x).
- **SSE**: one raw Anthropic Messages SSE body of ``--sse-mb`` megabytes
  (text deltas), and its peak resident set above the peak of inspecting a
  one-frame SSE file (the baseline, same run: interpreter, imports, the
  server), as a fraction of the file's size.  The file is read in pieces;
  what remains is the assembled text the driver holds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SLOPE_BAR = 1.3
CORPUS = Path(os.environ.get("ELELEM_CORPUS", Path(__file__).parent.parent / "tests" / "corpus"))
_SECRET_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "x-goog-api-key"})


def corpus_entries() -> list[dict[str, Any]]:
    """A HAR entry for each streamed SSE exchange of the corpus' cassettes."""
    from elelem.recordings.cassettes import RecordingError, load

    entries = []
    for path in sorted(CORPUS.rglob("*.yaml")):
        try:
            recording = load(path)
        except RecordingError:
            continue  # not every YAML file in the corpus is a cassette
        for i in recording.interactions:
            response, request = i.response, i.request
            if request is None or not response.streamed or response.status != 200:
                continue
            if not response.body.lstrip().startswith((b"data:", b"event:")):
                continue
            headers = [
                {"name": k, "value": v}
                for k, v in request.headers.items()
                if k not in _SECRET_HEADERS
            ]
            entries.append(
                {
                    "request": {
                        "method": request.method,
                        "url": request.uri,
                        "headers": headers,
                        "postData": {"mimeType": "application/json", "text": request.body or ""},
                    },
                    "response": {
                        "status": 200,
                        "headers": [{"name": "content-type", "value": "text/event-stream"}],
                        "content": {
                            "mimeType": "text/event-stream",
                            "text": response.body.decode("utf-8"),
                        },
                    },
                }
            )
    return entries


def write_har(path: Path, entries: list[dict[str, Any]], megabytes: float) -> int:
    """A HAR of ``entries`` repeated until their bodies pass ``megabytes``; its entry count."""
    out: list[dict[str, Any]] = []
    size = 0
    while size < megabytes * 1e6:
        entry = entries[len(out) % len(entries)]
        out.append(entry)
        size += len(entry["response"]["content"]["text"])
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": out}}), encoding="utf-8")
    return len(out)


def write_sse(path: Path, megabytes: float) -> None:
    """An Anthropic Messages SSE body of text deltas, ``megabytes`` long
    (written frame by frame: the writer holds none of it)."""
    from elelem.recordings.loopback import anthropic_text_body

    piece = "Forty characters of text in each delta. "
    first, start, delta, *rest = anthropic_text_body(piece).split(b"\n\n")[:-1]
    with path.open("wb") as out:
        out.write(first + b"\n\n" + start + b"\n\n")
        for _ in range(max(1, int(megabytes * 1e6 / (len(delta) + 2)))):
            out.write(delta + b"\n\n")
        out.write(b"".join(frame + b"\n\n" for frame in rest))


def write_files(folder: Path, har_mb: float, sse_mb: float) -> None:
    """Every file measured, written by this process (run apart from the
    measuring one, whose children would inherit its peak resident set)."""
    entries = corpus_entries()
    counts = {f"x{scale}.har": write_har(folder / f"x{scale}.har", entries, har_mb * scale)
              for scale in SCALES}  # fmt: skip
    write_sse(folder / "tiny.sse", 0.0)
    write_sse(folder / "big.sse", sse_mb)
    (folder / "counts.json").write_text(json.dumps(counts), encoding="utf-8")


SCALES = (0.25, 1.0)


_CHILD = """
import resource, sys
from elelem.command import main
sys.argv = ["elelem", "inspect", sys.argv[1]]
try:
    main()
finally:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    sys.stderr.write(f"\\npeak-rss-kb {peak}\\n")
"""


def inspect(path: Path) -> tuple[float, int]:
    """Wall seconds and peak resident set (bytes) of ``elelem inspect PATH``
    in a fresh process (which reports its own peak: a forked child's
    ``wait4`` figure would count the parent's pages it started with)."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path)], capture_output=True, check=False
    )
    elapsed = time.perf_counter() - started
    last = done.stderr.decode().strip().splitlines()[-1]
    if done.returncode != 0 or not last.startswith("peak-rss-kb "):
        raise SystemExit(f"inspect {path.name} failed: {done.stderr.decode()[-2000:]!r}")
    return elapsed, int(last.split()[1]) * 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--har-mb", type=float, default=45.0)
    parser.add_argument("--sse-mb", type=float, default=60.0)
    parser.add_argument("--write", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.write is not None:
        write_files(args.write, args.har_mb, args.sse_mb)
        return 0
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        sizes = ["--har-mb", str(args.har_mb), "--sse-mb", str(args.sse_mb)]
        subprocess.run(
            [sys.executable, "-m", "benchmarks.inspect_files", "--write", folder, *sizes],
            check=True,
        )
        counts = json.loads((tmp / "counts.json").read_text(encoding="utf-8"))
        per_entry = []
        for scale in SCALES:
            har = tmp / f"x{scale}.har"
            n = counts[har.name]
            seconds, rss = inspect(har)
            per_entry.append(seconds / n)
            mb = har.stat().st_size / 1e6
            print(
                f"HAR {mb:6.1f} MB, {n:5d} entries: {seconds:6.2f} s, "
                f"{seconds / n * 1e3:.2f} ms/entry, peak RSS {rss / 1e6:.0f} MB"
            )
        slope = per_entry[1] / per_entry[0]
        print(f"HAR slope (ms/entry, large over small): {slope:.2f}x (bar {SLOPE_BAR}x)")
        big = tmp / "big.sse"
        _, base = inspect(tmp / "tiny.sse")
        seconds, rss = inspect(big)
        size = big.stat().st_size
        print(
            f"SSE {size / 1e6:6.1f} MB: {seconds:6.2f} s, peak RSS {rss / 1e6:.0f} MB, "
            f"{(rss - base) / 1e6:.0f} MB above the one-frame file's {base / 1e6:.0f} MB "
            f"({(rss - base) / size:.2f}x the file)"
        )
    return 0 if slope <= SLOPE_BAR else 1


if __name__ == "__main__":
    raise SystemExit(main())
