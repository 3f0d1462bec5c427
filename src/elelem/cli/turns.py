"""Running one turn of a stored conversation while watching its stream.

:func:`run_turn` is :meth:`Conversation.send` (which commits every block to
the log as it flushes) with an observer that sees each chunk as it arrives,
for the renderer or the ``--json`` event stream.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from types import TracebackType
from typing import Any

from elelem.cli.inspect import ndjson_line
from elelem.codec import to_builtins
from elelem.conversation import Conversation
from elelem.conversation.turn import TurnResult
from elelem.providers import Catalog
from elelem.render import Renderer
from elelem.stream import Chunk
from elelem.transport import ResponseStream
from elelem.vocabulary import GenerationOptions, HostedTool, Part

Observer = Callable[[Chunk, tuple[Part, ...]], None]
"""Sees each chunk of a turn's streams with what it committed."""


class ObservedStream:
    """A response stream that shows each ``(chunk, committed)`` pair to an
    observer on its way to the caller; everything else is the stream's own."""

    def __init__(self, inner: ResponseStream, observe: Observer) -> None:
        self._inner = inner
        self._observe = observe

    async def __aenter__(self) -> ObservedStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._inner.__aexit__(exc_type, exc, tb)

    async def with_commits(self) -> AsyncIterator[tuple[Chunk, tuple[Part, ...]]]:
        """The inner stream's pairs, each shown to the observer first."""
        async for chunk, committed in self._inner.with_commits():
            self._observe(chunk, committed)
            yield chunk, committed

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class ObservingClient:
    """An :class:`elelem.Client` whose streams are :class:`ObservedStream`\\ s."""

    def __init__(self, client: Any, observe: Observer) -> None:
        self._client = client
        self._observe = observe

    @property
    def catalog(self) -> Catalog:
        """The wrapped client's catalog."""
        catalog: Catalog = self._client.catalog
        return catalog

    def stream(self, model: str, messages: Any, **kwargs: Any) -> ObservedStream:
        """The wrapped client's stream, observed."""
        return ObservedStream(self._client.stream(model, messages, **kwargs), self._observe)


def run_turn(
    conversation: Conversation,
    model: str,
    text: str | None,
    observe: Observer,
    *,
    system: str | None = None,
    hosted_tools: Sequence[HostedTool] = (),
    options: GenerationOptions | None = None,
    env: Mapping[str, str] | None = None,
    catalog: Catalog | None = None,
) -> TurnResult:
    """Send ``text`` in ``conversation`` to ``model``, showing each chunk to
    ``observe``.  Ctrl-C cancels the stream; the conversation keeps what
    arrived (marked incomplete) and ``KeyboardInterrupt`` is raised."""
    from elelem.client import Client

    async def go() -> TurnResult:
        async with Client(env=env, catalog=catalog) as client:
            return await conversation.send(
                ObservingClient(client, observe),
                model,
                text,
                system=system,
                hosted_tools=hosted_tools,
                options=options,
            )

    return asyncio.run(go())


def render_observer(renderer: Renderer) -> Observer:
    """Show chunks on ``renderer``."""

    def observe(chunk: Chunk, _committed: tuple[Part, ...]) -> None:
        renderer.feed(chunk)

    return observe


def json_observer() -> Observer:
    """Write each chunk as one ASCII NDJSON line on stdout."""

    def observe(chunk: Chunk, _committed: tuple[Part, ...]) -> None:
        sys.stdout.write(ndjson_line(to_builtins(chunk)) + "\n")
        sys.stdout.flush()

    return observe


__all__ = [
    "ObservedStream",
    "Observer",
    "ObservingClient",
    "json_observer",
    "render_observer",
    "run_turn",
]
