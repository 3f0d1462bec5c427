"""One measuring process: ``python -m benchmarks.child`` with a JSON job on stdin.

The job names the loopback server and a list of tasks.  For each task the
child builds the client (outside the measurement), sends one warm-up request
for a small stream of the same shape so that lazy imports and first-use
setup are paid, then measures one request of the real stream: CPU time of
the whole process (every thread) from the request to the final assembled
message, wall time, and how far the resident set peaked above its level at
the start of the request.  The final
text is checked against the stream's own; a client that assembles anything
else is reported as wrong, never timed.  One JSON object per task is written
to stdout.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import resource
import sys
import time
import traceback
from typing import Any

from benchmarks.clients import CLIENTS, NotAvailable, call
from benchmarks.streams import text_digest


def _status_kb(field: str) -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak_rss() -> int:
    """Start a fresh peak: the resident set now, with Linux's high-water mark
    reset to it (``clear_refs`` 5), so the growth measured is the request's own
    and not hidden under a larger peak left by imports.  Elsewhere the
    lifetime peak stands in (growth then shows only what exceeds it)."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return _status_kb("VmRSS") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _peak_rss_kb() -> int:
    return _status_kb("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def run_task(base: str, task: dict[str, Any], loop: asyncio.AbstractEventLoop) -> dict[str, Any]:
    """Measure one task; failures come back as ``status`` text, never as a crash."""
    out: dict[str, Any] = {k: task[k] for k in ("client", "shape", "mode", "key")}
    url = f"{base}/s/{task['nonce']}/{task['warm']},{task['key']}/{task['mode']}"
    try:
        runner = CLIENTS[task["client"]].prepare(task["shape"], url)
        warm = call(runner, loop)
        if text_digest(warm) != task["warm_digest"]:
            out["status"] = f"wrong result on warm-up ({len(warm)} chars)"
            return out
        gc.collect()
        rss0 = _reset_peak_rss()
        wall0 = time.perf_counter()
        cpu0 = time.process_time()
        text = call(runner, loop)
        cpu1 = time.process_time()
        wall1 = time.perf_counter()
        rss1 = _peak_rss_kb()
    except NotAvailable as exc:
        out["status"] = f"not available: {exc}"
        return out
    except Exception as exc:  # noqa: BLE001 - a peer's failure is a result to report
        last = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{last.filename.rsplit('/', 1)[-1]}:{last.lineno}"
        out["status"] = f"failed: {type(exc).__name__}: {str(exc)[:160]} ({where})"
        return out
    if text_digest(text) != task["digest"]:
        out["status"] = f"wrong result ({len(text)} chars, expected {task['chars']})"
        return out
    out.update(status="ok", cpu_s=cpu1 - cpu0, wall_s=wall1 - wall0, rss_kb=max(0, rss1 - rss0))
    return out


def main() -> None:
    """Read the job from stdin, run every task, print one JSON line each."""
    job = json.load(sys.stdin)
    loop = asyncio.new_event_loop()
    for task in job["tasks"]:
        print(json.dumps(run_task(job["base"], task, loop)), flush=True)
    # Some clients leave non-daemon threads behind (SyncClient's loop thread,
    # LiteLLM's loggers); the measurements are out, so leave without them.
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
