"""The client API: ``elelem.Client`` (async) and ``elelem.SyncClient``.

A model is addressed as ``provider:model`` (``anthropic:claude-sonnet-4-5``).
The client resolves the provider in the catalog (built-ins plus the user's
config file), imports its shape on first use, and hands the request to the
one transport driver.  Errors are the typed ones of :mod:`elelem.errors`.

Retries are visible: by default a request that fails before any chunk
arrived (a connect error, 408/409/429/5xx/529, a reset before the first
event) is sent again up to twice, after a backoff that honours
``retry-after``; each retry is a :class:`~elelem.stream.Retry` chunk on the
stream and in the response's ``retries``.  Nothing that began streaming is
retried.  ``max_retries=0`` turns it off.

Streaming::

    async with Client() as client:
        async with client.stream("anthropic:claude-sonnet-4-5", "Hi") as stream:
            async for text in stream.text():
                print(text, end="")
            response = await stream.final()

``stream.with_commits()`` yields every chunk with the blocks and hosted
transitions it committed; ``stream.reasoning()`` the reasoning text.

``SyncClient`` offers the same calls without ``await``; it runs the async
client on a private event-loop thread, so there is one implementation.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import anyio
import httpx2
import msgspec
from anyio.from_thread import BlockingPortal

from elelem.counting import COUNTERS, NOT_THERE, CountingShape, TokenCount, estimated
from elelem.errors import StreamError
from elelem.outputs import PartialJSON, output_format, parse_output
from elelem.providers import Catalog, Target, load_catalog
from elelem.shapes.base import ModelRequest, Shape
from elelem.stream import AssembledResponse, Chunk, ReasoningDelta, Retry, TextDelta
from elelem.transport import (
    CLIENT_RETRY_POLICY,
    Driver,
    Endpoint,
    RequestHook,
    ResponseStream,
    Timeouts,
)
from elelem.transport.retry import RetryPolicy
from elelem.vocabulary import (
    GenerationOptions,
    HostedTool,
    Message,
    Part,
    ProviderPayload,
    RemoteMCP,
    ToolSpec,
)

T = TypeVar("T")

Messages = Sequence[Message] | str
"""A conversation, or one user message's text."""


def _utc_now() -> datetime:
    return datetime.now(UTC)


