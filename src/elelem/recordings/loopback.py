"""A loopback HTTP server that plays scripted replies: recorded responses, or faults.

:class:`LoopbackServer` listens on 127.0.0.1 on an ephemeral port, answers
each request with the next scripted :class:`Reply`, records what it was sent,
and stops by itself after ``lifetime`` seconds (or at ``stop()`` / the end of
a ``with`` block).  A reply is a status line, headers and a script of
actions: send bytes, pause, await the client's gate, drip bytes one per
write, or reset the connection.  The body is delimited by the connection's close (or, with
``chunked=True``, by chunked transfer encoding), so a script that stops early
is a truncated stream, exactly as a client would see it on the network.

``elelem demo`` and ``elelem inspect`` serve recordings with it; the fault
helpers the stream-contract suite needs (reset after N bytes, a stall,
truncation, a malformed frame, error statuses, a slow drip) are in
:mod:`elelem.testing.servers`, which builds on this module.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeAlias

from elelem.transport.closing import Closing

# -- scripts ---------------------------------------------------------------------


@dataclass(frozen=True)
class Send:
    """Write these bytes (one write; one chunk when chunked)."""

    data: bytes


@dataclass(frozen=True)
class SendFile:
    """Write ``size`` bytes of the file at ``path`` (from its start), a
    piece at a time (one chunk each when chunked): a large recording is
    served without being held whole."""

    path: Path
    size: int
    piece: int = 64 * 1024


@dataclass(frozen=True)
class Pause:
    """Write nothing for this many seconds (cut short when the server stops)."""

    seconds: float


@dataclass(frozen=True)
class Await:
    """Write nothing until ``gate`` is set (by the test's client, once it
    received what came before); if it is not set within ``timeout`` seconds,
    reset the connection instead.  A script that awaits a client's gate
    proves the client had the bytes before it before the body went on:
    ordering, not timing."""

    gate: threading.Event
    timeout: float = 10.0


@dataclass(frozen=True)
class Drip:
    """Write these bytes one byte per write, ``interval`` seconds apart."""

    data: bytes
    interval: float = 0.0


@dataclass(frozen=True)
class Reset:
    """Abort the connection with a TCP reset (RST), mid-whatever."""


Action: TypeAlias = Send | SendFile | Pause | Await | Drip | Reset


@dataclass(frozen=True)
class Reply:
    """One scripted response.

    With ``send_headers`` False nothing at all is written (the script's
    pauses still run): the client waits for headers that never arrive.
    With ``keep_alive`` (which implies ``chunked``) the connection stays open
    for the client's next request, as a provider's does: a client replaying
    thousands of responses then pays for one connection, not thousands.
    """

    status: int = 200
    headers: Mapping[str, str] = field(
        default_factory=lambda: {"content-type": "text/event-stream"}
    )
    script: tuple[Action, ...] = ()
    chunked: bool = False
    send_headers: bool = True
    keep_alive: bool = False


@dataclass(frozen=True)
class RecordedRequest:
    """What a client sent: method, path (with query), headers (lower-cased names), body."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes


Replies: TypeAlias = Sequence[Reply] | Callable[[RecordedRequest], Reply]

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    413: "Payload Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    529: "Overloaded",
}
_MAX_HEAD = 64 * 1024


