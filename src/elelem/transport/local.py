"""Streams that no HTTP response feeds: chunks made in-process.

A model that answers in the calling process (:class:`elelem.testing.TestModel`,
:class:`elelem.testing.FunctionModel`, a user's own) hands its chunks to a
:class:`LocalStream` (async) or :class:`SyncLocalStream` (blocking).  They go
through the one :class:`~elelem.stream.Assembler`, like a provider's, and the
stream offers what :class:`~elelem.transport.ResponseStream` and
:class:`~elelem.transport.SyncResponseStream` offer to the engine and to a
caller (``step``, ``final``, ``text``, ``partial``, ``result``,
``open_parts``, iteration, ``request_id``, ``dropped``, ``retries``), so the
log, the renderer and the tool loop cannot tell them apart.

The chunks are made on the first read, not before, as a provider's request
is sent on the first read.  ``produce`` returns an iterable of chunks; the
async stream awaits it when it is awaitable and iterates an async iterable.
An exception ``produce`` (or its iterator) raises surfaces at that read, with
what arrived kept by :meth:`partial`.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import Any

from elelem.errors import IncompleteStreamError
from elelem.stream import Assembler, Chunk, Retry
from elelem.transport.faces import Assembled, AsyncFace, SyncFace
from elelem.vocabulary import Drop, Part, ProviderId

Produce = Callable[[], Any]
"""Makes the chunks of one response: an iterable of chunks (or, for the async
stream, an awaitable of one, or an async iterable)."""


class _LocalCore(Assembled):
    """What both local streams share: the assembler and the bookkeeping."""

    def __init__(
        self,
        produce: Produce,
        provider: ProviderId,
        *,
        request_id: str | None = None,
        dropped: tuple[Drop, ...] = (),
    ) -> None:
        self._produce = produce
        self.assembler = Assembler(provider)
        self.request_id = request_id
        self.dropped = dropped
        self.retries: list[Retry] = []
        self.output_type: Any = None
        self.last_committed: tuple[Part, ...] = ()
        self._closed = False

    def _feed(self, chunk: Chunk) -> tuple[Chunk, tuple[Part, ...]]:
        if type(chunk) is Retry:
            self.retries.append(chunk)
        committed = self.assembler.feed(chunk)
        self.last_committed = committed
        return chunk, committed

    def _end(self) -> None:
        # As a provider's body that ends early: retryable, the partial kept.
        if not self.assembler.finished:
            self._closed = True
            raise IncompleteStreamError("the model's chunks ended without a finish")


class LocalStream(_LocalCore, AsyncFace):
    """An async stream of chunks made in-process (see the module docs)."""

    _chunks: Iterator[Chunk] | AsyncIterator[Chunk] | None = None

    async def _source(self) -> Iterator[Chunk] | AsyncIterator[Chunk]:
        if self._chunks is None:
            made = self._produce()
            if inspect.isawaitable(made):
                made = await made
            self._chunks = made.__aiter__() if hasattr(made, "__aiter__") else iter(made)
        return self._chunks

    async def step(self) -> tuple[Chunk, tuple[Part, ...]] | None:
        """The next ``(chunk, committed)`` pair, or None at the end."""
        if self._closed:
            return None
        source = await self._source()
        try:
            if isinstance(source, Iterator):
                chunk = next(source)
            else:
                chunk = await source.__anext__()
        except (StopIteration, StopAsyncIteration):
            self._end()
            return None
        return self._feed(chunk)

    async def start(self) -> None:
        """Make the chunks (idempotent)."""
        await self._source()

    async def aclose(self) -> None:
        """End the stream; further reads end it."""
        self._closed = True


class SyncLocalStream(_LocalCore, SyncFace):
    """A blocking stream of chunks made in-process (see the module docs).
    ``produce`` must return chunks, not an awaitable: :class:`TypeError`
    otherwise, at the first read."""

    _chunks: Iterator[Chunk] | None = None

    def _source(self) -> Iterator[Chunk]:
        if self._chunks is None:
            made = self._produce()
            if inspect.isawaitable(made) or hasattr(made, "__aiter__"):
                if inspect.iscoroutine(made):
                    made.close()  # never awaited: close it rather than leak a warning
                raise TypeError("a blocking stream needs a synchronous model function")
            self._chunks = iter(made)
        return self._chunks

    def step(self) -> tuple[Chunk, tuple[Part, ...]] | None:
        """The next ``(chunk, committed)`` pair, or None at the end."""
        if self._closed:
            return None
        chunk = next(self._source(), None)
        if chunk is None:
            self._end()
            return None
        return self._feed(chunk)

    def start(self) -> None:
        """Make the chunks (idempotent)."""
        self._source()

    def close(self) -> None:
        """End the stream; further reads end it."""
        self._closed = True


def chunks_of(items: Iterable[Chunk]) -> Produce:
    """A ``produce`` giving ``items`` (a fixed response)."""
    fixed = tuple(items)
    return lambda: fixed


__all__ = ["LocalStream", "Produce", "SyncLocalStream", "chunks_of"]
