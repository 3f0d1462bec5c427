"""``elelem serve`` against a hostile page or peer: bodies bounded while
read, slow requests dropped, Host and Origin checked, a tighter policy, a
warning off loopback (issue #33).  A real uvicorn server on 127.0.0.1,
configured as ``elelem serve`` runs it; raw sockets play the peer."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from elelem.cli.serve import bind
from elelem.conversation import open_store
from elelem.testing.asgi import ASGIServer
from elelem.web.app import MAX_CHAT_BODY, create_app
from elelem.web.serving import host_allowed, is_loopback, server_config

TOKEN = "t0k3n"


@pytest.fixture
def served() -> Iterator[ASGIServer]:
    store = open_store("sqlite:///:memory:")
    sock = bind("127.0.0.1", 0)  # as elelem serve binds: the gate must know the port
    port = sock.getsockname()[1]
    app = create_app(store, token=TOKEN, model="anthropic:m", port=port, body_timeout=0.5)
    with ASGIServer(
        app, configure=lambda app: server_config(app, head_timeout=0.5), sock=sock
    ) as server:
        yield server


def exchange(server: ASGIServer, head: bytes, body: bytes = b"", *, wait: float = 10) -> bytes:
    """Send ``head`` and ``body`` and read until the server closes."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=wait) as conn:
        conn.sendall(head + body)
        received = b""
        while chunk := conn.recv(65536):
            received += chunk
        return received


def status(response: bytes) -> tuple[int, bytes]:
    head, _, body = response.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def post(server: ASGIServer, extra: str, *, host: str | None = None) -> bytes:
    host = host or f"127.0.0.1:{server.port}"
    return (
        f"POST /api/chat?token={TOKEN} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n"
        f"content-type: application/json\r\n{extra}\r\n"
    ).encode()


def test_a_declared_body_past_the_limit_is_refused_unread(served: ASGIServer) -> None:
    answer = exchange(served, post(served, f"content-length: {200 * 1024 * 1024}\r\n"))
    assert status(answer) == (413, b"request too large")


def chat_scope(header: tuple[bytes, bytes]) -> dict[str, Any]:
    """The ASGI scope of a ``POST /api/chat`` with ``header`` beside its Host."""
    return {
        "type": "http",
        "method": "POST",
        "path": "/api/chat",
        "raw_path": b"/api/chat",
        "query_string": f"token={TOKEN}".encode(),
        "headers": [(b"host", b"127.0.0.1:1"), header],
    }


def test_a_streamed_body_is_read_no_further_than_past_the_limit() -> None:
    # In process, so what the app asked of the body is counted exactly.
    app = create_app(open_store("sqlite:///:memory:"), token=TOKEN, model="anthropic:m")
    piece = b"x" * 65536
    asked: list[int] = []
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        asked.append(len(piece))
        return {"type": "http.request", "body": piece, "more_body": True}  # endless

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = chat_scope((b"transfer-encoding", b"chunked"))
    asyncio.run(app(scope, receive, send))  # type: ignore[arg-type]
    assert (sent[0]["status"], sent[1]["body"]) == (413, b"request too large")
    assert sum(asked) == MAX_CHAT_BODY + len(piece)


def test_a_body_that_never_comes_is_dropped(served: ASGIServer) -> None:
    answer = exchange(served, post(served, "content-length: 100\r\n"), b'{"text":')
    assert status(answer) == (408, b"request body too slow")


def test_a_half_sent_head_is_dropped(served: ASGIServer) -> None:
    head = f"GET /?token={TOKEN} HTTP/1.1\r\nHost: 127.0.0.1".encode()
    assert exchange(served, head) == b""  # closed by the server, nothing answered


@pytest.mark.parametrize(
    ("header", "problem"),
    [
        ("Host: evil.example:{port}", b"wrong Host header: open the URL elelem serve printed"),
        ("Host: 127.0.0.1:1", b"wrong Host header: open the URL elelem serve printed"),
        (
            "Host: 127.0.0.1:{port}\r\nOrigin: http://evil.example",
            b"cross-origin request refused",
        ),
    ],
)
def test_a_foreign_host_or_origin_is_refused(
    served: ASGIServer, header: str, problem: bytes
) -> None:
    head = f"GET /?token={TOKEN} HTTP/1.1\r\n{header.format(port=served.port)}\r\nConnection: close\r\n\r\n"
    assert status(exchange(served, head.encode())) == (403, problem)


def test_the_own_host_and_origin_pass_and_the_policy_allows_only_inline_images(
    served: ASGIServer,
) -> None:
    own = f"127.0.0.1:{served.port}"
    head = f"GET /?token={TOKEN} HTTP/1.1\r\nHost: {own}\r\nOrigin: http://{own}\r\nConnection: close\r\n\r\n"
    answer = exchange(served, head.encode())
    assert status(answer)[0] == 200
    headers: dict[bytes, bytes] = dict(
        line.split(b": ", 1) for line in answer.split(b"\r\n\r\n")[0].split(b"\r\n")[1:]
    )
    policy = headers[b"content-security-policy"].decode()
    assert "img-src data:;" in policy and "https:" not in policy


def test_which_hosts_and_binds_are_trusted() -> None:
    assert [host_allowed(h, 8377) for h in ("localhost:8377", "[::1]:8377", "10.0.0.2:8377")] == [
        True,
        True,
        True,
    ]
    assert [host_allowed(h, 8377) for h in ("evil.example:8377", "localhost", "x:1")] == [
        False,
        False,
        False,
    ]
    assert [is_loopback(h) for h in ("127.0.0.1", "::1", "0.0.0.0", "192.168.1.2", "::")] == [
        True,
        True,
        False,
        False,
        False,
    ]


@pytest.mark.parametrize("declared", [b"\xb2", b"9" * 5000])
def test_a_content_length_that_is_no_number_is_refused_not_a_500(declared: bytes) -> None:
    # In process: uvicorn's parser refuses these itself, another ASGI server
    # may not.  '\xb2' reads as '²', a digit to str.isdigit: int() raised.
    app = create_app(open_store("sqlite:///:memory:"), token=TOKEN, model="anthropic:m")
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = chat_scope((b"content-length", declared))
    asyncio.run(app(scope, receive, send))  # type: ignore[arg-type]
    assert (sent[0]["status"], sent[1]["body"]) == (413, b"request too large")