class LoopbackServer(Closing):
    """A scripted HTTP/1.1 server on 127.0.0.1 (see the module docs).

    ``replies`` is a sequence (request *i* gets reply *i*; a request beyond
    it gets a 500 saying so) or a function of the recorded request.
    """

    def __init__(self, replies: Replies, *, lifetime: float = 60.0) -> None:
        self._replies = replies
        self._lifetime = lifetime
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._conns: set[socket.socket] = set()
        self._threads: list[threading.Thread] = []
        self.requests: list[RecordedRequest] = []
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(1024)  # a test may open hundreds of connections at once
        self._sock.settimeout(0.05)
        self.port: int = self._sock.getsockname()[1]
        self._acceptor = threading.Thread(target=self._accept_loop, daemon=True)
        self._timer: threading.Timer | None = None
        self._started = False

    @property
    def url(self) -> str:
        """The server's base URL, ``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> LoopbackServer:
        """Start serving (idempotent); the server stops itself after ``lifetime``."""
        if not self._started:
            self._started = True
            self._acceptor.start()
            self._timer = threading.Timer(self._lifetime, self.stop)
            self._timer.daemon = True
            self._timer.start()
        return self

    def stop(self) -> None:
        """Stop: interrupt pauses, close every connection and the listener."""
        self._stop.set()
        if self._timer is not None and threading.current_thread() is not self._timer:
            self._timer.cancel()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            _close_quietly(conn)
        if self._acceptor.is_alive() and threading.current_thread() is not self._acceptor:
            # Wakes the accept() waiting for its next timeout (up to 50 ms),
            # so a test pays nothing for stopping its server.
            _wake(self._sock)
            self._acceptor.join(timeout=2)
        _close_quietly(self._sock)

    def _enter(self) -> LoopbackServer:
        return self.start()

    def _leave(self) -> None:
        self.stop()

    # -- serving -------------------------------------------------------------

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # the listener was closed by stop()
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._conns.add(conn)
            worker = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            worker.start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            while not self._stop.is_set():
                request = _read_request(conn)
                if request is None:
                    return
                with self._lock:
                    number = len(self.requests)
                    self.requests.append(request)
                reply = self._reply_for(request, number)
                if not self._play(conn, reply):
                    return
        except OSError:
            return  # the client went away or stop() closed the socket: nothing to serve
        finally:
            with self._lock:
                self._conns.discard(conn)
            _close_quietly(conn)

    def _reply_for(self, request: RecordedRequest, number: int) -> Reply:
        replies = self._replies
        if callable(replies):
            return replies(request)
        if number < len(replies):
            return replies[number]
        message = f"loopback server: no reply scripted for request {number + 1}".encode()
        return Reply(500, {"content-type": "text/plain"}, (Send(message),))

    def _play(self, conn: socket.socket, reply: Reply) -> bool:
        """Play ``reply``; True when the connection stays open for another request."""
        chunked = reply.chunked or reply.keep_alive
        if reply.send_headers:
            conn.sendall(_head(reply))
        for action in reply.script:
            if self._stop.is_set():
                return False
            if isinstance(action, Send):
                if reply.send_headers:
                    conn.sendall(_chunk(action.data) if chunked else action.data)
            elif isinstance(action, SendFile):
                if reply.send_headers and not self._send_file(conn, action, chunked):
                    return False
            elif isinstance(action, Pause):
                self._stop.wait(action.seconds)
            elif isinstance(action, Await):
                if not action.gate.wait(action.timeout):
                    _reset(conn)
                    return False
            elif isinstance(action, Drip):
                for i in range(len(action.data)):
                    piece = action.data[i : i + 1]
                    conn.sendall(_chunk(piece) if chunked else piece)
                    if action.interval > 0 and self._stop.wait(action.interval):
                        return False
            else:
                _reset(conn)
                return False
        if reply.send_headers and chunked:
            conn.sendall(b"0\r\n\r\n")
        if reply.keep_alive and reply.send_headers:
            return True
        conn.shutdown(socket.SHUT_WR)
        return False

    def _send_file(self, conn: socket.socket, action: SendFile, chunked: bool) -> bool:
        """Serve ``action``'s file piece by piece; False when the server stopped."""
        with action.path.open("rb") as file:
            left = action.size
            while left > 0:
                if self._stop.is_set():
                    return False
                piece = file.read(min(action.piece, left))
                if not piece:
                    break  # the file shrank since it was measured: a short body
                left -= len(piece)
                conn.sendall(_chunk(piece) if chunked else piece)
        return True


