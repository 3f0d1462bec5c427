"""Live sessions: CPU per server event against the floor, and memory per open
session: ``python -m benchmarks.live_events [--events N] [--runs R] [--sessions S]``.

A server process (``websockets``' asyncio server on 127.0.0.1, port 0) plays
an OpenAI Realtime answer to each connection as fast as the socket takes it:
``session.created``, then responses of 100 speech pieces each (an
``response.output_audio.delta`` of 40 ms of PCM16 at 24 kHz, 2,560 base64
characters, and a ``response.output_audio_transcript.delta``), each response
opened and closed as the API does (``response.created``,
``response.output_item.added``, ``response.done`` with usage), then a normal
close.  Each client reads every message; CPU time (``time.process_time``,
every thread) from the first message to the close, divided by the events:

- ``floor websockets``: the ``websockets`` asyncio client, ``orjson.loads``
  per message;
- ``floor wsproto``: an asyncio protocol feeding ``wsproto``, ``orjson.loads``
  per message (the same floor over the other library);
- ``elelem websockets``: :class:`~elelem.transport.live.LiveConnection`
  with the OpenAI Realtime protocol (the driver and the sans-IO protocol:
  every event mapped, the speech held for the response's audio block);
- ``elelem wsproto``: the same protocol fed by the wsproto loop;
- ``elelem session``: the whole async face, :func:`elelem.live` writing a
  SQLite log (the core, the one assembler, one audio block and one record
  per response).

Clients alternate, their order rotating per run; medians over the runs.
Memory: ``--sessions`` async sessions opened at once against the same
server (each past its ``session.created``), the Python heap they hold
(``tracemalloc``) and the process's resident set grown, divided by the
sessions.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

PIECES = 100  # speech pieces per response
PCM = bytes(range(256)) * 7 + bytes(128)  # 1,920 bytes: 40 ms of PCM16 at 24 kHz

SERVER = r"""
import asyncio, json, sys
from websockets.asyncio.server import serve

EVENTS = json.loads(sys.stdin.readline())

async def session(ws):
    if ws.request.path.startswith("/idle"):
        await ws.send(EVENTS[0])
        await ws.wait_closed()
        return
    for event in EVENTS:
        await ws.send(event)
    await ws.close()

async def main():
    async with serve(session, "127.0.0.1", 0, compression=None, max_queue=None) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

asyncio.run(main())
"""


def script(events: int) -> list[str]:
    """The server's messages: about ``events`` of them, whole responses."""
    audio = base64.b64encode(PCM).decode()
    out = [json.dumps({"type": "session.created", "event_id": "e0", "session": {"id": "s"}})]
    n = 0
    while len(out) < events:
        n += 1
        rid, item = f"resp_{n}", f"item_{n}"
        out.append(json.dumps({"type": "response.created", "event_id": "c",
                               "response": {"id": rid, "status": "in_progress"}}))  # fmt: skip
        out.append(json.dumps({"type": "response.output_item.added", "event_id": "a",
                               "response_id": rid, "output_index": 0,
                               "item": {"id": item, "type": "message", "role": "assistant"}}))  # fmt: skip
        for i in range(PIECES):
            base = {"event_id": f"ev_{n}_{i}", "response_id": rid, "item_id": item,
                    "output_index": 0, "content_index": 0}  # fmt: skip
            out.append(json.dumps({"type": "response.output_audio.delta", **base, "delta": audio}))
            out.append(json.dumps({"type": "response.output_audio_transcript.delta", **base,
                                   "delta": "word "}))  # fmt: skip
        out.append(json.dumps({"type": "response.done", "event_id": "d",
                               "response": {"id": rid, "status": "completed",
                                            "usage": {"input_tokens": 10, "output_tokens": 20}}}))  # fmt: skip
    return out


def start_server(events: list[str]) -> tuple[subprocess.Popen[str], int]:
    """The server process and its port (it ends when its stdin closes)."""
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(events) + "\n")
    process.stdin.flush()
    return process, int(process.stdout.readline())


# -- the clients ---------------------------------------------------------------------


async def floor_websockets(url: str) -> int:
    import orjson
    from websockets.asyncio.client import connect

    loads, count = orjson.loads, 0
    async with connect(url, compression=None, max_size=None) as ws:
        async for message in ws:
            loads(message)
            count += 1
    return count


class _WsprotoReader(asyncio.Protocol):
    """An asyncio protocol feeding wsproto: each whole text message to ``take``."""

    def __init__(self, host: str, path: str, take: Any) -> None:
        from wsproto import ConnectionType, WSConnection
        from wsproto.events import Request

        self.ws = WSConnection(ConnectionType.CLIENT)
        self.request = Request(host=host, target=path)
        self.take = take
        self.parts: list[str] = []
        self.done = asyncio.get_running_loop().create_future()
        self.count = 0

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        transport.write(self.ws.send(self.request))

    def data_received(self, data: bytes) -> None:
        from wsproto.events import AcceptConnection, CloseConnection, TextMessage

        self.ws.receive_data(data)
        for event in self.ws.events():
            if type(event) is TextMessage:
                if event.message_finished and not self.parts:
                    self.take(event.data)
                    self.count += 1
                else:
                    self.parts.append(event.data)
                    if event.message_finished:
                        self.take("".join(self.parts))
                        self.parts.clear()
                        self.count += 1
            elif isinstance(event, CloseConnection):
                self.transport.write(self.ws.send(event.response()))
                self.transport.close()
            elif isinstance(event, AcceptConnection):
                continue

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(self.count)


async def _wsproto(port: int, take: Any) -> int:
    loop = asyncio.get_running_loop()
    _, protocol = await loop.create_connection(
        lambda: _WsprotoReader(f"127.0.0.1:{port}", "/", take), "127.0.0.1", port
    )
    return int(await protocol.done)


