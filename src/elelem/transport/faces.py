"""The reading surface every stream offers, written once over ``step()``.

:class:`AsyncFace` and :class:`SyncFace` give a stream that has ``step()``
(the next ``(chunk, committed)`` pair, or None at the end), ``result()`` and
``aclose()``/``close()`` the rest of what a caller reads: iteration over
chunks, :meth:`with_commits`, :meth:`text`, :meth:`reasoning`, :meth:`final`
and the context manager.  The in-process streams
(:mod:`elelem.transport.local`) and a fallback's stream
(:mod:`elelem.providers.fallback`) use them; the HTTP streams have their own,
tuned for the wire (``final`` reads a whole body in one loop).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from types import TracebackType
from typing import Any, Self

from elelem.stream import AssembledResponse, Assembler, Chunk, TextDelta
from elelem.stream.chunks import ReasoningDelta
from elelem.vocabulary import Part

Pair = tuple[Chunk, tuple[Part, ...]]


class AsyncFace:
    """The async reading surface over ``step()`` (see the module docs)."""

    async def step(self) -> Pair | None:
        """The next ``(chunk, committed)`` pair, or None at the end."""
        raise NotImplementedError

    def result(self) -> AssembledResponse:
        """The assembled response once the stream ended."""
        raise NotImplementedError

    async def aclose(self) -> None:
        """Close the stream."""
        raise NotImplementedError

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Chunk:
        pair = await self.step()
        if pair is None:
            raise StopAsyncIteration
        return pair[0]

    async def with_commits(self) -> AsyncIterator[Pair]:
        """Iterate ``(chunk, committed)`` pairs."""
        while (pair := await self.step()) is not None:
            yield pair

    async def text(self) -> AsyncIterator[str]:
        """Iterate the text deltas' text."""
        while (pair := await self.step()) is not None:
            if type(pair[0]) is TextDelta and pair[0].text:
                yield pair[0].text

    async def reasoning(self) -> AsyncIterator[str]:
        """Iterate the reasoning deltas' text."""
        while (pair := await self.step()) is not None:
            if type(pair[0]) is ReasoningDelta and pair[0].text:
                yield pair[0].text

    async def final(self) -> AssembledResponse:
        """Drain the stream and return the assembled response."""
        while await self.step() is not None:
            pass
        return self.result()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class SyncFace:
    """The blocking reading surface over ``step()`` (see the module docs)."""

    def step(self) -> Pair | None:
        """The next ``(chunk, committed)`` pair, or None at the end."""
        raise NotImplementedError

    def result(self) -> AssembledResponse:
        """The assembled response once the stream ended."""
        raise NotImplementedError

    def close(self) -> None:
        """Close the stream."""
        raise NotImplementedError

    def __iter__(self) -> Self:
        return self

    def __next__(self) -> Chunk:
        pair = self.step()
        if pair is None:
            raise StopIteration
        return pair[0]

    def with_commits(self) -> Iterator[Pair]:
        """Iterate ``(chunk, committed)`` pairs."""
        while (pair := self.step()) is not None:
            yield pair

    def text(self) -> Iterator[str]:
        """Iterate the text deltas' text."""
        while (pair := self.step()) is not None:
            if type(pair[0]) is TextDelta and pair[0].text:
                yield pair[0].text

    def reasoning(self) -> Iterator[str]:
        """Iterate the reasoning deltas' text."""
        while (pair := self.step()) is not None:
            if type(pair[0]) is ReasoningDelta and pair[0].text:
                yield pair[0].text

    def final(self) -> AssembledResponse:
        """Drain the stream and return the assembled response."""
        while self.step() is not None:
            pass
        return self.result()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class Assembled:
    """What a stream with its own :attr:`assembler` answers without I/O."""

    assembler: Assembler

    def partial(self) -> AssembledResponse:
        """What arrived so far, open text and reasoning kept as incomplete blocks."""
        return self.assembler.partial()

    def result(self) -> AssembledResponse:
        """The assembled response of a stream read to its end."""
        return self.assembler.result()

    def open_parts(self) -> tuple[Part, ...]:
        """The text and reasoning blocks in progress."""
        return self.assembler.open_parts()

    @property
    def finished(self) -> bool:
        """True once ``finish`` arrived."""
        return self.assembler.finished


class Around:
    """What a stream standing around another (``_inner``) tells of its request."""

    _inner: Any

    @property
    def request_id(self) -> str | None:
        """The inner stream's request id."""
        return getattr(self._inner, "request_id", None)

    @property
    def dropped(self) -> tuple[Any, ...]:
        """What the inner request's encoder left out."""
        return tuple(getattr(self._inner, "dropped", ()))


__all__ = ["Around", "Assembled", "AsyncFace", "Pair", "SyncFace"]
