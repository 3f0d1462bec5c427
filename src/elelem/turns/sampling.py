"""An MCP server's sampling requests served by a model the user names,
within usage limits: :func:`model_sampler` makes the ``sample`` callback of
:class:`elelem.tools.MCPServer` (see :mod:`elelem.tools.mcp_sampling`); and
every request a server makes recorded in the conversation log
(:func:`recording_requests`).

The limits count every request the sampler sent (tokens, requests, cost
where priced), or, given the run's conversation, what the run going on
used with them (a resumed run: what it did since it was resumed); a request that would go over one is refused before it is sent,
an answer that went over one is withheld, and the server is told which
limit.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from elelem.client import Client
from elelem.conversation import Conversation, Draft, ResponseRecord, ServerRequest
from elelem.providers import Target
from elelem.providers.protocol import Model
from elelem.tools.mcp_asks import ServerAsked
from elelem.tools.mcp_sampling import Sample, SampleAnswer, SamplingRefused, SamplingRequest
from elelem.turns.engine import run_events
from elelem.turns.limits import UsageLimitExceeded, UsageLimits, Used, check_request, used_by
from elelem.vocabulary import GenerationOptions, Message, TextBlock, Usage

if TYPE_CHECKING:  # only named: a turn with no MCP server does not import the client
    from elelem.tools.mcp import MCPServer


def model_sampler(
    client: Client,
    model: str | Target | Model,
    limits: UsageLimits | None = None,
    *,
    conversation: Conversation | None = None,
) -> Sample:
    """A ``sample`` callback that asks ``client``'s ``model`` (a
    ``provider:model`` name, a resolved target or a model object) and keeps
    within ``limits``.

    Without ``conversation`` the limits are the sampler's own: they count
    the requests it sent.  With it, they are the run's (give the same
    :class:`UsageLimits` to the run): each request counts what the run
    going on in the conversation used so far (its responses and the
    sampling recorded by :func:`recording_requests`; a resumed run's only,
    from its decision on, as the run's own checks count:
    :func:`~elelem.turns.engine.run_events`).  Either way a request that would go over a limit is
    refused before it is sent, and an answer that went over one (an output
    limit is known only then) is withheld: the server is refused, naming
    the limit, and the record keeps what the request used, so the run's own
    check after the tool step ends it with :class:`UsageLimitExceeded`."""
    target = client.target(model)
    provider = str(target.provider)
    mine: list[ServerRequest] = []  # what it served, for limits of its own

    def used(answered: SampleAnswer | None = None) -> Used:
        """What the limits count, with ``answered`` (not yet recorded)."""
        assert limits is not None
        served = list(mine)
        records: list[ResponseRecord] = []
        if conversation is not None:
            # The run's own count (TurnEngine.check): a resumed run's, not the turn's.
            events = [e.body for e in run_events(conversation, conversation.turn)]
            records = [b for b in events if isinstance(b, ResponseRecord)]
            served = [b for b in events if isinstance(b, ServerRequest)]
        if answered is not None:
            served.append(served_record(answered))
        return used_by(records, 0, limits, served=served)

    async def sample(request: SamplingRequest) -> SampleAnswer:
        messages = [Message(role, (TextBlock(text),)) for role, text in request.messages]
        arguments = {"messages": messages, "system": request.system}
        if limits is not None:
            try:
                check_request(limits, used(), arguments, provider, target.model)
            except UsageLimitExceeded as exc:
                raise SamplingRefused(f"refused by the usage limits: {exc}") from exc
        options = GenerationOptions(
            max_tokens=request.max_tokens,
            temperature=request.temperature,
            stop=request.stop,
        )
        stream = client.stream(target, messages, system=request.system, options=options)
        final = await stream.final()
        answer = SampleAnswer(
            final.text, final.model or target.model, provider=provider, usage=final.usage
        )
        if limits is not None:
            spent = used(answer)
            if conversation is None:
                mine.append(served_record(answer))
            try:
                limits.after_response(spent)
            except UsageLimitExceeded as exc:
                raise SamplingRefused(f"refused by the usage limits: {exc}", answer) from exc
        return answer

    return sample


def served_record(answer: SampleAnswer) -> ServerRequest:
    """What the usage limits count of a served sampling request."""
    usage = answer.usage or Usage()
    return ServerRequest("", SAMPLING, "served", {}, answer.provider, answer.model, usage)


SAMPLING = "sampling/createMessage"


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
