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

``SyncClient`` offers the same calls without ``await``, read in the calling
thread with a blocking ``httpx2.Client``: the driver's blocking shell over
the same core (:mod:`elelem.transport.stream_core`), so there is one
implementation.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict, TypeVar, Unpack, overload

import httpx2
import msgspec

from elelem.client.beyond_chat import AsyncExtras, awaited, blocked, sync_faced
from elelem.client.counting import Counting, CountPlan, TokenCount, counter_of, counting, estimated
from elelem.client.preflight import ModelWarning, preflight
from elelem.outputs import output_format, parse_output
from elelem.providers import Catalog, Target, load_catalog
from elelem.providers.protocol import Model
from elelem.stream import AssembledResponse
from elelem.transport import (
    CLIENT_RETRY_POLICY,
    Driver,
    Endpoint,
    Limits,
    RequestHook,
    ResponseStream,
    SyncResponseStream,
    Timeouts,
)
from elelem.transport.closing import AsyncClosing, Closing
from elelem.transport.retry import RetryPolicy
from elelem.vocabulary import (
    GenerationOptions,
    HostedTool,
    Message,
    ProviderPayload,
    RemoteMCP,
    ToolSpec,
)
from elelem.wire import ModelRequest, Shape

T = TypeVar("T")

Messages = Sequence[Message] | str
"""A conversation, or one user message's text."""


def _utc_now() -> datetime:
    return datetime.now(UTC)


class RequestOptions(TypedDict, total=False):
    """What a request holds beside its model and messages: the keyword
    arguments of :meth:`Client.prepare`, :meth:`~Client.stream`,
    :meth:`~Client.complete`, :meth:`~Client.count_tokens` and their
    :class:`SyncClient` twins (one list, checked by type checkers through
    ``Unpack``)."""

    tools: Sequence[ToolSpec]
    """Client tools the model may call."""
    hosted_tools: Sequence[HostedTool]
    """Tools the provider runs on its own servers."""
    options: GenerationOptions | None
    """Sampling, reasoning effort, caching, structured output."""
    system: str | None
    """The system prompt."""
    response_payloads: Sequence[ProviderPayload]
    """Response-level data of earlier responses (see :meth:`Client.prepare`)."""


class StreamOptions(RequestOptions, total=False):
    """:class:`RequestOptions` and the transport's ``timeouts``: the keyword
    arguments of :meth:`Client.parse` (passed on to :meth:`Client.stream`)."""

    timeouts: Timeouts | None
    """This request's timeouts, in place of the client's."""


