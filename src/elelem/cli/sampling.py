"""``--mcp-sampling-model MODEL``: an MCP server's sampling requests (a
server asking the client's model for a completion during a call) served by
the model the user names, during ``elelem ask`` and ``chat``.

The requests are served by :func:`elelem.turns.sampling.model_sampler` on
the turn's own client and event loop (the MCP connection's loop, in a
background thread, hands each over), so they share the turn's connections,
keys and timeouts; each served request is one status line on stderr
(``sampled MODEL for SERVER``).  With ``--approve``, each request is asked
first (``let SERVER ask MODEL: "…" (at most N tokens)? [y/N]``, the
server's text sanitized and cut), one question at a time with the tool
approvals; a refusal tells the server the user did not approve.  Outside a
turn a request is refused, saying so.  Without the option, sampling is not declared and a
server that asks anyway is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable, Iterator

import click

from elelem.cli.exits import EXIT_USAGE, Failure
from elelem.cli.safety import command_catalog
from elelem.cli.testmodel import is_test_model, test_model
from elelem.client import Client
from elelem.conversation import Conversation
from elelem.errors import ConfigError
from elelem.providers import Target
from elelem.providers.protocol import Model
from elelem.render import sanitize_line
from elelem.tools.mcp_sampling import Sample, SampleAnswer, SamplingRefused, SamplingRequest
from elelem.turns.limits import UsageLimits
from elelem.turns.sampling import model_sampler


def sampling_target(name: str) -> Target | Model:
    """The model ``--mcp-sampling-model`` names, resolved now (a bad name
    fails before any server starts): ``provider:model``, an alias, or
    ``test``."""
    if not name.strip():
        raise Failure("--mcp-sampling-model is empty: give provider:model or an alias", EXIT_USAGE)
    if is_test_model(name):
        return test_model()
    try:
        return command_catalog().target(name, os.environ)
    except ConfigError as exc:
        # Named: the run's own -m may be fine, and this is the other model.
        shown = sanitize_line(name)
        raise Failure(f"--mcp-sampling-model {shown}: {exc}", EXIT_USAGE) from None


class TurnSampler:
    """The ``sample`` callback of the CLI's MCP servers (see the module
    docs); :meth:`serving_on` binds it to a running turn."""

    def __init__(self, target: Target | Model) -> None:
        self.target = target
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sample: Sample | None = None
        self._approve: Callable[[str], Awaitable[bool]] | None = None

    @contextlib.contextmanager
    def serving_on(
        self,
        loop: asyncio.AbstractEventLoop,
        client: Client,
        approve: Callable[[str], Awaitable[bool]] | None = None,
        limits: UsageLimits | None = None,
        conversation: Conversation | None = None,
    ) -> Iterator[None]:
        """Serve on ``loop`` with ``client`` while the block runs, each
        request first put to ``approve`` (a y/N question) when given, within
        the turn's ``limits`` (counted with what ``conversation``'s turn
        used: :func:`~elelem.turns.sampling.model_sampler`)."""
        sample = model_sampler(client, self.target, limits, conversation=conversation)
        self._loop, self._sample = loop, sample
        self._approve = approve
        try:
            yield
        finally:
            self._loop, self._sample, self._approve = None, None, None

    async def __call__(self, request: SamplingRequest) -> SampleAnswer:
        loop, sample = self._loop, self._sample
        if loop is None or sample is None:
            raise SamplingRefused("no turn is running to serve it")
        if asyncio.get_running_loop() is loop:
            return await self._served(sample, request)
        # The connection's loop waits while the turn's loop asks the model.
        served = asyncio.run_coroutine_threadsafe(self._served(sample, request), loop)
        return await asyncio.wrap_future(served)

    async def _served(self, sample: Sample, request: SamplingRequest) -> SampleAnswer:
        if self._approve is not None and not await self._approve(self.question(request)):
            raise SamplingRefused("the user did not approve this sampling request")
        answer = await sample(request)
        line = f"sampled {answer.model} for {request.server}"
        click.echo(sanitize_line(line), err=True)
        return answer

    def question(self, request: SamplingRequest) -> str:
        """What ``--approve`` asks before serving ``request``."""
        last = request.messages[-1][1] if request.messages else ""
        said = sanitize_line(last)
        said = said if len(said) <= QUOTE else said[: QUOTE - 1] + "…"
        model = sanitize_line(getattr(self.target, "model", "") or "the model")
        server = sanitize_line(request.server)
        return f'let {server} ask {model}: "{said}" (at most {request.max_tokens} tokens)?'


QUOTE = 100
"""The most characters of a server's message an approval question quotes."""


__all__ = ["QUOTE", "TurnSampler", "sampling_target"]
