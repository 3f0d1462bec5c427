"""The actions a turn flow yields, and what it reads of a response stream.

A flow (:class:`~elelem.turns.engine.TurnEngine`'s, the tool loop's, a
history processor's) is a generator of these actions; a driver
(:mod:`elelem.turns.drive`) does the I/O each one asks for and sends back
its result (see :mod:`elelem.turns.engine` for the table).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, TypeVar

from elelem.conversation.events import Draft
from elelem.providers import Target
from elelem.providers.protocol import Model
from elelem.stream import AssembledResponse
from elelem.vocabulary import Drop, Part

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Send:
    """Make the stream of one request to ``target`` (sent on the first
    :class:`Read`); ``arguments`` are :meth:`elelem.Client.stream`'s keyword
    arguments (``messages``, ``system``, ``tools``, …) except ``timeouts``,
    which the driver adds.  ``streamed`` False asks for the response
    non-streamed (``--no-stream``): the same chunks, all at once."""

    target: Target | Model
    arguments: dict[str, Any]
    streamed: bool = True


@dataclass(frozen=True, slots=True)
class Read:
    """Read the next ``(chunk, committed)`` pair of the current stream."""


READ = Read()


@dataclass(frozen=True, slots=True)
class Append:
    """Append ``drafts`` to the conversation as one commit."""

    drafts: tuple[Draft, ...]


@dataclass(frozen=True, slots=True)
class Call:
    """Call ``function(*args)`` and send back its result.

    The async driver awaits an awaitable result; with ``blocking`` it runs
    the function in a worker thread (for work that would stall the event
    loop).  The sync driver refuses an awaitable result with
    :class:`TypeError`.
    """

    function: Callable[..., object]
    args: tuple[Any, ...] = ()
    blocking: bool = False
    name: str = ""
    """What the function is, for messages (its ``__name__`` when empty)."""

    def describe(self) -> str:
        """The function's name for messages."""
        return self.name or getattr(self.function, "__name__", repr(self.function))


@dataclass(frozen=True, slots=True)
class Wait:
    """Sleep ``seconds`` (a retry's back-off)."""

    seconds: float


Action: TypeAlias = Send | Read | Append | Call | Wait
Flow: TypeAlias = Generator[Action, Any, T]
"""A flow of actions ending in a value of type ``T``."""


class StreamView(Protocol):
    """What the engine reads of a response stream, none of it I/O (an
    :class:`elelem.transport.ResponseStream` is one, and so is
    :class:`elelem.transport.SyncResponseStream`)."""

    request_id: str | None
    dropped: tuple[Drop, ...]

    def partial(self) -> AssembledResponse:
        """What an interrupted stream keeps."""
        ...

    def result(self) -> AssembledResponse:
        """The assembled response once the stream ended."""
        ...

    def open_parts(self) -> tuple[Part, ...]:
        """The text and reasoning blocks in progress (marked incomplete)."""
        ...


__all__ = ["READ", "Action", "Append", "Call", "Flow", "Read", "Send", "StreamView", "Wait"]
