"""A whole (non-streamed) answer is held once while it is read (issue #41:
``batch results`` of one 200 MB result took 867 MB).

The driver reads a one-shot call's body piece by piece, each piece counted
against ``Limits.body`` before it is kept.  The pieces used to be kept in a
list and joined at the end, so the body was held twice at once; now they go
into one growing buffer that becomes the body.  Counted with ``tracemalloc``
through the real driver (blocking and async: one core) against a loopback
server; what the call's parse keeps is only the body's length.
"""

from __future__ import annotations

import asyncio
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest

from elelem.providers import load_shape
from elelem.testing.servers import LoopbackServer, status
from elelem.transport import Driver, Endpoint
from elelem.transport.one_shot import Call
from elelem.vocabulary import ProviderId
from elelem.wire import EncodedRequest, ModelRequest

REQUEST = ModelRequest(model="m", messages=())


def _peak(size: int, run: Callable[[Driver, Endpoint, Call], Any]) -> int:
    """Peak traced memory of one call whose answer is ``size`` bytes of a
    JSON string; the call's value is the body's length, checked."""
    body = b'"' + b"word " * (size // 5) + b'"'
    call = Call(
        load_shape("anthropic_messages"),
        EncodedRequest("/v1/results", {}, method="GET", stream=False),
        len,
        "read the results",
    )
    with LoopbackServer([status(200, body)], lifetime=30) as server:
        endpoint = Endpoint(ProviderId("anthropic"), server.url, api_key="sk-ant-test-0123456789")
        driver = Driver()
        try:
            tracemalloc.start()
            try:
                run(driver, endpoint, call)
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
        finally:
            driver.close()
    assert call.value == len(body)
    return peak - len(body)  # beyond the body itself


def _blocking(driver: Driver, endpoint: Endpoint, call: Call) -> None:
    driver.sync_exchange(endpoint, call, REQUEST, operation="batch")


def _async(driver: Driver, endpoint: Endpoint, call: Call) -> None:
    async def exchange() -> None:
        try:
            await driver.exchange(endpoint, call, REQUEST, operation="batch")
        finally:
            await driver.aclose()

    asyncio.run(exchange())


@pytest.mark.parametrize("run", [_blocking, _async], ids=["blocking", "async"])
@pytest.mark.parametrize(
    "size", [8 * 1024 * 1024, pytest.param(100 * 1024 * 1024, marks=pytest.mark.slow)]
)
def test_a_whole_body_is_held_once_while_it_is_read(run: Any, size: int) -> None:
    beyond = _peak(size, run)
    # Before: the pieces and their join, the body twice (beyond: 1.0x).
    # Now: the buffer's growth margin (an eighth) and a piece or two.
    assert beyond < size // 4, (beyond, size)