class Client:
    """Async access to every provider in the catalog.

    ``catalog`` defaults to the built-ins plus the config file (``config`` or
    ``$ELELEM_CONFIG``); ``env`` (default ``os.environ``, read at each call)
    supplies keys and base-URL overrides; ``api_keys`` maps provider names to
    keys given in code.  ``timeouts`` apply to every call unless one passes
    its own.  ``http`` is an ``httpx2.AsyncClient`` to use instead of the
    client's own.  ``clock`` gives the current time each request is stamped
    with (:attr:`ModelRequest.now <elelem.shapes.base.ModelRequest>`, what
    replayed provider state is judged expired against); the system's UTC
    time by default.  ``max_retries`` (default 2; 0 turns retries off) and
    ``retry`` (the backoff, budget and ``retry-after`` limit, default
    :data:`~elelem.transport.CLIENT_RETRY_POLICY`) shape the visible retries
    of failures before any chunk arrived.  ``hooks`` are told of every
    response (:class:`~elelem.transport.RequestHook`; e.g.
    :class:`elelem.telemetry.GenAITracer`).  A client's connections belong to
    the event loop that first used it: make one client per ``asyncio.run``.
    """

    def __init__(
        self,
        *,
        catalog: Catalog | None = None,
        config: Path | None = None,
        env: Mapping[str, str] | None = None,
        api_keys: Mapping[str, str] | None = None,
        timeouts: Timeouts | None = None,
        http: httpx2.AsyncClient | None = None,
        clock: Callable[[], datetime] | None = None,
        max_retries: int | None = None,
        retry: RetryPolicy | None = None,
        hooks: Sequence[RequestHook] = (),
    ) -> None:
        policy = retry if retry is not None else CLIENT_RETRY_POLICY
        if max_retries is not None:
            if max_retries < 0:
                raise ValueError(f"max_retries must be 0 or more, not {max_retries}")
            policy = dataclasses.replace(policy, max_attempts=max_retries + 1)
        self.retry_policy = policy if policy.max_attempts > 1 else None
        """The retry policy in force (None: no retries)."""
        self._env = env
        self._clock = clock if clock is not None else _utc_now
        self.catalog = catalog if catalog is not None else load_catalog(config, env)
        self._api_keys = dict(api_keys or {})
        self._driver = Driver(
            http, timeouts=timeouts, clock=self._clock, retry=self.retry_policy, hooks=hooks
        )

    def __repr__(self) -> str:
        return f"Client(providers={self.catalog.names()!r}, keys_given={sorted(self._api_keys)!r})"

    @property
    def timeouts(self) -> Timeouts:
        """The default timeouts."""
        return self._driver.timeouts

    def target(self, model: str | Target) -> Target:
        """Resolve ``model`` (``provider:model``) once: provider, wire model
        name, shape and endpoint (with the key in force now).  Pass the
        result wherever a model address goes to skip resolving again.

        Raises :class:`~elelem.errors.ConfigError` for an unknown provider, a
        bad address or a missing key, and :class:`~elelem.errors.UnsupportedError`
        for a shape not built yet.
        """
        if isinstance(model, Target):
            return model
        env = os.environ if self._env is None else self._env
        return self.catalog.target(model, env, self._api_keys)

    def prepare(
        self,
        model: str | Target,
        messages: Messages,
        *,
        tools: Sequence[ToolSpec] = (),
        hosted_tools: Sequence[HostedTool] = (),
        options: GenerationOptions | None = None,
        system: str | None = None,
        response_payloads: Sequence[ProviderPayload] = (),
    ) -> tuple[Endpoint, Shape, ModelRequest]:
        """Resolve ``model`` (unless it is a :class:`~elelem.providers.Target`
        already) and build the neutral request (no I/O).

        ``response_payloads`` carries the response-level data of earlier
        responses (see :class:`~elelem.shapes.base.ModelRequest`): to continue
        from an :class:`~elelem.stream.AssembledResponse` ``r`` natively (an
        Anthropic code-execution container, a programmatic tool call's
        results), pass ``response_payloads=r.finish.payloads``.  The request
        is stamped with the current time, against which the shape judges
        what has expired.

        Raises :class:`~elelem.errors.ConfigError` for an unknown provider, a
        bad address or a missing key, and :class:`~elelem.errors.UnsupportedError`
        for a shape not built yet.
        """
        target = self.target(model)
        if isinstance(messages, str):
            messages = (Message.user(messages),)
        request = ModelRequest(
            model=target.model,
            messages=tuple(messages),
            system=system,
            tools=tuple(tools),
            hosted_tools=tuple(hosted_tools),
            options=options if options is not None else GenerationOptions(),
            response_payloads=tuple(response_payloads),
            now=self._clock(),
        )
        endpoint = target.endpoint
        tokens = tuple(
            t.authorization
            for t in request.hosted_tools
            if isinstance(t, RemoteMCP) and t.authorization
        )
        if tokens:
            # A hosted MCP server's token rides in the body: an error echoing
            # it is redacted like the API key.
            endpoint = dataclasses.replace(endpoint, secrets=(*endpoint.secrets, *tokens))
        return endpoint, target.shape, request

    def stream(
        self,
        model: str | Target,
        messages: Messages,
        *,
        tools: Sequence[ToolSpec] = (),
        hosted_tools: Sequence[HostedTool] = (),
        options: GenerationOptions | None = None,
        system: str | None = None,
        response_payloads: Sequence[ProviderPayload] = (),
        timeouts: Timeouts | None = None,
        output_type: Any = None,
    ) -> ResponseStream:
        """Stream a response: an async iterator of chunks (see
        :class:`~elelem.transport.ResponseStream` for ``text``,
        ``with_commits``, ``final``, ``partial``).  The request is sent on
        first iteration.

        ``output_type`` (a msgspec Struct, dataclass, TypedDict or pydantic
        model) asks for an answer of that type through the structured-output
        option; then ``stream.objects()`` gives the object as it arrives and
        ``await stream.output()`` the validated instance."""
        endpoint, shape, request = self.prepare(
            model,
            messages,
            tools=tools,
            hosted_tools=hosted_tools,
            options=_with_output(options, output_type),
            system=system,
            response_payloads=response_payloads,
        )
        stream = self._driver.stream(endpoint, shape, request, timeouts=timeouts)
        stream.output_type = output_type
        return stream

    async def complete(
        self,
        model: str | Target,
        messages: Messages,
        *,
        tools: Sequence[ToolSpec] = (),
        hosted_tools: Sequence[HostedTool] = (),
        options: GenerationOptions | None = None,
        system: str | None = None,
        response_payloads: Sequence[ProviderPayload] = (),
        timeouts: Timeouts | None = None,
    ) -> AssembledResponse:
        """A non-streamed response, mapped into the same assembled result."""
        endpoint, shape, request = self.prepare(
            model,
            messages,
            tools=tools,
            hosted_tools=hosted_tools,
            options=options,
            system=system,
            response_payloads=response_payloads,
        )
        return await self._driver.complete(endpoint, shape, request, timeouts=timeouts)

    async def count_tokens(
        self,
        model: str | Target,
        messages: Messages,
        *,
        timeouts: Timeouts | None = None,
        **request: Any,
    ) -> TokenCount:
        """The input tokens of this request, before sending it: counted by the
        provider's endpoint (Anthropic ``count_tokens``, OpenAI
        ``responses/input_tokens``, Gemini ``countTokens``), else — another
        wire, or a server without the endpoint — estimated locally
        (:mod:`elelem.tokens`).  ``TokenCount.source`` says which, and
        ``note`` why.  Errors of the endpoint are the typed ones a request
        raises (a bad key is not hidden behind an estimate).  ``request``:
        ``tools``, ``hosted_tools``, ``options``, ``system``, as for
        :meth:`stream`."""
        endpoint, shape, neutral = self.prepare(model, messages, **request)
        counter = COUNTERS.get(shape.name)
        if counter is None:
            return estimated(neutral, endpoint.provider, f"{shape.name} has no counting endpoint")
        try:
            result = await self._driver.complete(
                endpoint, CountingShape(shape, counter), neutral, timeouts=timeouts
            )
        except StreamError as exc:
            if exc.status not in NOT_THERE:
                raise
            why = f"{counter.endpoint} is not there (HTTP {exc.status})"
            return estimated(neutral, endpoint.provider, why)
        assert result.usage is not None  # CountingShape's one response always has it
        return TokenCount(result.usage.input, "provider", counter.endpoint, raw=result.usage.raw)

    async def parse(
        self, model: str | Target, messages: Messages, output_type: type[T], **kwargs: Any
    ) -> T:
        """A validated ``output_type`` instance: the answer to a request asking
        for that type (streamed and drained; ``kwargs`` as for :meth:`stream`).
        Raises :class:`~elelem.outputs.OutputError` (with the raw text) when
        the answer does not match."""
        stream = self.stream(model, messages, output_type=output_type, **kwargs)
        async with stream:
            return parse_output(output_type, (await stream.final()).text)

    async def aclose(self) -> None:
        """Close the client's HTTP connections."""
        await self._driver.aclose()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def _with_output(options: GenerationOptions | None, output_type: Any) -> GenerationOptions | None:
    """``options`` asking for ``output_type``'s schema (unchanged without one)."""
    if output_type is None:
        return options
    options = options if options is not None else GenerationOptions()
    if options.output is not None:
        raise ValueError("give output_type or options.output, not both")
    return msgspec.structs.replace(options, output=output_format(output_type))


