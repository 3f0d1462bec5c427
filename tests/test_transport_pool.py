"""The driver's connection pool: sized for a gateway by default, and a full
pool is a typed, retryable error that names the limit it hit.

Every test runs a real HTTP/1.1 server on 127.0.0.1 and the real Anthropic
Messages shape.
"""

from __future__ import annotations

import threading

import anyio
import pytest

from elelem.errors import PoolTimeoutError
from elelem.shapes.anthropic_messages import SHAPE
from elelem.testing.servers import (
    LoopbackServer,
    RecordedRequest,
    Reply,
    Send,
    anthropic_text_body,
    replay,
    stall,
)
from elelem.transport import Driver, Endpoint, Limits, Timeouts
from elelem.transport.pool import BoundedPool, PooledTransport
from elelem.transport.retry import retries_before_content, retry_reason
from elelem.vocabulary import Message, ProviderId, TextBlock
from elelem.wire import ModelRequest
from test_transport_keepalive import KeepAliveServer

REQUEST = ModelRequest("claude-test", (Message("user", (TextBlock("hi"),)),))
BODY = anthropic_text_body("pooled ", "answer")


def _endpoint(server: LoopbackServer) -> Endpoint:
    return Endpoint(ProviderId("anthropic"), server.url, api_key="k", auth_header="x-api-key")


def test_the_defaults_are_a_gateways() -> None:
    limits, timeouts = Limits(), Timeouts()
    assert (limits.connections, limits.keepalive_connections, limits.keepalive_expiry) == (
        1000,
        1000,
        30.0,
    )
    assert (timeouts.connect, timeouts.pool) == (10.0, 600.0)
    httpx_timeout = Timeouts(connect=3, pool=45).as_httpx()
    assert (httpx_timeout.connect, httpx_timeout.pool) == (3, 45)
    assert Timeouts(pool=0).as_httpx().pool is None


def test_more_streams_than_httpx_default_pool_are_open_at_once() -> None:
    """120 streams through one default driver are all open at the same time:
    the server answers none until all 120 requests are in (httpx2's own
    default pool, 100 connections, would hold the 101st back for good)."""
    streams = 120
    barrier = threading.Barrier(streams, timeout=20)

    def reply(request: RecordedRequest) -> Reply:
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            return Reply(503, {"content-type": "application/json"}, (Send(b"{}"),))
        return replay(BODY)

    async def run(server: LoopbackServer) -> list[str]:
        driver = Driver(timeouts=Timeouts(connect=20, idle=30))
        texts: list[str] = []

        async def one() -> None:
            result = await driver.stream(_endpoint(server), SHAPE, REQUEST).final()
            texts.append(result.text)

        try:
            async with anyio.create_task_group() as group:
                for _ in range(streams):
                    group.start_soon(one)
        finally:
            await driver.aclose()
        return texts

    with LoopbackServer(reply) as server:
        texts = anyio.run(run, server)
    assert texts == ["pooled answer"] * streams
    assert len(server.requests) == streams


def _held(server: LoopbackServer) -> Reply:
    # Headers at once, then the body after a pause: the connection is busy.
    return stall(BODY, 0, 5.0)


def test_a_full_pool_is_a_typed_retryable_error_naming_its_limit() -> None:
    async def run(server: LoopbackServer) -> PoolTimeoutError:
        driver = Driver(limits=Limits(connections=2), timeouts=Timeouts(connect=5, pool=0.2))
        endpoint = _endpoint(server)
        first = driver.stream(endpoint, SHAPE, REQUEST)
        second = driver.stream(endpoint, SHAPE, REQUEST)
        await first.start()
        await second.start()
        third = driver.stream(endpoint, SHAPE, REQUEST)
        try:
            with pytest.raises(PoolTimeoutError) as caught:
                await third.start()
            await first.aclose()  # a connection comes free: the next request gets it
            fourth = driver.stream(endpoint, SHAPE, REQUEST)
            await fourth.start()
            assert fourth.status == 200
            await fourth.aclose()
            await second.aclose()
        finally:
            await driver.aclose()
        return caught.value

    with LoopbackServer(_held) as server:
        error = anyio.run(run, server)
    assert str(error) == (
        f"no free connection to 127.0.0.1:{server.port} within 0.2s (Timeouts.pool): "
        "all 2 connections (Limits.connections) were busy"
    )
    assert (error.kind, error.retryable, error.limit, error.value) == (
        "pool-timeout",
        True,
        "Limits.connections",
        2,
    )
    assert retries_before_content(error) is True
    assert retry_reason(error) == "no free connection"


