"""An MCP server's sampling requests served by a model the user names,
within usage limits: :func:`model_sampler` makes the ``sample`` callback of
:class:`elelem.tools.MCPServer` (see :mod:`elelem.tools.mcp_sampling`); and
every request a server makes recorded in the conversation log
(:func:`recording_requests`).

The limits count every request the sampler sent (tokens, requests, cost
where priced); a request that would go over one is refused before it is
sent, and the server is told which limit.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import replace

from elelem.client import Client
from elelem.conversation import Conversation, Draft, ServerRequest
from elelem.conversation.projections import add_usage
from elelem.providers import Target
from elelem.providers.protocol import Model
from elelem.tools.mcp import MCPServer
from elelem.tools.mcp_asks import ServerAsked
from elelem.tools.mcp_sampling import Sample, SampleAnswer, SamplingRefused, SamplingRequest
from elelem.turns.limits import UsageLimitExceeded, UsageLimits, Used, check_request
from elelem.vocabulary import GenerationOptions, Message, TextBlock, Usage


def model_sampler(
    client: Client, model: str | Target | Model, limits: UsageLimits | None = None
) -> Sample:
    """A ``sample`` callback that asks ``client``'s ``model`` (a
    ``provider:model`` name, a resolved target or a model object) and keeps
    within ``limits``."""
    target = client.target(model)
    used = Used(Usage(), None, 0, 0)

    async def sample(request: SamplingRequest) -> SampleAnswer:
        nonlocal used
        messages = [Message(role, (TextBlock(text),)) for role, text in request.messages]
        arguments = {"messages": messages, "system": request.system}
        if limits is not None:
            try:
                check_request(limits, used, arguments, str(target.provider), target.model)
            except UsageLimitExceeded as exc:
                raise SamplingRefused(f"refused by the usage limits: {exc}") from exc
        options = GenerationOptions(
            max_tokens=request.max_tokens,
            temperature=request.temperature,
            stop=request.stop,
        )
        stream = client.stream(target, messages, system=request.system, options=options)
        answer = await stream.final()
        used = replace(
            used,
            usage=add_usage(used.usage, answer.usage or Usage()),
            requests=used.requests + 1,
        )
        return SampleAnswer(
            answer.text,
            answer.model or target.model,
            provider=str(target.provider),
            usage=answer.usage,
        )

    return sample


@contextlib.contextmanager
def recording_requests(
    servers: Sequence[MCPServer], conversation: Conversation, loop: asyncio.AbstractEventLoop
) -> Iterator[None]:
    """While the block runs, each request one of ``servers`` makes of the
    client (answered on the server's own connection loop) is appended to
    ``conversation`` in its current turn as a ``server-request`` event, on
    ``loop`` (the one that appends the turn's other events, so the log's
    order is the order things happened)."""

    def record(note: ServerAsked) -> None:
        body = ServerRequest(
            note.server,
            note.method,
            note.outcome,
            dict(note.detail),
            note.provider,
            note.model,
            note.usage,
        )
        loop.call_soon_threadsafe(
            lambda: conversation.append(Draft.of(body, turn=conversation.turn))
        )

    for server in servers:
        server.on_request = record
    try:
        yield
    finally:
        for server in servers:
            server.on_request = None


__all__ = ["model_sampler", "recording_requests"]
