"""Running one turn of a stored conversation while showing it.

:func:`run_turn` is :meth:`Conversation.send` (which commits every block to
the log as it flushes) with an ``on_chunk`` observer that shows each stored
chunk: on the renderer (:func:`render_observer`) or as the ``--json`` event
stream (:func:`json_observer`).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping, Sequence

from elelem.cli.inspect import ndjson_line
from elelem.cli.tools import Toolset, show_call
from elelem.codec import to_builtins
from elelem.conversation import Conversation
from elelem.conversation.toolloop import run
from elelem.conversation.turn import ChunkObserver, TurnResult, send
from elelem.providers import Catalog
from elelem.render import Renderer
from elelem.stream import Chunk
from elelem.transport import Timeouts
from elelem.vocabulary import GenerationOptions, HostedTool, Message, Part

COMMAND_EVENTS: tuple[str, ...] = ("dropped", "turn")
"""The ``--json`` lines the command writes itself, beside the stream's chunks
(docs/cli.md documents each; a test keeps the two the same)."""


def run_turn(
    conversation: Conversation,
    model: str,
    text: str | Message | None,
    observe: ChunkObserver,
    *,
    system: str | None = None,
    hosted_tools: Sequence[HostedTool] = (),
    options: GenerationOptions | None = None,
    env: Mapping[str, str] | None = None,
    catalog: Catalog | None = None,
    toolset: Toolset | None = None,
    timeouts: Timeouts | None = None,
) -> TurnResult:
    """Send ``text`` in ``conversation`` to ``model``, showing each chunk to
    ``observe``.  Ctrl-C cancels the stream; the conversation keeps what
    arrived (marked incomplete) and ``KeyboardInterrupt`` is raised.  With an
    active ``toolset`` (``--functions``, ``--tool``, ``--mcp``) the turn is a
    tool loop, each call shown as a status line."""
    from elelem.client import Client

    async def go() -> TurnResult:
        async with Client(env=env, catalog=catalog, timeouts=timeouts) as client:
            if toolset is not None and toolset.active:
                return await run(
                    conversation,
                    client,
                    model,
                    text,
                    tools=toolset.all_tools(),
                    max_steps=toolset.max_steps,
                    approve=toolset.approver(),
                    on_call=show_call,
                    on_chunk=observe,
                    system=system,
                    hosted_tools=hosted_tools,
                    options=options,
                )
            return await send(
                conversation,
                client,
                model,
                text,
                on_chunk=observe,
                system=system,
                hosted_tools=hosted_tools,
                options=options,
            )

    return asyncio.run(go())


def render_observer(renderer: Renderer) -> ChunkObserver:
    """Show chunks on ``renderer``."""

    def observe(chunk: Chunk, _committed: tuple[Part, ...]) -> None:
        renderer.feed(chunk)

    return observe


def json_observer() -> ChunkObserver:
    """Write each chunk as one ASCII NDJSON line on stdout."""

    def observe(chunk: Chunk, _committed: tuple[Part, ...]) -> None:
        sys.stdout.write(ndjson_line(to_builtins(chunk)) + "\n")
        sys.stdout.flush()

    return observe


__all__ = ["COMMAND_EVENTS", "json_observer", "render_observer", "run_turn"]
