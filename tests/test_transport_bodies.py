"""Bodies read as the bytes that are there (elelem.transport.bodies), over a
real loopback socket: the pieces each pool's body hands out, async
(:class:`BoundedPool`) and blocking (:class:`BlockingPool`), against what the
server wrote and when; errors as httpcore2's own; a traced request read by
httpcore2's own iterator."""

from __future__ import annotations

from typing import Any

import anyio
import httpcore2
import pytest

from elelem.recordings.loopback import LoopbackServer, Pause, Reply, Send
from elelem.transport import Driver
from elelem.transport.bodies import BlockingPool
from elelem.transport.pool import BoundedPool

CHUNKS = [b"data: one\n\n", b"data: two\n\n", b"data: three\n\n", b"data: four\n\n", b"x"]
END = b"0\r\n\r\n"
FAULTS = (httpcore2.NetworkError, httpcore2.ProtocolError, httpcore2.TimeoutException)


def framed(*chunks: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks)


def reply(*script: Send | Pause) -> Reply:
    # The framing is the script's own (chunked=False): it decides what
    # arrives in which write.
    headers = {"content-type": "text/event-stream", "transfer-encoding": "chunked"}
    return Reply(200, headers, tuple(script))


def read(script: Reply, blocking: bool, **extensions: Any) -> tuple[list[bytes], str | None]:
    """The pieces the pool's body handed out, and the error that ended it."""
    extensions.setdefault("timeout", {"read": 2.0})
    with LoopbackServer([script], lifetime=20) as server:
        request = httpcore2.Request(
            "GET", server.url + "/", headers=[(b"host", b"127.0.0.1")], extensions=extensions
        )
        pieces: list[bytes] = []
        if blocking:
            pool = BlockingPool(ssl_context=None)
            try:
                response = pool.handle_request(request)
                try:
                    pieces.extend(response.stream)  # type: ignore[arg-type]
                finally:
                    response.close()
            except FAULTS as exc:
                return pieces, f"{type(exc).__name__}: {exc}"
            finally:
                pool.close()
            return pieces, None

        async def main() -> str | None:
            apool = BoundedPool(
                None, max_connections=1, max_keepalive_connections=1, keepalive_expiry=None
            )
            try:
                response = await apool.handle_async_request(request)
                try:
                    async for piece in response.stream:  # type: ignore[union-attr]
                        pieces.append(piece)
                finally:
                    await response.aclose()
            except FAULTS as exc:
                return f"{type(exc).__name__}: {exc}"
            finally:
                await apool.aclose()
            return None

        return pieces, anyio.run(main)


BLOCKING = pytest.mark.parametrize("blocking", [False, True], ids=["async", "blocking"])


@BLOCKING
def test_chunks_that_came_with_the_body_end_are_one_piece_and_the_last_its_own(
    blocking: bool,
) -> None:
    # The last chunk stays a read of its own, so bytes after a terminal
    # event (in a chunk of their own) are still a read the driver tells.
    script = reply(Send(framed(*CHUNKS) + END))
    assert read(script, blocking) == ([b"".join(CHUNKS[:-1]), CHUNKS[-1]], None)


@BLOCKING
def test_chunks_that_came_together_are_one_piece_and_the_last_its_own(blocking: bool) -> None:
    script = reply(Send(framed(*CHUNKS)), Pause(0.3), Send(END))
    assert read(script, blocking) == ([b"".join(CHUNKS[:-1]), CHUNKS[-1]], None)


@BLOCKING
def test_a_chunk_per_network_read_is_a_piece_per_chunk(blocking: bool) -> None:
    script = reply(
        Send(framed(CHUNKS[0])),
        Pause(0.15),
        Send(framed(CHUNKS[1])),
        Pause(0.15),
        Send(framed(CHUNKS[2]) + END),
    )
    assert read(script, blocking) == (CHUNKS[:3], None)


def _tracer(blocking: bool, told: list[str]) -> Any:
    def trace(name: str, info: dict[str, Any]) -> None:
        told.append(name)

    async def atrace(name: str, info: dict[str, Any]) -> None:
        told.append(name)

    return trace if blocking else atrace


@BLOCKING
def test_a_traced_request_is_read_by_httpcore2_chunk_by_chunk(blocking: bool) -> None:
    told: list[str] = []
    script = reply(Send(framed(*CHUNKS)), Pause(0.3), Send(END))
    assert read(script, blocking, trace=_tracer(blocking, told)) == (CHUNKS, None)
    assert "http11.receive_response_body.started" in told


@BLOCKING
def test_a_body_cut_mid_chunk_raises_httpcore2s_error_after_what_arrived(blocking: bool) -> None:
    cut = reply(Send(framed(CHUNKS[0]) + b"20\r\ndata: half"))
    # h11 hands out a chunk's bytes as they come: the half is a piece too.
    outcome = (
        [CHUNKS[0], b"data: half"],
        "RemoteProtocolError: peer closed connection without sending complete message body "
        "(incomplete chunked read)",
    )
    assert read(cut, blocking) == outcome
    assert read(cut, blocking, trace=_tracer(blocking, [])) == outcome  # httpcore2's own


@BLOCKING
def test_a_silent_body_raises_the_read_timeout(blocking: bool) -> None:
    script = reply(Send(framed(CHUNKS[0])), Pause(2.0), Send(framed(CHUNKS[1]) + END))
    pieces, error = read(script, blocking, timeout={"read": 0.2})
    assert pieces == [CHUNKS[0]]
    assert error is not None and error.startswith("ReadTimeout"), error


def test_the_drivers_clients_read_through_these_pools() -> None:
    driver = Driver()
    try:
        assert type(driver.sync_http()._transport._pool) is BlockingPool  # type: ignore[attr-defined]
    finally:
        driver.close()

    async def main() -> type:
        try:
            return type(driver.http()._transport._pool)  # type: ignore[attr-defined]
        finally:
            await driver.aclose()

    assert anyio.run(main) is BoundedPool