def _head(reply: Reply) -> bytes:
    lines = [f"HTTP/1.1 {reply.status} {_REASONS.get(reply.status, 'Status')}"]
    names = {k.lower() for k in reply.headers}
    lines.extend(f"{k}: {v}" for k, v in reply.headers.items())
    if "connection" not in names:
        lines.append("connection: keep-alive" if reply.keep_alive else "connection: close")
    if reply.chunked or reply.keep_alive:
        lines.append("transfer-encoding: chunked")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data) if data else b""


def _read_request(conn: socket.socket) -> RecordedRequest | None:
    conn.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(65536)
        if not piece:
            return None
        data += piece
        if len(data) > _MAX_HEAD:
            return None
    head, _, body = data.partition(b"\r\n\r\n")
    request_line, *header_lines = head.decode("latin-1").split("\r\n")
    method, path, _ = request_line.split(" ", 2)
    headers: dict[str, str] = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        piece = conn.recv(65536)
        if not piece:
            break
        body += piece
    return RecordedRequest(method, path, headers, body)


def _wake(listener: socket.socket) -> None:
    try:
        listener.shutdown(socket.SHUT_RDWR)
    except OSError:
        # A platform that refuses to shut a listener down: the accept loop
        # then notices the stop at its next timeout, as it always could.
        return


def _reset(conn: socket.socket) -> None:
    """Abort ``conn`` with a TCP reset (RST)."""
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


def _close_quietly(sock: socket.socket) -> None:
    try:
        sock.close()
    except OSError:
        # Already closed or reset: closing twice has nothing left to report.
        return


# -- building bodies ---------------------------------------------------


def sse_body(frames: Iterable[tuple[str | None, str]]) -> bytes:
    """An SSE body of ``(event, data)`` frames (``event`` None: no event line)."""
    out = []
    for event, data in frames:
        head = f"event: {event}\n" if event is not None else ""
        lines = "".join(f"data: {line}\n" for line in data.split("\n"))
        out.append(f"{head}{lines}\n")
    return "".join(out).encode("utf-8")


def anthropic_text_body(
    *pieces: str, model: str = "claude-sonnet-4-5-20250929", usage: tuple[int, int] = (20, 10)
) -> bytes:
    """The SSE body of an Anthropic Messages response holding one text block
    streamed as ``pieces`` (one delta each), ``usage`` its input and output
    tokens: a scripted answer for tests and examples."""
    frames: list[dict[str, object]] = [
        {"type": "message_start", "message": {"id": "msg_scripted", "type": "message",
         "role": "assistant", "model": model, "content": [],
         "usage": {"input_tokens": usage[0], "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        *({"type": "content_block_delta", "index": 0,
           "delta": {"type": "text_delta", "text": piece}} for piece in pieces),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
         "usage": {"output_tokens": usage[1]}},
        {"type": "message_stop"},
    ]  # fmt: skip
    return sse_body((str(f["type"]), json.dumps(f)) for f in frames)


def frame_ends(body: bytes) -> list[int]:
    """Byte offsets just past each blank line that ends an SSE frame (LF bodies)."""
    ends: list[int] = []
    start = 0
    while True:
        at = body.find(b"\n\n", start)
        if at < 0:
            return ends
        ends.append(at + 2)
        start = at + 2


def replay(
    body: bytes, *, content_type: str = "text/event-stream", chunk_size: int | None = None
) -> Reply:
    """Serve ``body`` with status 200, in ``chunk_size`` writes (one write if None)."""
    step = chunk_size or max(len(body), 1)
    script = tuple(Send(body[i : i + step]) for i in range(0, len(body), step))
    return Reply(200, {"content-type": content_type}, script)


__all__ = [
    "Action",
    "Await",
    "Drip",
    "LoopbackServer",
    "Pause",
    "RecordedRequest",
    "Reply",
    "Reset",
    "Send",
    "SendFile",
    "anthropic_text_body",
    "frame_ends",
    "replay",
    "sse_body",
]
