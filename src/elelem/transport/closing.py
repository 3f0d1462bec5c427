"""The one ``with`` block of what closes at its end: streams, clients, servers.

A class that is used as ``with obj:`` (:class:`Closing`) or ``async with
obj:`` (:class:`AsyncClosing`) says only what entering starts (``_enter``:
nothing unless it starts something first, a face its stream, a server its
thread) and what leaving ends (``_leave``: ``close`` or ``aclose``, a server's
``stop``); the block closes it however it ends, an exception included, and
never swallows that exception.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Self


class Closing:
    """``with obj:`` enters by :meth:`_enter` and gives ``obj``; leaving
    runs :meth:`_leave` (``close()``) however the block ends."""

    close: Callable[[], None]

    def _enter(self) -> object:
        """What entering the block does first: nothing, unless a subclass says."""
        return None

    def _leave(self) -> None:
        """What leaving the block does: ``close()``, unless a subclass says."""
        self.close()

    def __enter__(self) -> Self:
        self._enter()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._leave()


class AsyncClosing:
    """``async with obj:`` enters by awaiting :meth:`_enter` and gives
    ``obj``; leaving awaits ``aclose()`` however the block ends."""

    aclose: Callable[[], Awaitable[None]]

    async def _enter(self) -> object:
        """What entering the block awaits first: nothing, unless a subclass says."""
        return None

    async def __aenter__(self) -> Self:
        await self._enter()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


__all__ = ["AsyncClosing", "Closing"]
