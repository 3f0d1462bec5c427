"""The first chunk reaches the caller before its connection is released.

When a whole response arrives in one read, the driver used to release the
connection (read the body's end, hand it back to the pool: awaits that
yield to the event loop) before the caller got the first chunk; under a
burst of streams one turn of the loop took about a second.  The order is
pinned here exactly: the HTTP client is real (httpx2 over a real socket to
a loopback server), with its transport wrapped to log each read and the
close of the response next to the chunks the caller takes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import anyio
import httpx2
import pytest

from elelem.shapes.anthropic_messages import SHAPE
from elelem.testing.servers import LoopbackServer, anthropic_text_body, replay
from elelem.transport import Driver, Endpoint, Timeouts
from elelem.vocabulary import Message, ProviderId, TextBlock
from elelem.wire import ModelRequest

REQUEST = ModelRequest("claude-test", (Message("user", (TextBlock("hi"),)),))
BODY = anthropic_text_body("first ", "chunk")
CHUNKS = ["ResponseStart", "UsageUpdate", "BlockStart", *["TextDelta"] * 2, "BlockEnd"]
CHUNKS += ["UsageUpdate", "Finish"]


class _LoggedBody(httpx2.AsyncByteStream, httpx2.SyncByteStream):
    def __init__(self, inner: httpx2.Response, log: list[str]) -> None:
        self._inner, self._log = inner, log

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for piece in self._inner.aiter_raw():
            self._log.append("read")
            yield piece

    def __iter__(self) -> Iterator[bytes]:
        for piece in self._inner.iter_raw():
            self._log.append("read")
            yield piece

    async def aclose(self) -> None:
        self._log.append("released")
        await self._inner.aclose()

    def close(self) -> None:
        self._log.append("released")
        self._inner.close()


class _Logged(httpx2.AsyncBaseTransport, httpx2.BaseTransport):
    """httpx2's own transport, each response's reads and close logged."""

    def __init__(self, log: list[str]) -> None:
        self._async = httpx2.AsyncHTTPTransport()
        self._sync = httpx2.HTTPTransport()
        self.log = log

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._async.handle_async_request(request)
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=_LoggedBody(httpx2.Response(200, stream=response.stream), self.log),
        )

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = self._sync.handle_request(request)
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=_LoggedBody(httpx2.Response(200, stream=response.stream), self.log),
        )

    async def aclose(self) -> None:
        await self._async.aclose()

    def close(self) -> None:
        self._sync.close()


def _endpoint(server: LoopbackServer) -> Endpoint:
    return Endpoint(ProviderId("anthropic"), server.url, api_key="k", auth_header="x-api-key")


def _expected() -> list[str]:
    # One read holds the whole body; every chunk is handed out before the
    # release, which comes when the caller asks past the last one.
    return ["read", *CHUNKS, "released", "end"]


def test_async_stream_hands_out_the_first_chunk_before_the_release() -> None:
    async def run(server: LoopbackServer) -> list[str]:
        log: list[str] = []
        http = httpx2.AsyncClient(transport=_Logged(log))
        driver = Driver(http, timeouts=Timeouts(connect=5, idle=5))
        try:
            stream = driver.stream(_endpoint(server), SHAPE, REQUEST)
            async for chunk in stream:
                log.append(type(chunk).__name__)
            log.append("end")
            assert stream.result().text == "first chunk"
        finally:
            await http.aclose()
        return log

    with LoopbackServer([replay(BODY)]) as server:
        assert anyio.run(run, server) == _expected()


def test_blocking_stream_hands_out_the_first_chunk_before_the_release() -> None:
    log: list[str] = []
    with LoopbackServer([replay(BODY)]) as server:
        http = httpx2.Client(transport=_Logged(log))
        driver = Driver(http, timeouts=Timeouts(connect=5, idle=5))
        try:
            stream = driver.sync_stream(_endpoint(server), SHAPE, REQUEST)
            for chunk in stream:
                log.append(type(chunk).__name__)
            log.append("end")
        finally:
            http.close()
    assert log == _expected()


@pytest.mark.parametrize("blocking", [False, True], ids=["async", "blocking"])
def test_closing_after_the_last_chunk_still_releases_for_reuse(blocking: bool) -> None:
    """A caller that stops at ``finish`` and closes: the release (reading the
    body's end, so the connection is reused) happens in the close."""
    log: list[str] = []

    async def run_async(server: LoopbackServer) -> None:
        http = httpx2.AsyncClient(transport=_Logged(log))
        driver = Driver(http, timeouts=Timeouts(connect=5, idle=5))
        try:
            async with driver.stream(_endpoint(server), SHAPE, REQUEST) as stream:
                while type(chunk := await stream.__anext__()).__name__ != "Finish":
                    log.append(type(chunk).__name__)
                log.append("Finish")
            log.append(f"tail={stream.tail}")
        finally:
            await http.aclose()

    with LoopbackServer([replay(BODY)]) as server:
        if blocking:
            http = httpx2.Client(transport=_Logged(log))
            driver = Driver(http, timeouts=Timeouts(connect=5, idle=5))
            try:
                with driver.sync_stream(_endpoint(server), SHAPE, REQUEST) as sync_stream:
                    while type(chunk := next(sync_stream)).__name__ != "Finish":
                        log.append(type(chunk).__name__)
                    log.append("Finish")
                log.append(f"tail={sync_stream.tail}")
            finally:
                http.close()
        else:
            anyio.run(run_async, server)
    assert log == ["read", *CHUNKS, "released", "tail=None"]