async def floor_wsproto(port: int) -> int:
    import orjson

    return await _wsproto(port, orjson.loads)


async def elelem_wsproto(port: int) -> int:
    from elelem.shapes.openai_responses.live import RealtimeProtocol
    from elelem.vocabulary import ProviderId

    protocol = RealtimeProtocol(ProviderId("openai"))
    return await _wsproto(port, protocol.receive)


async def elelem_websockets(port: int) -> int:
    from elelem.shapes.openai_responses.live import RealtimeProtocol
    from elelem.transport import Endpoint
    from elelem.transport.faces import awaiting
    from elelem.transport.live import LiveConnection
    from elelem.vocabulary import ProviderId
    from elelem.wire.live import LiveSettings

    endpoint = Endpoint(ProviderId("openai"), f"http://127.0.0.1:{port}", "sk-bench")
    protocol = RealtimeProtocol(ProviderId("openai"))
    connection = LiveConnection(protocol, endpoint, "gpt-realtime", blocking=False)
    connection.limits = type(connection.limits)(frame=1 << 30)
    await awaiting(connection.connecting(LiveSettings("gpt-realtime")))
    count = 0
    while await awaiting(connection.receiving()) is not None:
        count += 1
    return count


async def elelem_session(port: int, folder: str) -> int:
    import elelem
    from elelem.conversation import Conversation, SQLiteStore

    env = {"OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": f"http://127.0.0.1:{port}"}
    store = SQLiteStore(Path(folder) / f"bench-{time.monotonic_ns()}.db")
    conversation = Conversation.create(store)
    count = 0
    async with elelem.Client(env=env) as client:
        session = elelem.live(client, "openai:gpt-realtime", conversation=conversation)
        session.connection.limits = type(session.connection.limits)(frame=1 << 30)
        async with session:
            async for _ in session:
                count += 1
    store.close()
    return count


# -- the measurement -----------------------------------------------------------------


def measure(name: str, port: int, folder: str) -> tuple[float, int]:
    """CPU seconds and messages of one client reading one session."""
    url = f"ws://127.0.0.1:{port}/"
    runs = {
        "floor websockets": lambda: floor_websockets(url),
        "floor wsproto": lambda: floor_wsproto(port),
        "elelem websockets": lambda: elelem_websockets(port),
        "elelem wsproto": lambda: elelem_wsproto(port),
        "elelem session": lambda: elelem_session(port, folder),
    }
    start = time.process_time()
    count = asyncio.run(runs[name]())
    return time.process_time() - start, count


CLIENTS = ("floor websockets", "elelem websockets", "elelem session", "floor wsproto",
           "elelem wsproto")  # fmt: skip


def cpu_table(port: int, events: int, runs: int) -> dict[str, float]:
    """Median microseconds of CPU per server event, per client."""
    samples: dict[str, list[float]] = {name: [] for name in CLIENTS}
    with tempfile.TemporaryDirectory() as folder:
        for name in CLIENTS:
            measure(name, port, folder)  # warm-up: imports, first use
        for run in range(runs):
            order = CLIENTS[run % len(CLIENTS) :] + CLIENTS[: run % len(CLIENTS)]
            for name in order:
                seconds, count = measure(name, port, folder)
                if name != "elelem session" and count != events:
                    raise AssertionError(f"{name} read {count} of {events} messages")
                samples[name].append(seconds * 1e6 / events)
    return {name: statistics.median(values) for name, values in samples.items()}


async def _open_sessions(port: int, count: int, folder: str) -> tuple[float, float]:
    import elelem
    from elelem.conversation import Conversation, SQLiteStore

    env = {"OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/idle"}
    store = SQLiteStore(Path(folder) / "sessions.db")
    async with elelem.Client(env=env) as client:
        warm = elelem.live(client, "openai:gpt-realtime", conversation=Conversation.create(store))
        async with warm:
            await anext(aiter(warm))
        rss_before = _rss()
        tracemalloc.start()
        heap_before = tracemalloc.get_traced_memory()[0]
        sessions = [
            elelem.live(client, "openai:gpt-realtime", conversation=Conversation.create(store))
            for _ in range(count)
        ]
        for session in sessions:
            await session.__aenter__()
        readers = [aiter(session) for session in sessions]
        for reader in readers:
            await anext(reader)  # session.created: noted in the log
        heap = (tracemalloc.get_traced_memory()[0] - heap_before) / count
        tracemalloc.stop()
        rss = (_rss() - rss_before) / count
        for session in sessions:
            await session.__aexit__(None, None, None)
    store.close()
    return heap, rss


def _rss() -> float:
    with open(f"/proc/{os.getpid()}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return float(line.split()[1]) * 1024
    return 0.0


def main() -> None:
    """Print both tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sessions", type=int, default=100)
    args = parser.parse_args()
    events = script(args.events)
    server, port = start_server(events)
    try:
        table = cpu_table(port, len(events), args.runs)
        print(f"{len(events):,} server events, median of {args.runs} runs (CPU µs per event)")
        floors = {"websockets": table["floor websockets"], "wsproto": table["floor wsproto"]}
        for name, micros in table.items():
            library = name.split()[-1] if name.split()[-1] in floors else "websockets"
            ratio = micros / floors[library]
            print(f"  {name:<18} {micros:7.2f}   {ratio:4.2f}x the {library} floor")
        with tempfile.TemporaryDirectory() as folder:
            heap, rss = asyncio.run(_open_sessions(port, args.sessions, folder))
        print(f"{args.sessions} open sessions: {heap / 1024:.1f} KiB of Python heap each, "
              f"{rss / 1024:.1f} KiB resident each")  # fmt: skip
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(10)


if __name__ == "__main__":
    main()