class Client(AsyncExtras, AsyncClosing):
    """Async access to every provider in the catalog.

    ``catalog`` defaults to the built-ins plus the config file (``config`` or
    ``$ELELEM_CONFIG``); ``env`` (default ``os.environ``, read at each call)
    supplies keys and base-URL overrides; ``api_keys`` maps provider names to
    keys given in code.  ``timeouts`` apply to every call unless one passes
    its own.  ``limits`` (:class:`~elelem.transport.limits.Limits`) bound
    what a response may cost and size the connection pool: by default up to
    1,000 connections open at once, all kept alive for reuse for 30 s, and
    a request that finds every one busy waits up to ``Timeouts.pool``
    (600 s) before a :class:`~elelem.errors.PoolTimeoutError`.  ``http`` is
    an ``httpx2.AsyncClient`` to use instead of the client's own (an
    ``httpx2.Client`` serves :class:`SyncClient`); its pool is then its own.
    ``clock`` gives the current time each request is stamped with
    (:attr:`ModelRequest.now <elelem.wire.ModelRequest>`, what
    replayed provider state is judged expired against); the system's UTC
    time by default.  ``max_retries`` (default 2; 0 turns retries off) and
    ``retry`` (the backoff, budget and ``retry-after`` limit, default
    :data:`~elelem.transport.CLIENT_RETRY_POLICY`) shape the visible retries
    of failures before any chunk arrived.  ``hooks`` are told of every
    response (:class:`~elelem.transport.RequestHook`; e.g.
    :class:`elelem.telemetry.GenAITracer`).  A client's connections belong to
    the event loop that first used it: make one client per ``asyncio.run``.
    ``credentials`` maps cloud provider names to credential objects used
    instead of those the environment names: a ``google.auth`` credentials
    object for ``vertex`` and ``vertex-anthropic``, an Azure
    ``TokenCredential`` for ``azure``, ``azure-chat`` and ``azure-anthropic``
    (their tokens are refreshed before they expire, off the event loop).
    """

    def __init__(
        self,
        *,
        catalog: Catalog | None = None,
        config: Path | None = None,
        env: Mapping[str, str] | None = None,
        api_keys: Mapping[str, str] | None = None,
        timeouts: Timeouts | None = None,
        limits: Limits | None = None,
        http: httpx2.AsyncClient | httpx2.Client | None = None,
        clock: Callable[[], datetime] | None = None,
        max_retries: int | None = None,
        retry: RetryPolicy | None = None,
        hooks: Sequence[RequestHook] = (),
        credentials: Mapping[str, Any] | None = None,
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
        self.catalog.credentials.update(credentials or {})
        self._api_keys = dict(api_keys or {})
        self._driver = Driver(
            http,
            timeouts=timeouts,
            limits=limits,
            clock=self._clock,
            retry=self.retry_policy,
            hooks=hooks,
        )

    def __repr__(self) -> str:
        return f"Client(providers={self.catalog.names()!r}, keys_given={sorted(self._api_keys)!r})"

    @property
    def timeouts(self) -> Timeouts:
        """The default timeouts."""
        return self._driver.timeouts

    @overload
    def target(self, model: str | Target) -> Target: ...

    @overload
    def target(self, model: Model) -> Model: ...

    @overload
    def target(self, model: str | Target | Model) -> Target | Model: ...

    def target(self, model: str | Target | Model) -> Target | Model:
        """Resolve ``model`` (``provider:model``) once: provider, wire model
        name, shape and endpoint (with the key in force now).  Pass the
        result wherever a model address goes to skip resolving again.  A
        :class:`~elelem.providers.protocol.Model` (a test model, a
        :class:`~elelem.Fallback`) is returned as it is.

        Raises :class:`~elelem.errors.ConfigError` for an unknown provider, a
        bad address or a missing key, and :class:`~elelem.errors.UnsupportedError`
        for a shape not built yet.
        """
        if isinstance(model, Target) or not isinstance(model, str):
            return model
        env = os.environ if self._env is None else self._env
        return self.catalog.target(model, env, self._api_keys)

    def request(
        self, model: str | Target | Model, messages: Messages, **request: Unpack[RequestOptions]
    ) -> tuple[Target | Model, ModelRequest]:
        """Resolve ``model`` and build the neutral request to it (no I/O),
        stamped with the current time (see :meth:`prepare`)."""
        target = self.target(model)
        if isinstance(messages, str):
            messages = (Message.user(messages),)
        options = request.get("options")
        neutral = ModelRequest(
            model=target.model,
            messages=tuple(messages),
            system=request.get("system"),
            tools=tuple(request.get("tools", ())),
            hosted_tools=tuple(request.get("hosted_tools", ())),
            options=options if options is not None else GenerationOptions(),
            response_payloads=tuple(request.get("response_payloads", ())),
            now=self._clock(),
        )
        return target, neutral

    def open(
        self,
        target: Target | Model,
        request: ModelRequest,
        *,
        timeouts: Timeouts | None = None,
        sync: bool = False,
        streamed: bool = True,
    ) -> Any:
        """The stream of the neutral ``request`` to ``target`` (its model name
        the target's own): a :class:`~elelem.transport.ResponseStream`, or
        with ``sync`` a :class:`~elelem.transport.SyncResponseStream` (a
        :class:`~elelem.providers.protocol.Model` gives its own streams).
        What a :class:`~elelem.providers.protocol.Model` calls to reach the
        targets it stands for.  ``streamed`` False sends a catalog target's
        request non-streamed, and is handed on to a Model, which hands it on
        to the targets it opens."""
        if request.model != target.model:
            request = msgspec.structs.replace(request, model=target.model)
        if not isinstance(target, Target):
            return target.open(self, request, timeouts=timeouts, sync=sync, streamed=streamed)
        endpoint = _with_secrets(target.endpoint, request)
        if sync:
            return self._driver.sync_stream(
                endpoint, target.shape, request, timeouts=timeouts, streamed=streamed
            )
        return self._driver.stream(
            endpoint, target.shape, request, timeouts=timeouts, streamed=streamed
        )

    def prepare(
        self, model: str | Target, messages: Messages, **request: Unpack[RequestOptions]
    ) -> tuple[Endpoint, Shape, ModelRequest]:
        """Resolve ``model`` (unless it is a :class:`~elelem.providers.Target`
        already) and build the neutral request (no I/O).

        ``response_payloads`` carries the response-level data of earlier
        responses (see :class:`~elelem.wire.ModelRequest`): to continue
        from an :class:`~elelem.stream.AssembledResponse` ``r`` natively (an
        Anthropic code-execution container, a programmatic tool call's
        results), pass ``response_payloads=r.finish.payloads``.  The request
        is stamped with the current time, against which the shape judges
        what has expired.

        Raises :class:`~elelem.errors.ConfigError` for an unknown provider, a
        bad address or a missing key, and :class:`~elelem.errors.UnsupportedError`
        for a shape not built yet.
        """
        target, neutral = self.request(model, messages, **request)
        if not isinstance(target, Target):
            raise TypeError(f"{target.address} is no catalog target: it has no endpoint or shape")
        endpoint = _with_secrets(target.endpoint, neutral)
        return endpoint, target.shape, neutral

    def stream(
        self,
        model: str | Target | Model,
        messages: Messages,
        *,
        timeouts: Timeouts | None = None,
        output_type: Any = None,
        streamed: bool = True,
        **request: Unpack[RequestOptions],
    ) -> ResponseStream:
        """Stream a response: an async iterator of chunks (see
        :class:`~elelem.transport.ResponseStream` for ``text``,
        ``with_commits``, ``final``, ``partial``).  The request is sent on
        first iteration.

        ``output_type`` (a msgspec Struct, dataclass, TypedDict or pydantic
        model) asks for an answer of that type through the structured-output
        option; then ``stream.objects()`` gives the object as it arrives and
        ``await stream.output()`` the validated instance.

        ``streamed=False`` sends the request non-streamed (the whole answer
        in one JSON body, as :meth:`complete`) behind the same stream: its
        chunks arrive at once, when the body has."""
        request["options"] = _with_output(request.get("options"), output_type)
        target, neutral = self.request(model, messages, **request)
        stream: ResponseStream = self.open(target, neutral, timeouts=timeouts, streamed=streamed)
        stream.output_type = output_type
        return stream

    async def complete(
        self,
        model: str | Target | Model,
        messages: Messages,
        *,
        timeouts: Timeouts | None = None,
        **request: Unpack[RequestOptions],
    ) -> AssembledResponse:
        """A non-streamed response, mapped into the same assembled result (a
        :class:`~elelem.providers.protocol.Model`'s stream, drained; the
        targets it opens are asked non-streamed too)."""
        target, neutral = self.request(model, messages, **request)
        if not isinstance(target, Target):
            async with self.open(target, neutral, timeouts=timeouts, streamed=False) as stream:
                result: AssembledResponse = await stream.final()
                return result
        endpoint = _with_secrets(target.endpoint, neutral)
        return await self._driver.complete(endpoint, target.shape, neutral, timeouts=timeouts)

    def check(
        self, model: str | Target, messages: Messages, **request: Any
    ) -> tuple[ModelWarning, ...]:
        """What the model catalog expects this request to hit, before it is
        sent (no I/O): an unknown model id close to a known one, a
        deprecated model, an estimate over the context window, an
        attachment of a kind the model does not take, tools or a schema it
        cannot follow (see :mod:`elelem.client.preflight`).  ``request``: as for
        :meth:`stream`."""
        target = self.target(model)
        _, _, neutral = self.prepare(target, messages, **request)
        return preflight(target.spec.name, target.model, neutral)

    def _count_tokens(
        self,
        model: str | Target | Model,
        messages: Messages,
        *,
        timeouts: Timeouts | None = None,
        **request: Unpack[RequestOptions],
    ) -> Counting:
        """The input tokens of this request, before sending it: counted by the
        provider's endpoint (Anthropic ``count_tokens``, OpenAI
        ``responses/input_tokens``, Gemini ``countTokens``), else — another
        wire, or a server without the endpoint — estimated locally
        (:mod:`elelem.tokens`).  ``TokenCount.source`` says which, and
        ``note`` why.  Errors of the endpoint are the typed ones a request
        raises (a bad key is not hidden behind an estimate).  ``request``:
        ``tools``, ``hosted_tools``, ``options``, ``system``, as for
        :meth:`stream`."""
        return Counting(self._counting(model, messages, request), timeouts)

    count_tokens = awaited(_count_tokens)

    def _counting(
        self, model: str | Target | Model, messages: Messages, request: RequestOptions
    ) -> CountPlan | TokenCount:
        """The counting request of :meth:`count_tokens`, or the estimate
        when the shape has no counting endpoint (or the model is no catalog
        target)."""
        target, neutral = self.request(model, messages, **request)
        if not isinstance(target, Target):
            return estimated(neutral, target.provider, f"{target.address} has no counting endpoint")
        endpoint, shape = _with_secrets(target.endpoint, neutral), target.shape
        counter = counter_of(shape)
        if counter is None:
            return estimated(neutral, endpoint.provider, f"{shape.name} has no counting endpoint")
        return endpoint, counter, neutral, counting(shape, counter, neutral, endpoint.provider)

    async def parse(
        self,
        model: str | Target,
        messages: Messages,
        output_type: type[T],
        **kwargs: Unpack[StreamOptions],
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


def _with_secrets(endpoint: Endpoint, request: ModelRequest) -> Endpoint:
    """``endpoint`` knowing the secrets ``request``'s body carries."""
    tokens = tuple(
        t.authorization
        for t in request.hosted_tools
        if isinstance(t, RemoteMCP) and t.authorization
    )
    if tokens:
        # A hosted MCP server's token rides in the body: an error echoing
        # it is redacted like the API key.
        endpoint = dataclasses.replace(endpoint, secrets=(*endpoint.secrets, *tokens))
    return endpoint


def _with_output(options: GenerationOptions | None, output_type: Any) -> GenerationOptions | None:
    """``options`` asking for ``output_type``'s schema (unchanged without one)."""
    if output_type is None:
        return options
    options = options if options is not None else GenerationOptions()
    if options.output is not None:
        raise ValueError("give output_type or options.output, not both")
    return msgspec.structs.replace(options, output=output_format(output_type))


class SyncClient(Closing):
    """Blocking access to every provider: the same calls as :class:`Client`,
    read in the calling thread with a blocking ``httpx2.Client`` (the
    driver's blocking shell over the one core; no event loop, no thread).

    Takes the same arguments as :class:`Client`, except that ``http`` is an
    ``httpx2.Client``.  A stream's chunks are read as it is iterated; Ctrl-C
    closes its connection and leaves its ``partial()`` usable.
    """

    _client: Client

    def __init__(self, *, http: httpx2.Client | None = None, **kwargs: Any) -> None:
        self._client = Client(http=http, **kwargs)
        self._driver = self._client._driver

    @property
    def _plans(self) -> AsyncExtras:
        return self._client

    # Beyond a chat response: the async client's plans, run blocking (the
    # requests of an embedding run one after another).
    embed = blocked(AsyncExtras._embed)
    batch = blocked(AsyncExtras._batch)
    batch_status = blocked(AsyncExtras._batch_status)
    batch_results = blocked(AsyncExtras._batch_results)
    speak = blocked(AsyncExtras._speak)
    transcribe = blocked(AsyncExtras._transcribe)
    speak_stream = sync_faced(AsyncExtras._speak_stream)
    transcribe_stream = sync_faced(AsyncExtras._transcribe_stream)
    count_tokens = blocked(Client._count_tokens)

    def __repr__(self) -> str:
        return f"Sync{self._client!r}"

    @property
    def client(self) -> Client:
        """The async client with the same catalog, keys and settings."""
        return self._client

    @overload
    def target(self, model: str | Target) -> Target: ...

    @overload
    def target(self, model: Model) -> Model: ...

    @overload
    def target(self, model: str | Target | Model) -> Target | Model: ...

    def target(self, model: str | Target | Model) -> Target | Model:
        """As :meth:`Client.target`."""
        return self._client.target(model)

    def prepare(
        self, model: str | Target, messages: Messages, **request: Unpack[RequestOptions]
    ) -> tuple[Endpoint, Shape, ModelRequest]:
        """As :meth:`Client.prepare`."""
        return self._client.prepare(model, messages, **request)

    def stream(
        self,
        model: str | Target | Model,
        messages: Messages,
        *,
        timeouts: Timeouts | None = None,
        output_type: Any = None,
        streamed: bool = True,
        **request: Unpack[RequestOptions],
    ) -> SyncResponseStream:
        """As :meth:`Client.stream`, blocking: a
        :class:`~elelem.transport.SyncResponseStream`, read as it is iterated."""
        request["options"] = _with_output(request.get("options"), output_type)
        client = self._client
        target, neutral = client.request(model, messages, **request)
        stream: SyncResponseStream = client.open(
            target, neutral, timeouts=timeouts, sync=True, streamed=streamed
        )
        stream.output_type = output_type
        return stream

    def check(
        self, model: str | Target, messages: Messages, **request: Any
    ) -> tuple[ModelWarning, ...]:
        """As :meth:`Client.check`."""
        return self._client.check(model, messages, **request)

    def parse(
        self,
        model: str | Target,
        messages: Messages,
        output_type: type[T],
        **kwargs: Unpack[StreamOptions],
    ) -> T:
        """As :meth:`Client.parse`, blocking."""
        with self.stream(model, messages, output_type=output_type, **kwargs) as stream:
            return parse_output(output_type, stream.final().text)

    def complete(
        self,
        model: str | Target | Model,
        messages: Messages,
        *,
        timeouts: Timeouts | None = None,
        **request: Unpack[RequestOptions],
    ) -> AssembledResponse:
        """As :meth:`Client.complete`, blocking."""
        client = self._client
        target, neutral = client.request(model, messages, **request)
        if not isinstance(target, Target):
            with client.open(
                target, neutral, timeouts=timeouts, sync=True, streamed=False
            ) as stream:
                result: AssembledResponse = stream.final()
                return result
        endpoint = _with_secrets(target.endpoint, neutral)
        return self._driver.sync_complete(endpoint, target.shape, neutral, timeouts=timeouts)

    def close(self) -> None:
        """Close the client's HTTP connections."""
        self._driver.close()


__all__ = [
    "Client",
    "Messages",
    "RequestOptions",
    "StreamOptions",
    "SyncClient",
    "SyncResponseStream",
]