class SyncResponseStream:
    """The blocking face of a :class:`~elelem.transport.ResponseStream`.

    Iterate it for chunks, :meth:`text` or :meth:`reasoning` for the text as
    it streams, or :meth:`with_commits` for ``(chunk, committed)`` pairs;
    :meth:`final`, :meth:`partial` and :meth:`close` as in the async stream.  Use it as a context manager so the connection closes.
    """

    def __init__(self, portal: BlockingPortal, stream: ResponseStream) -> None:
        self._portal = portal
        self.stream = stream
        """The underlying async stream (its attributes: status, request_id, …)."""

    def __iter__(self) -> Iterator[Chunk]:
        for chunk, _ in self.with_commits():
            yield chunk

    def text(self) -> Iterator[str]:
        """Iterate the text as it streams: each (non-empty) text delta's text, in order."""
        for chunk, _ in self.with_commits():
            if type(chunk) is TextDelta and chunk.text:
                yield chunk.text

    def reasoning(self) -> Iterator[str]:
        """Iterate the reasoning as it streams: each (non-empty) reasoning delta's text."""
        for chunk, _ in self.with_commits():
            if type(chunk) is ReasoningDelta and chunk.text:
                yield chunk.text

    def objects(self) -> Iterator[Any]:
        """The answer's JSON value as it arrives (see :meth:`ResponseStream.objects`)."""
        reader = PartialJSON()
        for chunk, _ in self.with_commits():
            if type(chunk) is TextDelta and reader.feed(chunk.text):
                yield reader.value

    def output(self) -> Any:
        """The validated ``output_type`` instance (see :meth:`ResponseStream.output`)."""
        result = self.final()
        return self.stream.parse(result)

    @property
    def retries(self) -> list[Retry]:
        """The retries made so far (see :attr:`ResponseStream.retries`)."""
        return self.stream.retries

    def with_commits(self) -> Iterator[tuple[Chunk, tuple[Part, ...]]]:
        """Iterate ``(chunk, committed)`` pairs."""
        while (pair := self.step()) is not None:
            yield pair

    def step(self) -> tuple[Chunk, tuple[Part, ...]] | None:
        """The next ``(chunk, committed)`` pair, or None at the end of the stream."""
        return self._call(self.stream.step)

    def _call(self, step: Callable[[], Awaitable[T]]) -> T:
        # Run on the loop thread; Ctrl-C here cancels the step there, which
        # closes the connection and leaves partial() usable.
        future = self._portal.start_task_soon(step)
        try:
            return future.result()
        except KeyboardInterrupt:
            future.cancel()
            self._portal.call(self.stream.aclose)
            raise

    @property
    def last_committed(self) -> tuple[Part, ...]:
        """What the latest chunk committed."""
        return self.stream.last_committed

    def final(self) -> AssembledResponse:
        """Drain the stream and return the assembled response."""
        return self._call(self.stream.final)

    def partial(self) -> AssembledResponse:
        """What arrived so far (see :meth:`ResponseStream.partial`)."""
        return self.stream.partial()

    def close(self) -> None:
        """Close the connection."""
        self._portal.call(self.stream.aclose)

    def __enter__(self) -> SyncResponseStream:
        self._portal.call(self.stream.start)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class _LoopThread:
    """An event loop on a daemon thread, reached through an anyio portal.

    Daemon, unlike ``anyio.from_thread.start_blocking_portal``'s worker: a
    program that forgets :meth:`SyncClient.close` still exits instead of
    waiting forever for a loop nobody stops.
    """

    def __init__(self) -> None:
        ready = threading.Event()
        box: list[BlockingPortal] = []
        failure: list[BaseException] = []

        async def serve() -> None:
            async with BlockingPortal() as portal:
                box.append(portal)
                ready.set()
                await portal.sleep_until_stopped()

        def run() -> None:
            try:
                anyio.run(serve)
            except BaseException as exc:
                failure.append(exc)  # re-raised in the starting thread below
                raise
            finally:
                ready.set()

        self.thread = threading.Thread(target=run, name="elelem-sync-client", daemon=True)
        self.thread.start()
        ready.wait()
        if not box:
            raise RuntimeError("the SyncClient event loop did not start") from (
                failure[0] if failure else None
            )
        self.portal = box[0]

    def stop(self) -> None:
        """Stop the loop and wait for its thread."""
        self.portal.call(self.portal.stop)
        self.thread.join(timeout=5)


