"""One gateway measurement: ``python -m benchmarks.gateway_child`` with a
JSON job on stdin, one JSON result on stdout.

The child builds ONE client (outside the measurement), sends a warm-up
batch of ``n`` small streams at once (lazy imports, first-use setup, and
the ``n`` connections the measured batch then reuses, as a gateway's
would be after its first burst), then measures ``n`` concurrent streams
of the real stream through that client: CPU time of the whole process
(``time.process_time``, every thread), wall time, each stream's time to
its first text, the resident set's peak above its level after the warm-up
(per open stream), and failures (an exception, or a final text other than
the stream's own: never timed).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sys
import time
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

from benchmarks.child import _peak_rss_kb, _reset_peak_rss
from benchmarks.clients import (
    API_PATHS,
    PROMPT,
    REQUEST_BODIES,
    _elelem_setup,
    _floor_extractor,
    _need,
)
from benchmarks.gateway_server import raise_open_files
from benchmarks.streams import MODELS, text_digest

POOL = 1000
"""The floor's pool: the size elelem's default pool and the SDKs' have."""

Stamp = Callable[[], None]
One = Callable[[Stamp], Awaitable[str]]


def floor(shape: str, base: str, pool: str = "httpx2") -> One:
    """httpx2's async client (a pool of :data:`POOL`), SSE line split and
    ``orjson.loads`` of each ``data:`` line: the least a client must do.

    ``pool``: ``httpx2`` (its own pool), ``bounded`` (elelem's
    :class:`~elelem.transport.pool.BoundedPool` under the same client: the
    floor's parsing with elelem's pool), ``sharded`` (10 clients of 100
    connections each, taken in turn: the other way out of the O(N²) pool)."""
    httpx2 = _need("httpx2")
    orjson = _need("orjson")
    limits = httpx2.Limits(max_connections=POOL, max_keepalive_connections=POOL)
    if pool == "bounded":
        from elelem.transport.driver import verifying_context
        from elelem.transport.pool import PooledTransport

        transport = PooledTransport(verifying_context(), limits)
        clients = [httpx2.AsyncClient(timeout=None, limits=limits, transport=transport)]
    elif pool == "sharded":
        shard = httpx2.Limits(max_connections=POOL // 10, max_keepalive_connections=POOL // 10)
        clients = [httpx2.AsyncClient(timeout=None, limits=shard) for _ in range(10)]
    else:
        clients = [httpx2.AsyncClient(timeout=None, limits=limits)]
    turn = iter(range(1 << 62))
    url = base + API_PATHS[shape]
    body, take, loads = REQUEST_BODIES[shape], _floor_extractor(shape), orjson.loads

    async def one(first: Stamp) -> str:
        client = clients[next(turn) % len(clients)]
        out: list[str] = []
        pending = b""
        async with client.stream("POST", url, json=body, headers={"x-api-key": "bench"}) as resp:
            resp.raise_for_status()
            async for piece in resp.aiter_bytes():
                lines = (pending + piece).split(b"\n")
                for line in lines[:-1]:
                    if line[:5] == b"data:" and line[5:].strip() != b"[DONE]":
                        take(loads(line[5:]), out)
                        if len(out) == 1:
                            first()
                pending = lines[-1]
        return "".join(out)

    return one


def elelem(shape: str, base: str) -> One:
    """elelem's ``Client()`` with its defaults, every chunk iterated (as a
    gateway forwarding them would), the text of the text deltas kept."""
    client, model = _elelem_setup(shape, base, "Client")
    text_delta = _need("elelem.stream").TextDelta

    async def one(first: Stamp) -> str:
        out: list[str] = []
        async with client.stream(model, PROMPT) as stream:
            async for chunk in stream:
                if type(chunk) is text_delta:
                    out.append(chunk.text)
                    if len(out) == 1:
                        first()
        return "".join(out)

    return one


def sdk(shape: str, base: str) -> One:
    """The official async SDK with its defaults, raw events iterated."""
    if shape == "anthropic_messages":
        client = _need("anthropic").AsyncAnthropic(api_key="bench", base_url=base, max_retries=0)

        async def anthropic(first: Stamp) -> str:
            out: list[str] = []
            stream = await client.messages.create(
                model=MODELS[shape],
                max_tokens=64000,
                messages=[{"role": "user", "content": PROMPT}],
                stream=True,
            )
            async for event in stream:
                if event.type == "content_block_delta":
                    out.append(event.delta.text)
                    if len(out) == 1:
                        first()
            return "".join(out)

        return anthropic
    oc = _need("openai").AsyncOpenAI(api_key="bench", base_url=base + "/v1", max_retries=0)

    async def chat(first: Stamp) -> str:
        out: list[str] = []
        stream = await oc.chat.completions.create(
            model=MODELS[shape], messages=[{"role": "user", "content": PROMPT}], stream=True
        )
        async for chunk in stream:
            for choice in chunk.choices:
                if choice.delta.content:
                    out.append(choice.delta.content)
                    if len(out) == 1:
                        first()
        return "".join(out)

    return chat


CLIENTS: dict[str, Callable[[str, str], One]] = {
    "floor": floor,
    "elelem": elelem,
    "sdk": sdk,
    "floor_bounded": lambda shape, base: floor(shape, base, "bounded"),
    "floor_sharded": lambda shape, base: floor(shape, base, "sharded"),
}


async def batch(one: One, n: int) -> tuple[list[str | BaseException], list[float]]:
    """``n`` concurrent streams; each one's text (or error) and time to first text."""
    ttft: list[float] = []

    async def timed() -> str:
        start = time.perf_counter()
        return await one(lambda: ttft.append(time.perf_counter() - start))

    results = await asyncio.gather(*(timed() for _ in range(n)), return_exceptions=True)
    return list(results), ttft


def _failures(results: list[str | BaseException], digest: str) -> list[str]:
    out = []
    for result in results:
        if isinstance(result, BaseException):
            out.append(f"{type(result).__name__}: {str(result)[:160]}")
        elif text_digest(result) != digest:
            out.append(f"wrong text ({len(result)} chars)")
    return out


async def _measure_from_now(url: str) -> None:
    """Tell the server the warm-up is over: later requests get the real stream."""
    host, _, path = url.removeprefix("http://").partition("/")
    name, _, port = host.partition(":")
    reader, writer = await asyncio.open_connection(name, int(port))
    writer.write(f"GET /{path} HTTP/1.1\r\nhost: {host}\r\n\r\n".encode())
    await writer.drain()
    status = await reader.readline()
    writer.close()
    if b" 204 " not in status:
        raise RuntimeError(f"the server did not start measuring: {status!r}")


async def measure(job: dict[str, Any]) -> dict[str, Any]:
    """Warm up, then measure ``job['n']`` concurrent streams."""
    n = job["n"]
    one = CLIENTS[job["client"]](job["shape"], job["base"])
    warm, _ = await batch(one, n)
    # A warm-up stream that failed is told, and the measured batch runs all
    # the same: its own failures are the result (the SDKs' connect timeout
    # fails most of a first burst of 1,000).
    warm_failed = _failures(warm, job["warm_digest"])
    await _measure_from_now(job["measure"])
    gc.collect()
    rss0 = _reset_peak_rss()
    wall0, cpu0 = time.perf_counter(), time.process_time()
    results, ttft = await batch(one, n)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    rss = max(0, _peak_rss_kb() - rss0)
    failed = _failures(results, job["digest"])
    ok = n - len(failed)
    events = ok * job["events"]
    return {
        "status": "ok",
        "failures": len(failed),
        "first_failure": failed[0] if failed else None,
        "warm_failures": len(warm_failed),
        "first_warm_failure": warm_failed[0] if warm_failed else None,
        "cpu_s": cpu,
        "wall_s": wall,
        "events": events,
        "cpu_us_per_event": cpu / events * 1e6 if events else None,
        "events_per_s": events / wall if wall else None,
        "rss_kb_per_stream": rss / n,
        "ttft_s": sorted(ttft),
    }


def main() -> None:
    """Read the job from stdin, print one JSON line."""
    job = json.load(sys.stdin)
    raise_open_files()
    try:
        result = asyncio.run(measure(job))
    except Exception as exc:  # noqa: BLE001 - a client's failure is a result to report
        last = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{last.filename.rsplit('/', 1)[-1]}:{last.lineno}"
        result = {"status": f"failed: {type(exc).__name__}: {str(exc)[:160]} ({where})"}
    print(json.dumps(result), flush=True)
    sys.stdout.flush()
    os._exit(0)  # some clients leave threads behind; the result is out


if __name__ == "__main__":
    main()
