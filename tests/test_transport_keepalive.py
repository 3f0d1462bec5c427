"""Connection reuse: a finished stream hands its connection back to the pool.

The driver stops reading at the terminal event; closing the response there,
mid-body, made httpx2 drop the connection, so every request paid a fresh TCP
(and, against a real provider, TLS) handshake.  These tests run a real
HTTP/1.1 keep-alive server on 127.0.0.1 that counts the connections it
accepts, with the real Anthropic Messages shape, and pin how many
connections a run of requests takes in each way a body can end.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest

from elelem.shapes.anthropic_messages import SHAPE
from elelem.transport import Driver, Endpoint, Timeouts
from elelem.transport.driver import TAIL_GRACE
from elelem.vocabulary import Message, ProviderId, TextBlock
from elelem.wire import ModelRequest

EVENTS = [
    (
        "message_start",
        '{"type":"message_start","message":{"id":"msg_keep","type":"message","role":"assistant",'
        '"model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,'
        '"usage":{"input_tokens":3,"output_tokens":1}}}',
    ),
    (
        "content_block_start",
        '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"kept "}}',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"alive"}}',
    ),
    ("content_block_stop", '{"type":"content_block_stop","index":0}'),
    (
        "message_delta",
        '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},'
        '"usage":{"output_tokens":2}}',
    ),
    ("message_stop", '{"type":"message_stop"}'),
]
BODY = b"".join(f"event: {e}\ndata: {d}\n\n".encode() for e, d in EVENTS)
REQUEST = ModelRequest("claude-test", (Message("user", (TextBlock("hi"),)),))


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


@dataclass
class KeepAliveServer:
    """HTTP/1.1 with keep-alive: every request on a connection gets ``BODY``
    chunked, one write per event, then the body's end as ``ending`` says:
    ``"with-last"`` (the terminator in the last event's write), ``"late"``
    (its own write, after ``delay`` seconds), ``"extra"`` (a comment frame
    after the last event, then the terminator), ``"cut"`` (the connection's
    write side shut after the last event, no terminator), ``"never"`` (the
    connection stays open, silent, until the client closes it)."""

    ending: str
    delay: float = 0.0
    connections: int = 0
    requests: int = 0
    _sock: socket.socket = field(default_factory=socket.socket)
    _threads: list[threading.Thread] = field(default_factory=list)
    _stopped: threading.Event = field(default_factory=threading.Event)

    @property
    def url(self) -> str:
        host, port = self._sock.getsockname()
        return f"http://{host}:{port}"

    def start(self) -> None:
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen()
        self._sock.settimeout(0.1)
        self._spawn(self._accept)

    def stop(self) -> None:
        self._stopped.set()
        for thread in self._threads:
            thread.join(timeout=5)
        self._sock.close()

    def _spawn(self, target: object, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)  # type: ignore[arg-type]
        self._threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            self.connections += 1
            self._spawn(self._serve, conn)

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(0.1)
        pending = b""
        with conn:
            while not self._stopped.is_set():
                try:
                    data = conn.recv(65536)
                except TimeoutError:
                    continue
                if not data:
                    return  # the client closed the connection
                pending += data
                head, sep, rest = pending.partition(b"\r\n\r\n")
                if not sep:
                    continue
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                if len(rest) < length:
                    continue
                pending = rest[length:]
                self.requests += 1
                self._respond(conn)

    def _respond(self, conn: socket.socket) -> None:
        conn.sendall(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )
        frames = [f"event: {e}\ndata: {d}\n\n".encode() for e, d in EVENTS]
        for frame in frames[:-1]:
            conn.sendall(_chunk(frame))
        if self.ending == "with-last":
            conn.sendall(_chunk(frames[-1]) + b"0\r\n\r\n")
        elif self.ending == "late":
            conn.sendall(_chunk(frames[-1]))
            time.sleep(self.delay)
            conn.sendall(b"0\r\n\r\n")
        elif self.ending == "extra":
            conn.sendall(_chunk(frames[-1]))
            conn.sendall(_chunk(b": trailing\n\n") + b"0\r\n\r\n")
        elif self.ending == "extra-open":
            conn.sendall(_chunk(frames[-1]))
            conn.sendall(_chunk(b": trailing\n\n"))  # and the body goes on: no terminator
        elif self.ending == "cut":
            conn.sendall(_chunk(frames[-1]))
            conn.shutdown(socket.SHUT_WR)  # the end of the stream, without the terminator
        else:
            conn.sendall(_chunk(frames[-1]))


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[KeepAliveServer]:
    ending, delay = request.param
    srv = KeepAliveServer(ending, delay)
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


def _endpoint(srv: KeepAliveServer) -> Endpoint:
    return Endpoint(ProviderId("anthropic"), srv.url, api_key="k", auth_header="x-api-key")


async def _async_finals(srv: KeepAliveServer, n: int) -> list[tuple[str, str | None]]:
    driver = Driver(timeouts=Timeouts(connect=2, idle=5))
    out = []
    try:
        for _ in range(n):
            stream = driver.stream(_endpoint(srv), SHAPE, REQUEST)
            result = await stream.final()
            out.append((result.text, stream.tail))
    finally:
        await driver.aclose()
    return out


def _sync_finals(srv: KeepAliveServer, n: int) -> list[tuple[str, str | None]]:
    driver = Driver(timeouts=Timeouts(connect=2, idle=5))
    out = []
    try:
        for _ in range(n):
            stream = driver.sync_stream(_endpoint(srv), SHAPE, REQUEST)
            result = stream.final()
            out.append((result.text, stream.tail))
    finally:
        driver.close()
    return out


def _finals(srv: KeepAliveServer, n: int, blocking: bool) -> list[tuple[str, str | None]]:
    """``n`` responses drained by final(), through the async stream or the blocking one."""
    return _sync_finals(srv, n) if blocking else anyio.run(_async_finals, srv, n)


async def _async_iterated(srv: KeepAliveServer, n: int) -> list[list[str]]:
    driver = Driver(timeouts=Timeouts(connect=2, idle=5))
    counts = []
    try:
        for _ in range(n):
            async with driver.stream(_endpoint(srv), SHAPE, REQUEST) as stream:
                counts.append([type(chunk).__name__ async for chunk in stream])
    finally:
        await driver.aclose()
    return counts


def _sync_iterated(srv: KeepAliveServer, n: int) -> list[list[str]]:
    driver = Driver(timeouts=Timeouts(connect=2, idle=5))
    counts = []
    try:
        for _ in range(n):
            with driver.sync_stream(_endpoint(srv), SHAPE, REQUEST) as stream:
                counts.append([type(chunk).__name__ for chunk in stream])
    finally:
        driver.close()
    return counts


BLOCKING = pytest.mark.parametrize("blocking", [False, True], ids=["async", "blocking"])


@pytest.mark.parametrize("server", [("with-last", 0.0), ("late", 0.05)], indirect=True)
@BLOCKING
def test_finished_streams_reuse_one_connection(server: KeepAliveServer, blocking: bool) -> None:
    assert _finals(server, 3, blocking) == [("kept alive", None)] * 3
    assert (server.requests, server.connections) == (3, 1)


@pytest.mark.parametrize("server", [("with-last", 0.0)], indirect=True)
@BLOCKING
def test_iterated_streams_reuse_one_connection(server: KeepAliveServer, blocking: bool) -> None:
    kinds = [
        "ResponseStart",
        "UsageUpdate",
        "BlockStart",
        "TextDelta",
        "TextDelta",
        "BlockEnd",
        "UsageUpdate",
        "Finish",
    ]
    assert (_sync_iterated(server, 3) if blocking else anyio.run(_async_iterated, server, 3)) == [
        kinds
    ] * 3
    assert (server.requests, server.connections) == (3, 1)


@pytest.mark.parametrize("server", [("never", 0.0)], indirect=True)
@BLOCKING
def test_a_body_that_never_ends_costs_only_its_connection(
    server: KeepAliveServer, blocking: bool
) -> None:
    # The response is whole at message_stop: it is returned once the grace
    # for the body's end runs out, and that connection is not reused.
    started = time.monotonic()
    tail = "no end of the body within 0.25 s after the terminal event"
    assert _finals(server, 2, blocking) == [("kept alive", tail)] * 2
    took = time.monotonic() - started
    assert (server.requests, server.connections) == (2, 2)
    assert took < 2 * TAIL_GRACE + 2.0, took  # bounded by the grace, not the 5 s idle timeout


@pytest.mark.parametrize("server", [("extra", 0.0)], indirect=True)
@BLOCKING
def test_bytes_after_the_terminal_event_are_told_not_parsed(
    server: KeepAliveServer, blocking: bool
) -> None:
    # The whole response; what followed its terminal event is on the stream,
    # not swallowed.  The chunked terminator came right behind those bytes,
    # so the body was read to its end and nothing is left unread on the
    # connection: it is reused (a body that goes on past them is cut, below).
    tail = "12 bytes after the terminal event, not read"  # ": trailing\n\n"
    assert _finals(server, 2, blocking) == [("kept alive", tail)] * 2
    assert (server.requests, server.connections) == (2, 1)


@pytest.mark.parametrize("server", [("extra-open", 0.0)], indirect=True)
@BLOCKING
def test_bytes_after_the_terminal_event_of_a_body_that_goes_on_close_it(
    server: KeepAliveServer, blocking: bool
) -> None:
    # Told as above, and with the body still open the connection is not reused.
    tail = "12 bytes after the terminal event, not read"
    assert _finals(server, 2, blocking) == [("kept alive", tail)] * 2
    assert (server.requests, server.connections) == (2, 2)


@pytest.mark.parametrize("server", [("cut", 0.0)], indirect=True)
@BLOCKING
def test_a_broken_end_keeps_the_whole_response(server: KeepAliveServer, blocking: bool) -> None:
    [(text, tail)] = _finals(server, 1, blocking)
    assert text == "kept alive"
    assert tail is not None and tail.startswith("the body's end broke: RemoteProtocolError: "), tail


def test_one_verifying_context_serves_every_client_for_the_ca_settings_in_force(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import ssl

    from elelem.transport.driver import verifying_context

    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    default = verifying_context()
    assert verifying_context() is default  # the CA bundle is loaded once
    assert (default.verify_mode, default.check_hostname) == (ssl.CERT_REQUIRED, True)
    # A CA file of one certificate the default context trusts: in force once set.
    loaded = default.get_ca_certs(binary_form=True)
    if not loaded:
        pytest.skip("the system CAs are a directory read lazily: no certificate to copy")
    first = loaded[0]
    bundle = tmp_path / "one-ca.pem"
    bundle.write_text(ssl.DER_cert_to_PEM_cert(first), encoding="ascii")
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    chosen = verifying_context()
    assert chosen is not default and chosen is verifying_context()
    assert (chosen.verify_mode, chosen.check_hostname) == (ssl.CERT_REQUIRED, True)
    assert chosen.get_ca_certs(binary_form=True) == [first]
