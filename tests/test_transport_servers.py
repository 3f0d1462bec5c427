"""The loopback test servers themselves, and the small transport helpers."""

from __future__ import annotations

import socket
import time

import httpx2

from elelem.testing.servers import (
    LoopbackServer,
    Reply,
    Send,
    frame_ends,
    replay,
    sse_body,
    status,
)
from elelem.transport import Timeouts, parse_retry_after


def test_server_records_requests_and_replays_in_order() -> None:
    with LoopbackServer([replay(b"data: 1\n\n"), status(404, b"{}")]) as server:
        assert server.url == f"http://127.0.0.1:{server.port}"
        first = httpx2.post(server.url + "/a?x=1", content=b"hello", headers={"x-k": "v"})
        second = httpx2.get(server.url + "/b")
        third = httpx2.get(server.url + "/c")
    assert (first.status_code, first.text, first.headers["content-type"]) == (
        200,
        "data: 1\n\n",
        "text/event-stream",
    )
    assert second.status_code == 404
    assert third.status_code == 500
    assert third.text == "loopback server: no reply scripted for request 3"
    assert [(r.method, r.path, r.body) for r in server.requests] == [
        ("POST", "/a?x=1", b"hello"),
        ("GET", "/b", b""),
        ("GET", "/c", b""),
    ]
    assert server.requests[0].headers["x-k"] == "v"


def test_server_replies_from_a_function_and_chunked() -> None:
    def reply(request: object) -> Reply:
        return Reply(200, {"content-type": "text/plain"}, (Send(b"ab"), Send(b"cd")), chunked=True)

    with LoopbackServer(reply) as server:
        response = httpx2.get(server.url)
    assert response.text == "abcd" and response.headers["transfer-encoding"] == "chunked"


def test_server_stops_by_itself_after_its_lifetime() -> None:
    server = LoopbackServer([], lifetime=0.2).start()
    time.sleep(0.5)
    with socket.socket() as sock:
        sock.settimeout(1)
        assert sock.connect_ex(("127.0.0.1", server.port)) != 0


def test_sse_body_and_frame_ends() -> None:
    body = sse_body([("a", "x"), (None, "y\nz")])
    assert body == b"event: a\ndata: x\n\ndata: y\ndata: z\n\n"
    assert frame_ends(body) == [18, 35]


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"Retry-After": "7"}) == 7.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert (
        parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0)
        == 10.0
    )
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


def test_timeouts_zero_disables() -> None:
    t = Timeouts(connect=3, idle=0, write=5).as_httpx()
    assert (t.connect, t.read, t.write, t.pool) == (3, None, 5, 600)
