"""Async and blocking drive one core (issue #37): the effect drivers of
``elelem.transport.faces`` run the same generator of calls either way, and
the package keeps no more than five blocking twin classes."""

from __future__ import annotations

import ast
import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from elelem.errors import IncompleteStreamError, TransportError
from elelem.stream import BlockEnd, BlockStart, Finish, ResponseStart, TextDelta
from elelem.transport.faces import AsyncFace, Effects, Io, SyncFace, awaiting, blocking
from elelem.transport.local import LocalCore
from elelem.vocabulary import ProviderId

SRC = Path(__file__).resolve().parent.parent / "src" / "elelem"


class Socket:
    """Both kinds of a socket: ``recv`` answers at once, or awaitably."""

    def __init__(self, frames: list[str], fail_at: int | None = None) -> None:
        self.frames, self.fail_at = frames, fail_at
        self.calls: list[str] = []

    def recv(self) -> str:
        self.calls.append("recv")
        if self.fail_at is not None and len(self.calls) > self.fail_at:
            raise TransportError("dropped", retryable=True)
        return self.frames.pop(0)

    async def arecv(self) -> str:
        return self.recv()

    def close(self) -> None:
        self.calls.append("close")

    async def aclose(self) -> None:
        self.calls.append("aclose")


def reading(socket: Socket, count: int) -> Effects[list[str]]:
    """A core's step, written once: ``count`` frames, the socket closed
    after a drop, the drop named in what it returns."""
    got: list[str] = []
    try:
        for _ in range(count):
            got.append((yield Io(socket, "recv", async_method="arecv")))
    except TransportError as exc:
        yield Io(socket, "close", async_method="aclose")
        got.append(f"dropped: {exc.message}")
    return got


def test_the_same_core_runs_blocking_and_async_to_the_same_value() -> None:
    blocking_socket, async_socket = Socket(["a", "b", "c"]), Socket(["a", "b", "c"])
    assert blocking(reading(blocking_socket, 2)) == ["a", "b"]
    assert asyncio.run(awaiting(reading(async_socket, 2))) == ["a", "b"]
    assert blocking_socket.calls == async_socket.calls == ["recv", "recv"]


def test_an_error_is_thrown_into_the_core_at_its_yield_by_both_drivers() -> None:
    blocking_socket, async_socket = Socket(["a", "b"], fail_at=1), Socket(["a", "b"], fail_at=1)
    assert blocking(reading(blocking_socket, 2)) == ["a", "dropped: dropped"]
    assert asyncio.run(awaiting(reading(async_socket, 2))) == ["a", "dropped: dropped"]
    # The async driver calls the async name of a call (aclose), the blocking one its own.
    assert blocking_socket.calls == ["recv", "recv", "close"]
    assert async_socket.calls == ["recv", "recv", "aclose"]


def test_an_error_the_core_does_not_catch_leaves_both_drivers_unchanged() -> None:
    def failing() -> Effects[None]:
        yield Io({}, "pop", ("missing",))

    with pytest.raises(KeyError, match="missing"):
        blocking(failing())
    with pytest.raises(KeyError, match="missing"):
        asyncio.run(awaiting(failing()))


def chunks() -> Iterator[Any]:
    yield ResponseStart(provider=ProviderId("test"), model="m")
    yield BlockStart(0, "text")
    yield TextDelta(index=0, text="Hi")
    yield BlockEnd(0)
    yield Finish("stop")


def test_an_in_process_stream_reads_the_same_through_either_face() -> None:
    test = ProviderId("test")
    blocking_face = SyncFace(LocalCore(chunks, test, blocking=True, request_id="r1"))
    assert blocking_face.final().text == "Hi"

    async def read() -> str:
        face = AsyncFace(LocalCore(chunks, test, blocking=False, request_id="r1"))
        return (await face.final()).text

    assert asyncio.run(read()) == "Hi"
    assert blocking_face.request_id == "r1"


def test_a_blocking_face_refuses_an_async_model_function_and_a_short_stream_is_incomplete() -> None:
    async def later() -> list[Any]:
        return list(chunks())

    test = ProviderId("test")
    face = SyncFace(LocalCore(later, test, blocking=True))
    with pytest.raises(TypeError, match="a blocking stream needs a synchronous model function"):
        face.step()
    short = SyncFace(LocalCore(lambda: [ResponseStart(provider=test)], test, blocking=True))
    with pytest.raises(IncompleteStreamError, match="ended without a finish"):
        list(short)


def twin_classes() -> list[str]:
    names = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name.startswith(("Sync", "Blocking")):
                names.append(node.name)
    return names


def test_the_package_keeps_at_most_five_blocking_twin_classes() -> None:
    # The public SyncClient, the HTTP stream's blocking shell, the one
    # blocking face, the blocking pool's whole-piece bodies and the live
    # session's blocking face; every other stream is a core read through
    # the one face.
    assert sorted(twin_classes()) == [
        "BlockingPool",
        "SyncClient",
        "SyncFace",
        "SyncLiveSession",
        "SyncResponseStream",
    ]
