"""Streams written once, read async or blocking: cores, their effects, two faces.

A stream that is not an HTTP response (an in-process model's, a fallback's,
a wrapped model's, a speech or transcription reader over the driver's
stream) is written once as a *core*: its step is a generator that yields
:class:`Io` effects (the call of a method of the stream, socket or
iterator it stands on), is sent back what each call returned (or has its
error thrown in at the ``yield``), and returns the next ``(chunk,
committed)`` pair, or None at the end (:class:`Core`).  Two thin drivers
run any such generator: :func:`awaiting` (each call awaited when it gives
an awaitable) and :func:`blocking` (each call in the calling thread), as
the turn engine's flows are run by :func:`elelem.turns.drive.drive` and
``drive_sync``.

:class:`AsyncFace` and :class:`SyncFace` are the two reading surfaces over a
core (``AsyncFace(core)``, ``SyncFace(core)``): iteration over what the core
shows of each pair (a chat stream's chunks, a speech stream's audio
bytes), :meth:`~SyncFace.with_commits`, :meth:`~SyncFace.text`, :meth:`~SyncFace.objects`,
:meth:`~SyncFace.reasoning`, :meth:`~SyncFace.final` and the context
manager.  The HTTP streams (:class:`~elelem.transport.ResponseStream`,
:class:`~elelem.transport.SyncResponseStream`) are faces that are their
own core, with their own steps tuned for the wire (``final`` reads a whole
body in one loop).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Generator, Iterator, Mapping
from types import MappingProxyType
from typing import Any, Generic, NamedTuple, Protocol, Self, TypeVar

from elelem.outputs import PartialJSON
from elelem.stream import AssembledResponse, Assembler, Chunk, Retry, TextDelta
from elelem.stream.chunks import ReasoningDelta
from elelem.transport.closing import AsyncClosing, Closing
from elelem.vocabulary import Drop, Part

Pair = tuple[Chunk, tuple[Part, ...]]

T = TypeVar("T")
Item = TypeVar("Item", covariant=True)
Whole = TypeVar("Whole", covariant=True)
I = TypeVar("I")  # noqa: E741 - the item a face yields
W = TypeVar("W")

_NO_KWARGS: Mapping[str, Any] = MappingProxyType({})


class Io(NamedTuple):
    """One call a core asks its driver to make: ``target.method(*args,
    **kwargs)``; the async driver calls ``async_method`` where the async
    object names it otherwise (a stream's ``aclose``) and awaits what the
    call gives when it is awaitable."""

    target: Any
    method: str
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = _NO_KWARGS
    async_method: str | None = None


Effects = Generator[Io, Any, T]
"""A core's step: yields :class:`Io` calls, is sent each call's value,
returns ``T``."""


def blocking(effects: Effects[T]) -> T:
    """Run ``effects`` in the calling thread: each call made as it is
    yielded, its value sent back, its error thrown in at the ``yield``."""
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            io = effects.send(value) if error is None else effects.throw(error)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        try:
            value, error = getattr(io.target, io.method)(*io.args, **io.kwargs), None
        except BaseException as exc:  # noqa: BLE001 - thrown into the core, which decides
            value, error = None, exc


async def awaiting(effects: Effects[T]) -> T:
    """Run ``effects`` async: as :func:`blocking`, each call awaited when it
    gives an awaitable."""
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            io = effects.send(value) if error is None else effects.throw(error)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        try:
            value = getattr(io.target, io.async_method or io.method)(*io.args, **io.kwargs)
            if inspect.isawaitable(value):
                value = await value
            error = None
        except BaseException as exc:  # noqa: BLE001 - thrown into the core, which decides
            value, error = None, exc


def step_of(stream: Any) -> Io:
    """The next pair of ``stream`` (a face, or an HTTP stream)."""
    return Io(stream, "step")


def close_of(stream: Any) -> Io:
    """Close ``stream`` (``aclose`` when async)."""
    return Io(stream, "close", async_method="aclose")


def start_of(stream: Any) -> Io:
    """Send ``stream``'s request and wait for its headers."""
    return Io(stream, "start")


class Core(Protocol[Item, Whole]):
    """A stream's logic without its I/O (see the module docs)."""

    def stepping(self) -> Effects[Pair | None]:
        """The next ``(chunk, committed)`` pair, or None at the end."""
        ...

    def starting(self) -> Effects[None]:
        """Send the request (or make the chunks), idempotent."""
        ...

    def closing(self) -> Effects[None]:
        """Close what the stream stands on."""
        ...

    def shown(self, pair: Pair) -> Item | None:
        """What iterating the face yields of ``pair`` (None: nothing)."""
        ...

    def result(self) -> Whole:
        """The whole answer of a stream read to its end (no I/O)."""
        ...

    def partial(self) -> AssembledResponse:
        """What arrived so far."""
        ...

    def open_parts(self) -> tuple[Part, ...]:
        """The text and reasoning blocks in progress."""
        ...


class _Reading(Generic[I, W]):
    """What both faces hold: the core, and what it tells of its request,
    copied after each step (a fallback's request id changes with its
    target), so that the HTTP streams keep these as plain attributes."""

    core: Core[I, W]
    request_id: str | None
    """The provider's id of the request (the current one's)."""
    dropped: tuple[Drop, ...]
    """What the request's encoder left out."""
    retries: list[Retry]
    """The retries and fallback switches before the answer."""
    output_type: Any
    """The type the answer is asked to be (``Client.stream(output_type=)``)."""

    def __init__(self, core: Core[I, W]) -> None:
        self.core = core
        self.output_type = None
        self._copy_request()

    def _copy_request(self) -> None:
        core = self.core
        self.request_id = getattr(core, "request_id", None)
        self.dropped = tuple(getattr(core, "dropped", ()))
        self.retries = list(getattr(core, "retries", ()))

    def result(self) -> W:
        """The whole answer of a stream read to its end (no I/O)."""
        return self.core.result()

    def partial(self) -> AssembledResponse:
        """What arrived so far, open text and reasoning kept as incomplete blocks."""
        return self.core.partial()

    def open_parts(self) -> tuple[Part, ...]:
        """The text and reasoning blocks in progress."""
        return self.core.open_parts()


class AsyncFace(_Reading[I, W], AsyncClosing):
    """The async reading surface of a core (see the module docs)."""

    async def step(self) -> Pair | None:
        """The next ``(chunk, committed)`` pair, or None at the end."""
        try:
            return await awaiting(self.core.stepping())
        finally:
            self._copy_request()

    async def start(self) -> None:
        """Send the request (or make the chunks); idempotent."""
        try:
            await awaiting(self.core.starting())
        finally:
            self._copy_request()

    async def aclose(self) -> None:
        """Close the stream."""
        await awaiting(self.core.closing())

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> I:
        shown = self.core.shown
        while (pair := await self.step()) is not None:
            item = shown(pair)
            if item is not None:
                return item
        raise StopAsyncIteration

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

    async def objects(self) -> AsyncIterator[Any]:
        """The answer's JSON value as it arrives: after each text delta that
        changed it, the object (or array) so far, read tolerantly by
        :class:`~elelem.outputs.PartialJSON` (open strings hold their text so
        far).  It is the same object each time, updated in place."""
        reader = PartialJSON()
        while (pair := await self.step()) is not None:
            if type(pair[0]) is TextDelta and reader.feed(pair[0].text):
                yield reader.value

    async def final(self) -> W:
        """Drain the stream and return the whole answer."""
        while await self.step() is not None:
            pass
        return self.result()

    async def _enter(self) -> None:
        await self.start()


class SyncFace(_Reading[I, W], Closing):
    """The blocking reading surface of a core, in the calling thread (see
    the module docs)."""

    def step(self) -> Pair | None:
        """The next ``(chunk, committed)`` pair, or None at the end."""
        try:
            return blocking(self.core.stepping())
        finally:
            self._copy_request()

    def start(self) -> None:
        """Send the request (or make the chunks); idempotent."""
        try:
            blocking(self.core.starting())
        finally:
            self._copy_request()

    def close(self) -> None:
        """Close the stream."""
        blocking(self.core.closing())

    def __iter__(self) -> Self:
        return self

    def __next__(self) -> I:
        shown = self.core.shown
        while (pair := self.step()) is not None:
            item = shown(pair)
            if item is not None:
                return item
        raise StopIteration

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

    def objects(self) -> Iterator[Any]:
        """The answer's JSON value as it arrives (see :meth:`AsyncFace.objects`)."""
        reader = PartialJSON()
        while (pair := self.step()) is not None:
            if type(pair[0]) is TextDelta and reader.feed(pair[0].text):
                yield reader.value

    def final(self) -> W:
        """Drain the stream and return the whole answer."""
        while self.step() is not None:
            pass
        return self.result()

    def _enter(self) -> None:
        self.start()


ChatFace = AsyncFace[Chunk, AssembledResponse]
"""An async face iterating chunks, whose whole answer is the assembled response."""

SyncChatFace = SyncFace[Chunk, AssembledResponse]
"""A blocking face iterating chunks, whose whole answer is the assembled response."""


def chat_face(core: Core[Chunk, AssembledResponse], *, sync: bool) -> ChatFace | SyncChatFace:
    """The face a chat stream's ``core`` is read through: async, or with
    ``sync`` blocking (what :meth:`elelem.providers.protocol.Model.open`
    returns)."""
    return SyncFace(core) if sync else AsyncFace(core)


class Chunks:
    """A core whose face yields the chunk of each pair (a chat stream's)."""

    def shown(self, pair: Pair) -> Chunk:
        """The chunk of ``pair``."""
        return pair[0]


class Assembled(Chunks):
    """What a core with its own :attr:`assembler` answers without I/O (an
    HTTP stream's core too, :class:`~elelem.transport.stream_core.StreamCore`)."""

    assembler: Assembler

    def partial(self) -> AssembledResponse:
        """What arrived so far, open text and reasoning kept as incomplete blocks."""
        return self.assembler.partial()

    def result(self) -> AssembledResponse:
        """The assembled response of a stream read to its end (no I/O)."""
        return self.assembler.result()

    def open_parts(self) -> tuple[Part, ...]:
        """The text and reasoning blocks in progress (see
        :meth:`Assembler.open_parts <elelem.stream.Assembler.open_parts>`)."""
        return self.assembler.open_parts()

    @property
    def finished(self) -> bool:
        """True once ``finish`` arrived."""
        return self.assembler.finished


class Around(Chunks):
    """What a core standing around another stream (``_inner``) tells of its
    request, and how it starts and closes: the inner stream is sent on the
    first read (so a fallback can still move on when it fails), and closed."""

    _inner: Any

    @property
    def request_id(self) -> str | None:
        """The inner stream's request id."""
        return getattr(self._inner, "request_id", None)

    @property
    def dropped(self) -> tuple[Any, ...]:
        """What the inner request's encoder left out."""
        return tuple(getattr(self._inner, "dropped", ()))

    def starting(self) -> Effects[None]:
        """Nothing: the inner stream is sent on the first read."""
        yield from ()

    def closing(self) -> Effects[None]:
        """Close the inner stream."""
        yield close_of(self._inner)


__all__ = [
    "Around",
    "Assembled",
    "AsyncFace",
    "ChatFace",
    "Chunks",
    "Core",
    "Effects",
    "Io",
    "Pair",
    "SyncChatFace",
    "SyncFace",
    "awaiting",
    "blocking",
    "chat_face",
    "close_of",
    "start_of",
    "step_of",
]
