"""Streams that no HTTP response feeds: chunks made in-process.

A model that answers in the calling process (:class:`elelem.testing.TestModel`,
:class:`elelem.testing.FunctionModel`, a user's own) hands its chunks to a
:class:`LocalCore`, read through the one async or blocking face
(:func:`local_stream`).  They go through the one
:class:`~elelem.stream.Assembler`, like a provider's, and the stream offers
what :class:`~elelem.transport.ResponseStream` and
:class:`~elelem.transport.SyncResponseStream` offer to the engine and to a
caller (``step``, ``final``, ``text``, ``partial``, ``result``,
``open_parts``, iteration, ``request_id``, ``dropped``, ``retries``), so the
log, the renderer and the tool loop cannot tell them apart.

The chunks are made on the first read (or on ``with``), as a provider's
request is sent.  ``produce`` returns an iterable of chunks; read async, it
may return an awaitable of one, or an async iterable.  An exception
``produce`` (or its iterator) raises surfaces at that read, with what
arrived kept by :meth:`~elelem.transport.faces.SyncFace.partial`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

from elelem.errors import IncompleteStreamError
from elelem.stream import Assembler, Chunk, Retry
from elelem.transport.faces import (
    Assembled,
    ChatFace,
    Effects,
    Io,
    Pair,
    SyncChatFace,
    chat_face,
)
from elelem.vocabulary import Drop, ProviderId

Produce = Callable[[], Any]
"""Makes the chunks of one response: an iterable of chunks (or, read
async, an awaitable of one, or an async iterable)."""


class LocalCore(Assembled):
    """The chunks ``produce`` makes, fed to the assembler (see the module
    docs); ``blocking`` refuses what only an async read can take."""

    def __init__(
        self,
        produce: Produce,
        provider: ProviderId,
        *,
        blocking: bool,
        request_id: str | None = None,
        dropped: tuple[Drop, ...] = (),
    ) -> None:
        self._produce = produce
        self._blocking = blocking
        self.assembler = Assembler(provider)
        self.request_id = request_id
        self.dropped = dropped
        self.retries: list[Retry] = []
        self._source: Io | None = None  # the call that gives the next chunk
        self._closed = False

    def starting(self) -> Effects[None]:
        """Make the chunks (idempotent)."""
        if self._source is not None:
            return
        made = yield Io(self, "_produce")
        if hasattr(made, "__aiter__") or inspect.isawaitable(made):
            if self._blocking:
                if inspect.iscoroutine(made):
                    made.close()  # never awaited: close it rather than leak a warning
                raise TypeError("a blocking stream needs a synchronous model function")
            self._source = Io(made.__aiter__(), "__anext__")
        else:
            self._source = Io(iter(made), "__next__")

    def stepping(self) -> Effects[Pair | None]:
        """The next ``(chunk, committed)`` pair, or None at the end."""
        if self._closed:
            return None
        yield from self.starting()
        assert self._source is not None
        try:
            chunk: Chunk = yield self._source
        except (StopIteration, StopAsyncIteration):
            # As a provider's body that ends early: retryable, the partial kept.
            if not self.assembler.finished:
                self._closed = True
                raise IncompleteStreamError("the model's chunks ended without a finish") from None
            return None
        if type(chunk) is Retry:
            self.retries.append(chunk)
        return chunk, self.assembler.feed(chunk)

    def closing(self) -> Effects[None]:
        """End the stream; further reads end it."""
        self._closed = True
        yield from ()


def local_stream(
    produce: Produce,
    provider: ProviderId,
    *,
    sync: bool,
    request_id: str | None = None,
    dropped: tuple[Drop, ...] = (),
) -> ChatFace | SyncChatFace:
    """The stream of the chunks ``produce`` makes: a
    :data:`~elelem.transport.faces.ChatFace`, or with ``sync`` a blocking
    :data:`~elelem.transport.faces.SyncChatFace`."""
    core = LocalCore(produce, provider, blocking=sync, request_id=request_id, dropped=dropped)
    return chat_face(core, sync=sync)


def chunks_of(items: Iterable[Chunk]) -> Produce:
    """A ``produce`` giving ``items`` (a fixed response)."""
    fixed = tuple(items)
    return lambda: fixed


__all__ = ["LocalCore", "Produce", "chunks_of", "local_stream"]