class SyncClient:
    """Blocking access to every provider: the async :class:`Client` run on a
    private event-loop thread (started on first use, stopped by :meth:`close`).

    Takes the same arguments as :class:`Client`.
    """

    def __init__(self, **kwargs: Any) -> None:
        self._client = Client(**kwargs)
        self._thread: _LoopThread | None = None

    def __repr__(self) -> str:
        return f"Sync{self._client!r}"

    @property
    def client(self) -> Client:
        """The async client underneath."""
        return self._client

    def _loop(self) -> BlockingPortal:
        if self._thread is None:
            self._thread = _LoopThread()
        return self._thread.portal

    def target(self, model: str | Target) -> Target:
        """As :meth:`Client.target`."""
        return self._client.target(model)

    def stream(self, model: str | Target, messages: Messages, **kwargs: Any) -> SyncResponseStream:
        """As :meth:`Client.stream`, blocking."""
        stream = self._client.stream(model, messages, **kwargs)
        return SyncResponseStream(self._loop(), stream)

    def count_tokens(self, model: str | Target, messages: Messages, **kwargs: Any) -> TokenCount:
        """As :meth:`Client.count_tokens`, blocking."""
        portal = self._loop()

        async def call() -> TokenCount:
            return await self._client.count_tokens(model, messages, **kwargs)

        return portal.call(call)

    def parse(
        self, model: str | Target, messages: Messages, output_type: type[T], **kwargs: Any
    ) -> T:
        """As :meth:`Client.parse`, blocking."""
        portal = self._loop()

        async def call() -> T:
            return await self._client.parse(model, messages, output_type, **kwargs)

        return portal.call(call)

    def complete(self, model: str | Target, messages: Messages, **kwargs: Any) -> AssembledResponse:
        """As :meth:`Client.complete`, blocking."""
        portal = self._loop()

        async def call() -> AssembledResponse:
            return await self._client.complete(model, messages, **kwargs)

        return portal.call(call)

    def close(self) -> None:
        """Close connections and stop the event-loop thread."""
        thread, self._thread = self._thread, None
        if thread is not None:
            try:
                thread.portal.call(self._client.aclose)
            finally:
                thread.stop()

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


__all__ = ["Client", "Messages", "SyncClient", "SyncResponseStream"]
