"""The one ``with`` block (``elelem.transport.closing``): what enters starts,
what leaves closes, an exception in the block passes through after it."""

from __future__ import annotations

import asyncio
import socket

import pytest

from elelem.recordings.loopback import LoopbackServer
from elelem.testing.models import TestModel
from elelem.transport.closing import AsyncClosing, Closing


class Door(Closing):
    def __init__(self) -> None:
        self.said: list[str] = []

    def _enter(self) -> None:
        self.said.append("opened")

    def close(self) -> None:
        self.said.append("closed")


class AsyncDoor(AsyncClosing):
    def __init__(self) -> None:
        self.said: list[str] = []

    async def aclose(self) -> None:
        self.said.append("closed")


def test_a_block_gives_the_object_and_closes_it_even_when_it_raises() -> None:
    door = Door()
    with pytest.raises(KeyError, match="inside"), door as entered:
        assert entered is door
        assert door.said == ["opened"]
        raise KeyError("inside")
    assert door.said == ["opened", "closed"]


def test_an_async_block_closes_by_aclose_and_passes_the_exception_on() -> None:
    door = AsyncDoor()

    async def run() -> None:
        async with door as entered:
            assert entered is door
            raise ValueError("inside")

    with pytest.raises(ValueError, match="inside"):
        asyncio.run(run())
    assert door.said == ["closed"]


def test_a_loopback_server_starts_on_entering_and_stops_on_leaving() -> None:
    with LoopbackServer([]) as server:
        socket.create_connection(("127.0.0.1", server.port), timeout=2).close()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", server.port), timeout=2)


def test_a_face_is_started_on_entering() -> None:
    from elelem.client import SyncClient

    model = TestModel()
    with SyncClient(env={}) as client:
        stream = client.stream(model, "hi")
        assert model.requests == []
        with stream:
            assert len(model.requests) == 1
            assert stream.final().text == "success (no tool calls)"
