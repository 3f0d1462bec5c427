"""Embedding throughput: elelem against the OpenAI SDK and a floor, on loopback.

``python -m benchmarks.embeddings [--inputs 8192] [--dimensions 1536] [--runs 5]``

A loopback server in its own process (so its work is not counted) answers
``POST /v1/embeddings`` as OpenAI does: one vector per input, base64 of
little-endian float32 when the request asks for ``encoding_format: base64``
(what both elelem and the OpenAI SDK ask for), else JSON floats.  The
bodies are made once per batch size, so the server costs the same for
every client.  Each client embeds ``--inputs`` texts (in requests of 2,048,
OpenAI's limit: elelem cuts them itself, the SDK and the floor are called
once per 2,048) and must return every vector with the exact values sent;
a mismatch is a failure, never a timing.  Measured: the CPU time of this
process (``time.process_time``) and the wall time per run, medians over the
runs, clients interleaved and rotated from run to run; the ratio is against
the floor of the same run.

Clients:

- ``floor``: ``httpx2.Client`` POST, ``msgspec`` decode, ``base64`` into
  ``array('f')`` — the least a Python client must do.
- ``elelem_sync``: ``SyncClient.embed`` (the one driver, batching, usage and
  cost); ``elelem_async``: ``Client.embed`` (four requests in flight).
- ``openai_sdk``: ``OpenAI().embeddings.create`` (the ``bench`` extra); its
  vectors are Python lists of floats.

Needs the ``bench`` extra for the SDK; without it that client is skipped.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import socketserver
import statistics
import struct
import subprocess
import sys
import threading
import time
from array import array
from collections.abc import Callable
from typing import Any, ClassVar

import anyio
import httpx2
import msgspec

BATCH = 2048
MODEL = "text-embedding-3-small"


def vector_of(index: int, dimensions: int) -> list[float]:
    """The vector the server sends for the ``index``-th input of a request
    (exact in float32)."""
    return [((index + d) % 64) / 64.0 for d in range(dimensions)]


def _body(count: int, dimensions: int, b64: bool) -> bytes:
    data = []
    for i in range(count):
        values = vector_of(i, dimensions)
        encoded: Any = base64.b64encode(struct.pack(f"<{dimensions}f", *values)).decode()
        data.append({"object": "embedding", "index": i, "embedding": encoded if b64 else values})
    usage = {"prompt_tokens": count, "total_tokens": count}
    return json.dumps({"object": "list", "data": data, "model": MODEL, "usage": usage}).encode()


class _Handler(socketserver.StreamRequestHandler):
    bodies: ClassVar[dict[tuple[int, bool], bytes]] = {}
    dimensions = 0

    def handle(self) -> None:
        while True:
            line = self.rfile.readline()
            if not line:
                return
            length = 0
            while (header := self.rfile.readline()) not in (b"\r\n", b"\n", b""):
                name, _, value = header.decode("latin-1").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            request = json.loads(self.rfile.read(length))
            key = (len(request["input"]), request.get("encoding_format") == "base64")
            if key not in self.bodies:
                self.bodies[key] = _body(key[0], self.dimensions, key[1])
            body = self.bodies[key]
            head = (
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                f"content-length: {len(body)}\r\n\r\n"
            )
            self.wfile.write(head.encode() + body)


def serve(dimensions: int) -> None:
    """Serve on an ephemeral port until stdin closes; print the port first."""
    _Handler.dimensions = dimensions
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(server.server_address[1], flush=True)
    sys.stdin.read()
    server.shutdown()


def _check(vectors: list[Any], inputs: int, dimensions: int) -> None:
    if len(vectors) != inputs:
        raise AssertionError(f"{len(vectors)} vectors for {inputs} inputs")
    for i in (0, BATCH - 1, inputs - 1):
        if i < inputs and list(vectors[i]) != vector_of(i % BATCH, dimensions):
            raise AssertionError(f"vector {i} differs from what was sent")


def _chunks(texts: list[str]) -> list[list[str]]:
    return [texts[i : i + BATCH] for i in range(0, len(texts), BATCH)]


def floor(url: str) -> Callable[[list[str]], list[Any]]:
    """httpx2 + msgspec + base64 into array('f')."""
    http = httpx2.Client()
    decoder = msgspec.json.Decoder()

    def run(texts: list[str]) -> list[Any]:
        out: list[Any] = []
        for chunk in _chunks(texts):
            body = {"model": MODEL, "input": chunk, "encoding_format": "base64"}
            reply = http.post(url + "/v1/embeddings", content=msgspec.json.encode(body),
                              headers={"authorization": "Bearer k",
                                       "content-type": "application/json"})  # fmt: skip
            for item in decoder.decode(reply.content)["data"]:
                vector = array("f")
                vector.frombytes(base64.b64decode(item["embedding"]))
                out.append(vector)
        return out

    return run


def _env(url: str) -> dict[str, str]:
    return {"OPENAI_BASE_URL": url + "/v1", "OPENAI_API_KEY": "k", "ELELEM_CONFIG": "/nonexistent"}


def elelem_sync(url: str) -> Callable[[list[str]], list[Any]]:
    """SyncClient.embed."""
    from elelem import SyncClient

    client = SyncClient(env=_env(url), max_retries=0)
    return lambda texts: list(client.embed(f"openai:{MODEL}", texts))


def elelem_async(url: str) -> Callable[[list[str]], list[Any]]:
    """Client.embed, in a fresh event loop per run (as a script would)."""
    from elelem import Client

    def run(texts: list[str]) -> list[Any]:
        async def main() -> list[Any]:
            async with Client(env=_env(url), max_retries=0) as client:
                return list(await client.embed(f"openai:{MODEL}", texts))

        return anyio.run(main)

    return run


def openai_sdk(url: str) -> Callable[[list[str]], list[Any]] | None:
    """OpenAI().embeddings.create, once per 2,048 inputs."""
    try:
        import openai
    except ImportError:
        return None
    client = openai.OpenAI(api_key="k", base_url=url + "/v1", max_retries=0)

    def run(texts: list[str]) -> list[Any]:
        out: list[Any] = []
        for chunk in _chunks(texts):
            out += [d.embedding for d in client.embeddings.create(model=MODEL, input=chunk).data]
        return out

    return run


CLIENTS = {
    "floor": floor,
    "elelem_sync": elelem_sync,
    "elelem_async": elelem_async,
    "openai_sdk": openai_sdk,
}


def measure(url: str, inputs: int, dimensions: int, runs: int) -> dict[str, dict[str, float]]:
    """Median CPU and wall seconds per client, and CPU ratios to the floor."""
    texts = [f"text {i}" for i in range(inputs)]
    made = {name: make(url) for name, make in CLIENTS.items()}
    clients = {name: fn for name, fn in made.items() if fn is not None}
    for fn in clients.values():  # warm-up: imports, connections, server bodies
        fn(texts[: BATCH + 1])
    cpu: dict[str, list[float]] = {name: [] for name in clients}
    wall: dict[str, list[float]] = {name: [] for name in clients}
    ratios: dict[str, list[float]] = {name: [] for name in clients}
    order = list(clients)
    for run in range(runs):
        spent: dict[str, float] = {}
        for name in order[run % len(order) :] + order[: run % len(order)]:
            c0, w0 = time.process_time(), time.perf_counter()
            vectors = clients[name](texts)
            spent[name] = time.process_time() - c0
            wall[name].append(time.perf_counter() - w0)
            _check(vectors, inputs, dimensions)
            cpu[name].append(spent[name])
        for name in clients:
            ratios[name].append(spent[name] / spent["floor"])
    return {
        name: {
            "cpu_s": statistics.median(cpu[name]),
            "wall_s": statistics.median(wall[name]),
            "cpu_ratio_to_floor": statistics.median(ratios[name]),
            "inputs_per_cpu_s": inputs / statistics.median(cpu[name]),
        }
        for name in clients
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one row per client (and JSON with --json)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=8192)
    parser.add_argument("--dimensions", type=int, default=1536)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.dimensions)
        return 0
    server = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.embeddings", "--serve", "--dimensions",
         str(args.dimensions)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=dict(os.environ),
    )  # fmt: skip
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{server.stdout.readline().strip()}"
        results = measure(url, args.inputs, args.dimensions, args.runs)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=30)
    print(f"{args.inputs} inputs x {args.dimensions} dimensions, median of {args.runs} runs")
    print(f"{'client':<14}{'cpu s':>9}{'wall s':>9}{'x floor':>9}{'inputs/cpu s':>14}")
    for name, row in results.items():
        print(f"{name:<14}{row['cpu_s']:>9.3f}{row['wall_s']:>9.3f}"
              f"{row['cpu_ratio_to_floor']:>9.2f}{row['inputs_per_cpu_s']:>14,.0f}")  # fmt: skip
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
