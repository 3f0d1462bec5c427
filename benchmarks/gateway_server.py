"""The gateway benchmark's loopback server: thousands of concurrent streams
from one process, ``python -m benchmarks.gateway_server STREAMS_FILE``.

An asyncio server on raw :class:`asyncio.Protocol` connections (no thread
and no task per connection; a listen backlog of 4,096; the process's open
file limit raised to its hard limit), on 127.0.0.1 and an ephemeral port
it prints on stdout.  It serves until its standard input closes (the
driver's end of the pipe), so it never outlives the run.

``STREAMS_FILE`` is a pickled ``{key: tuple of SSE event bytes}``.  A
request path ``/g/<nonce>/<key>/<mode>/<anything>`` selects the stream:
until ``/measure/<nonce>`` was requested, the stream ``warm:<shape of
key>`` in one write (the child's warm-up batch, which also opens the
connections), from then on ``key`` in ``mode``:

- ``bulk``: the whole chunked body in one write;
- ``paced``: one event per tick of :data:`TICK` seconds (50 events per
  second per stream), every paced stream served by one timer: a tick
  writes the next event of each stream, one HTTP chunk each.

Responses are ``200 text/event-stream``, chunked, and connections are kept
alive.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import resource
import sys
from pathlib import Path

TICK = 0.02
"""Seconds between two events of a paced stream (50 events per second)."""

BACKLOG = 4096

_HEAD = (
    b"HTTP/1.1 200 OK\r\n"
    b"content-type: text/event-stream; charset=utf-8\r\n"
    b"cache-control: no-cache\r\n"
    b"transfer-encoding: chunked\r\n\r\n"
)
_END = b"0\r\n\r\n"


def chunked(data: bytes) -> bytes:
    """``data`` as one HTTP/1.1 chunk."""
    return b"%x\r\n%s\r\n" % (len(data), data)


def raise_open_files() -> int:
    """Raise this process's soft limit of open files to its hard limit
    (thousands of sockets); returns the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


class Streams:
    """The prepared bodies: whole (bulk) and one chunk per event (paced)."""

    def __init__(self, raw: dict[str, tuple[bytes, ...]]) -> None:
        self.bulk = {k: _HEAD + chunked(b"".join(evs)) + _END for k, evs in raw.items()}
        self.paced = {k: tuple(chunked(ev) for ev in evs) for k, evs in raw.items()}
        self.measured: set[str] = set()  # the nonces whose warm-up is over


class Pacer:
    """One timer for every paced stream: each tick writes one event of each."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._active: dict[int, tuple[asyncio.Transport, tuple[bytes, ...], list[int]]] = {}
        self._next = 0
        self._running = False

    def add(self, transport: asyncio.Transport, events: tuple[bytes, ...]) -> None:
        transport.write(_HEAD + events[0])
        self._active[self._next] = (transport, events, [1])
        self._next += 1
        if not self._running:
            self._running = True
            self._loop.call_later(TICK, self._tick, self._loop.time() + TICK)

    def _tick(self, due: float) -> None:
        done = []
        for key, (transport, events, at) in self._active.items():
            if transport.is_closing():
                done.append(key)
                continue
            i = at[0]
            if i < len(events):
                transport.write(events[i])
                at[0] = i + 1
            else:
                transport.write(_END)
                done.append(key)
        for key in done:
            del self._active[key]
        if not self._active:
            self._running = False
            return
        # On a fixed schedule: a late tick does not push every later one back.
        due += TICK
        self._loop.call_at(max(due, self._loop.time()), self._tick, due)


class Connection(asyncio.Protocol):
    """One client connection: read requests, answer each as its path says."""

    def __init__(self, streams: Streams, pacer: Pacer) -> None:
        self._streams, self._pacer = streams, pacer
        self._buf = b""
        self._transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        self._buf += data
        while True:
            head, sep, rest = self._buf.partition(b"\r\n\r\n")
            if not sep:
                return
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if len(rest) < length:
                return
            self._buf = rest[length:]
            self._respond(head.split(b" ", 2)[1].decode("latin-1"))

    def _respond(self, path: str) -> None:
        transport, streams = self._transport, self._streams
        assert transport is not None
        parts = path.split("/")
        if len(parts) == 3 and parts[1] == "measure":
            streams.measured.add(parts[2])
            transport.write(b"HTTP/1.1 204 No Content\r\n\r\n")
            return
        if len(parts) < 5 or parts[1] != "g":
            body = b'{"error":"no stream at this path"}'
            transport.write(
                b"HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\n"
                b"content-length: %d\r\n\r\n%s" % (len(body), body)
            )
            return
        nonce, key, mode = parts[2], parts[3], parts[4]
        if nonce not in streams.measured:
            transport.write(streams.bulk["warm:" + key.partition(":")[0]])
        elif mode == "paced":
            self._pacer.add(transport, streams.paced[key])
        else:
            transport.write(streams.bulk[key])


async def serve(raw: dict[str, tuple[bytes, ...]]) -> None:
    """Serve ``raw`` until stdin closes."""
    loop = asyncio.get_running_loop()
    streams, pacer = Streams(raw), Pacer(loop)
    server = await loop.create_server(
        lambda: Connection(streams, pacer), "127.0.0.1", 0, backlog=BACKLOG
    )
    print(server.sockets[0].getsockname()[1], flush=True)
    closed = loop.create_future()
    loop.add_reader(sys.stdin.fileno(), _stdin_closed, closed)
    await closed


def _stdin_closed(closed: asyncio.Future[None]) -> None:
    if not os.read(sys.stdin.fileno(), 65536) and not closed.done():
        closed.set_result(None)


def main(argv: list[str]) -> None:
    """Serve the streams in ``argv[0]`` until stdin closes."""
    raise_open_files()
    with Path(argv[0]).open("rb") as fh:
        raw: dict[str, tuple[bytes, ...]] = pickle.load(fh)
    asyncio.run(serve(raw))


if __name__ == "__main__":
    main(sys.argv[1:])
