"""The loopback server the benchmark clients stream from, run as its own process.

``python -m benchmarks.server STREAMS_FILE`` loads the prepared streams
(a pickled ``{key: tuple of SSE event bytes}``), listens on 127.0.0.1 on an
ephemeral port, prints the port on stdout and serves until its standard
input closes (the driver's end of the pipe), so it never outlives the run.

A request path ``/s/<nonce>/<key>[,<key>...]/<mode>/<anything>`` selects the
stream and the delivery mode, whatever API path the client appends to its
base URL.  The n-th request under one prefix gets the n-th key (the last key
once they run out), so one client instance can take a small warm-up stream
and then the measured one from the same base URL.  Modes:

- ``bulk``: the whole body in one chunk, one write;
- ``per_event``: one HTTP chunk and one ``send`` per SSE event, with
  ``TCP_NODELAY`` so each event leaves as its own segment.

Every response is ``200 text/event-stream`` with chunked transfer encoding,
as the providers send it; connections are kept alive between requests.
"""

from __future__ import annotations

import os
import pickle
import socket
import socketserver
import sys
import threading
from pathlib import Path

MODES = ("bulk", "per_event")


def chunked(data: bytes) -> bytes:
    """``data`` as one HTTP/1.1 chunk."""
    return b"%x\r\n%s\r\n" % (len(data), data)


class Streams:
    """Prepared response bodies, pre-framed for both delivery modes."""

    def __init__(self, streams: dict[str, tuple[bytes, ...]]) -> None:
        self.bulk = {key: chunked(b"".join(evs)) for key, evs in streams.items()}
        self.per_event = {key: tuple(chunked(ev) for ev in evs) for key, evs in streams.items()}


_HEAD_OK = (
    b"HTTP/1.1 200 OK\r\n"
    b"content-type: text/event-stream; charset=utf-8\r\n"
    b"cache-control: no-cache\r\n"
    b"transfer-encoding: chunked\r\n\r\n"
)
_END = b"0\r\n\r\n"


def _not_found(path: str) -> bytes:
    body = f'{{"error":{{"type":"not_found_error","message":"no stream at {path}"}}}}'.encode()
    return (
        b"HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\n\r\n%s" % (len(body), body)
    )


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buf = b""
        while True:
            while b"\r\n\r\n" not in buf:
                data = sock.recv(65536)
                if not data:
                    return
                buf += data
            head, _, buf = buf.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            while len(buf) < length:
                data = sock.recv(65536)
                if not data:
                    return
                buf += data
            buf = buf[length:]
            self._respond(sock, lines[0].split(" ")[1])

    def _respond(self, sock: socket.socket, path: str) -> None:
        parts = path.split("/")
        streams = self.server.streams
        key = mode = ""
        if len(parts) > 4 and parts[1] == "s":
            keys, mode = parts[3].split(","), parts[4]
            key = keys[min(self.server.count("/".join(parts[:5])), len(keys) - 1)]
        if mode == "bulk" and key in streams.bulk:
            sock.sendall(_HEAD_OK + streams.bulk[key] + _END)
        elif mode == "per_event" and key in streams.per_event:
            sock.sendall(_HEAD_OK)
            for event in streams.per_event[key]:
                sock.sendall(event)
            sock.sendall(_END)
        else:
            sock.sendall(_not_found(path))


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, streams: Streams) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.streams = streams
        self._seen: dict[str, int] = {}
        self._lock = threading.Lock()

    def count(self, prefix: str) -> int:
        """How many requests came under ``prefix`` before this one."""
        with self._lock:
            n = self._seen.get(prefix, 0)
            self._seen[prefix] = n + 1
            return n


def _exit_when_stdin_closes() -> None:
    sys.stdin.buffer.read()
    os._exit(0)


def main(argv: list[str]) -> None:
    """Serve the streams in ``argv[0]`` until stdin closes."""
    with Path(argv[0]).open("rb") as fh:
        raw: dict[str, tuple[bytes, ...]] = pickle.load(fh)
    server = _Server(Streams(raw))
    threading.Thread(target=_exit_when_stdin_closes, daemon=True).start()
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