def test_a_full_blocking_pool_is_the_same_error() -> None:
    with LoopbackServer(_held) as server:
        driver = Driver(limits=Limits(connections=1), timeouts=Timeouts(connect=5, pool=0.1))
        try:
            held = driver.sync_stream(_endpoint(server), SHAPE, REQUEST)
            held.start()
            with pytest.raises(PoolTimeoutError) as caught:
                driver.sync_stream(_endpoint(server), SHAPE, REQUEST).start()
            held.close()
        finally:
            driver.close()
    assert str(caught.value) == (
        f"no free connection to 127.0.0.1:{server.port} within 0.1s (Timeouts.pool): "
        "all 1 connections (Limits.connections) were busy"
    )
    assert (caught.value.limit, caught.value.value) == ("Limits.connections", 1)


# -- the driver's own pool (elelem.transport.pool) --------------------------------


def _pool(driver: Driver) -> BoundedPool:
    transport = driver.http()._transport
    assert isinstance(transport, PooledTransport)
    pool = transport._pool
    assert isinstance(pool, BoundedPool)
    return pool


async def _text(driver: Driver, server: KeepAliveServer) -> str:
    endpoint = Endpoint(ProviderId("anthropic"), server.url, api_key="k", auth_header="x-api-key")
    return (await driver.stream(endpoint, SHAPE, REQUEST).final()).text


def _serving(ending: str, delay: float = 0.0) -> KeepAliveServer:
    server = KeepAliveServer(ending, delay)
    server.start()
    return server


def test_waiters_are_served_in_order_on_the_one_connection() -> None:
    server = _serving("late", 0.15)

    async def run() -> tuple[list[str], str]:
        driver = Driver(limits=Limits(connections=1), timeouts=Timeouts(connect=5, idle=5))
        done: list[str] = []

        async def one(name: str, after: float) -> None:
            await anyio.sleep(after)
            assert await _text(driver, server) == "kept alive"
            done.append(name)

        try:
            async with anyio.create_task_group() as group:
                for i, name in enumerate("ABC"):
                    group.start_soon(one, name, i * 0.03)
            return done, repr(_pool(driver))
        finally:
            await driver.aclose()

    try:
        done, pool = anyio.run(run)
    finally:
        server.stop()
    assert done == ["A", "B", "C"]
    assert (server.requests, server.connections) == (3, 1)
    assert pool == "<BoundedPool [1 of 1 connections, 1 idle, 0 waiting]>"


def test_a_cancelled_waiter_leaves_no_slot_behind() -> None:
    server = _serving("late", 0.2)

    async def run() -> str:
        driver = Driver(limits=Limits(connections=1), timeouts=Timeouts(connect=5, idle=5))
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(_text, driver, server)
                await anyio.sleep(0.05)
                with anyio.move_on_after(0.05):  # waits for the busy connection, then gives up
                    await _text(driver, server)
            assert await _text(driver, server) == "kept alive"
            return repr(_pool(driver))
        finally:
            await driver.aclose()

    try:
        pool = anyio.run(run)
    finally:
        server.stop()
    assert (server.requests, server.connections) == (2, 1)
    assert pool == "<BoundedPool [1 of 1 connections, 1 idle, 0 waiting]>"


def test_idle_connections_expire_and_past_the_keepalive_count_close() -> None:
    server = _serving("late", 0.1)

    async def run() -> list[str]:
        driver = Driver(
            limits=Limits(keepalive_connections=1, keepalive_expiry=0.3),
            timeouts=Timeouts(connect=5, idle=5),
        )
        states = []

        async def burst() -> None:
            async with anyio.create_task_group() as group:
                for _ in range(3):
                    group.start_soon(_text, driver, server)

        try:
            await burst()  # 3 new connections; 1 kept idle, 2 closed
            states.append(repr(_pool(driver)))
            await burst()  # the idle one reused, 2 new
            states.append(repr(_pool(driver)))
            await anyio.sleep(0.4)
            await _text(driver, server)  # the idle one expired: a new one
            states.append(repr(_pool(driver)))
        finally:
            await driver.aclose()
        return states

    try:
        states = anyio.run(run)
    finally:
        server.stop()
    assert states == ["<BoundedPool [1 of 1000 connections, 1 idle, 0 waiting]>"] * 3
    assert (server.requests, server.connections) == (7, 6)


def test_a_full_pool_lends_an_idle_connection_s_slot_to_another_origin() -> None:
    first, second = _serving("with-last"), _serving("with-last")

    async def run() -> list[str]:
        driver = Driver(limits=Limits(connections=1), timeouts=Timeouts(connect=5, pool=1))
        try:
            texts = [await _text(driver, first), await _text(driver, second)]
            texts.append(await _text(driver, first))
            return [*texts, repr(_pool(driver))]
        finally:
            await driver.aclose()

    try:
        out = anyio.run(run)
    finally:
        first.stop()
        second.stop()
    assert out == ["kept alive"] * 3 + ["<BoundedPool [1 of 1 connections, 1 idle, 0 waiting]>"]
    assert (first.connections, second.connections) == (2, 1)
