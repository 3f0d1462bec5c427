"""What a client does beyond a chat response: embeddings, batches, speech.

Each call is written once, as a *plan* (no I/O) on :class:`AsyncExtras`,
the part of :class:`elelem.Client` that plans: its signature and docstring
are the call's.  A plan runs itself over the client's one driver, async or
blocking (:class:`OneShot`: an exchange of one-shot calls,
:mod:`elelem.transport.one_shot`; :class:`EmbedRun`: the requests of an
embedding run; :class:`Streamed`: a streamed answer read through the one
async or blocking face, :mod:`elelem.transport.faces`), and the clients'
methods are made from the plans: :func:`awaited` and :func:`faced` for
:class:`elelem.Client`, :func:`blocked` and :func:`sync_faced` for
:class:`elelem.SyncClient`.  So the two clients' calls cannot drift apart:
there is one list of them, one signature each.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Concatenate, Generic, NamedTuple, ParamSpec, Protocol, TypeVar

import anyio

from elelem.batches import BatchRecord, BatchRequest, BatchResult
from elelem.batches import wire_of as batch_wire
from elelem.batches.core import encode as encode_batch
from elelem.batches.core import neutral_requests, read_results
from elelem.embeddings import EMBEDDING_PROVIDERS, Embeddings, EmbedPlan
from elelem.embeddings import plan as embed_plan
from elelem.providers import Catalog, Target
from elelem.speech.endpoints import Transcript, audio_of
from elelem.speech.endpoints import speak as speak_flow
from elelem.speech.endpoints import transcribe as transcribe_flow
from elelem.speech.streamed_speech import Pieces, Speech, SpeechCall, SpeechReader
from elelem.speech.streamed_transcription import TranscriptionCall, TranscriptReader
from elelem.transport import Driver, Endpoint, Timeouts
from elelem.transport.config import (
    BATCH,
    BATCH_RESULTS,
    BATCH_STATUS,
    EMBEDDINGS,
    SPEAK,
    TRANSCRIBE,
)
from elelem.transport.faces import AsyncFace, SyncFace, awaiting, blocking
from elelem.transport.one_shot import Exchange, exchanged
from elelem.vocabulary import AudioBlock
from elelem.wire import ModelRequest, Shape
from elelem.wire.speech import SpeechRequest

EMBED_CONCURRENCY = 4
"""How many embedding requests one :meth:`elelem.Client.embed` has in flight."""

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
I = TypeVar("I")  # noqa: E741 - the piece a streamed answer yields
W = TypeVar("W")
P = ParamSpec("P")
X = TypeVar("X")
R = TypeVar("R")


class OneShot(NamedTuple, Generic[T]):
    """One planned exchange of one-shot calls: to ``target``, the ``flow``
    whose value is the answer, told to the hooks as ``operation``."""

    target: Target
    flow: Exchange[T]
    operation: str
    timeouts: Timeouts | None = None

    async def arun(self, driver: Driver) -> T:
        """The answer, async."""
        return await awaiting(exchanged(*self._over(driver), operation=self.operation))

    def run(self, driver: Driver) -> T:
        """The answer, blocking."""
        return blocking(exchanged(*self._over(driver), operation=self.operation))

    def _over(self, driver: Driver) -> tuple[Driver, Endpoint, Exchange[T], str, Timeouts | None]:
        target = self.target
        return driver, target.endpoint, self.flow, target.model, self.timeouts


@dataclass(frozen=True)
class EmbedRun:
    """A planned embedding run: its requests, ``concurrency`` at a time
    async (blocking, one after another)."""

    plan: EmbedPlan
    timeouts: Timeouts | None
    concurrency: int

    async def arun(self, driver: Driver) -> Embeddings:
        """The vectors, async: the first error raised as the typed error it is."""
        run, timeouts = self.plan, self.timeouts
        streams: list[Any] = [None] * len(run.calls)
        failures: list[Exception] = []
        pending = iter(range(len(run.calls)))
        endpoint = run.target.endpoint

        async def worker(group: anyio.abc.TaskGroup) -> None:
            for index in pending:
                try:
                    streams[index] = await driver.exchange(
                        endpoint,
                        run.calls[index],
                        run.request,
                        timeouts=timeouts,
                        operation=EMBEDDINGS,
                    )
                except Exception as exc:  # noqa: BLE001 - raised below
                    # Kept and raised below, as itself (not in an exception
                    # group); the other requests are cancelled.
                    failures.append(exc)
                    group.cancel_scope.cancel()
                    return

        async with anyio.create_task_group() as group:
            for _ in range(max(1, min(self.concurrency, len(run.calls)))):
                group.start_soon(worker, group)
        if failures:
            raise failures[0]
        return run.result(streams)

    def run(self, driver: Driver) -> Embeddings:
        """The vectors, blocking: the requests one after another."""
        run = self.plan
        endpoint = run.target.endpoint
        streams = [
            driver.sync_exchange(
                endpoint, call, run.request, timeouts=self.timeouts, operation=EMBEDDINGS
            )
            for call in run.calls
        ]
        return run.result(streams)


class Streamed(NamedTuple, Generic[I, W]):
    """A planned streamed answer: ``call`` (a shape for the driver) sent to
    its endpoint, read by the core ``reader`` makes of the driver's stream."""

    call: SpeechCall | TranscriptionCall
    operation: str
    timeouts: Timeouts | None
    reader: Callable[[Any], Pieces[I, W]]

    def _sent(self) -> tuple[Any, Shape, ModelRequest]:
        return self.call.target.endpoint, self.call, self.call.request

    def face(self, driver: Driver) -> AsyncFace[I, W]:
        """The async face over the answer (sent on its first read)."""
        stream = driver.stream(*self._sent(), timeouts=self.timeouts, operation=self.operation)
        return AsyncFace(self.reader(stream))

    def sync_face(self, driver: Driver) -> SyncFace[I, W]:
        """The blocking face over the answer (sent on its first read)."""
        stream = driver.sync_stream(*self._sent(), timeouts=self.timeouts, operation=self.operation)
        return SyncFace(self.reader(stream))


class Planned(Protocol[T_co]):
    """A plan that runs itself over the driver, async or blocking."""

    async def arun(self, driver: Driver) -> T_co:
        """The answer, async."""
        ...

    def run(self, driver: Driver) -> T_co:
        """The answer, blocking."""
        ...


class Planning(Protocol):
    """A client: the planner of its calls and the driver that runs them."""

    @property
    def _plans(self) -> Any: ...

    _driver: Driver


def _as(made: Callable[..., Any], plan: Callable[..., Any]) -> None:
    """``made`` named and documented as ``plan`` (a public call's)."""
    functools.update_wrapper(made, plan)
    made.__name__ = made.__qualname__ = plan.__name__.lstrip("_")


def awaited(
    plan: Callable[Concatenate[Any, P], Planned[T]],
) -> Callable[Concatenate[Planning, P], Coroutine[Any, Any, T]]:
    """The async client's call of ``plan``."""

    async def call(self: Planning, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await plan(self._plans, *args, **kwargs).arun(self._driver)

    _as(call, plan)
    return call


def _run_by(
    plan: Callable[Concatenate[Any, P], X], run: Callable[[X, Driver], R]
) -> Callable[Concatenate[Planning, P], R]:
    """The call that plans with ``plan`` and runs the plan by ``run``."""

    def call(self: Planning, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return run(plan(self._plans, *args, **kwargs), self._driver)

    _as(call, plan)
    return call


def blocked(
    plan: Callable[Concatenate[Any, P], Planned[T]],
) -> Callable[Concatenate[Planning, P], T]:
    """The blocking client's call of ``plan``."""
    return _run_by(plan, lambda planned, driver: planned.run(driver))


def faced(
    plan: Callable[Concatenate[Any, P], Streamed[I, W]],
) -> Callable[Concatenate[Planning, P], AsyncFace[I, W]]:
    """The async client's streamed call of ``plan``."""
    return _run_by(plan, Streamed.face)


def sync_faced(
    plan: Callable[Concatenate[Any, P], Streamed[I, W]],
) -> Callable[Concatenate[Planning, P], SyncFace[I, W]]:
    """The blocking client's streamed call of ``plan``."""
    return _run_by(plan, Streamed.sync_face)


def _then(flow: Exchange[Any], finish: Callable[[Any], T]) -> Exchange[T]:
    """``flow`` with its value passed through ``finish``."""
    return finish((yield from flow))


class AsyncExtras:
    """Embeddings, batches and speech on :class:`elelem.Client`: each call
    planned once (the ``_``-named plans, whose signatures and docstrings
    the calls take), then run async here and blocking on
    :class:`elelem.SyncClient`."""

    _driver: Driver
    _clock: Callable[[], datetime]
    _env: Any
    _api_keys: dict[str, str]
    catalog: Catalog

    @property
    def _plans(self) -> AsyncExtras:
        return self

    def target(self, model: str | Target) -> Target:
        """Resolved by the client (see :meth:`elelem.Client.target`)."""
        raise NotImplementedError

    def _embed(
        self,
        model: str | Target,
        inputs: Sequence[str] | str,
        *,
        dimensions: int | None = None,
        task: str | None = None,
        timeouts: Timeouts | None = None,
        concurrency: int = EMBED_CONCURRENCY,
    ) -> EmbedRun:
        """Embed ``inputs`` (one text or a sequence) with ``model``: one
        float32 vector per input, in order (see
        :class:`~elelem.embeddings.Embeddings`).

        ``dimensions`` asks for shorter vectors where the model can make
        them; ``task`` says what they are for (``query``, ``document``,
        ``similarity``, ``classification``, ``clustering``, ``code-query``),
        reported as dropped on a wire that takes none.  The inputs go in as
        many requests as the provider's limits need, ``concurrency`` at a
        time (the blocking client's one after another); the first error is
        raised as the typed error it is."""
        planned = embed_plan(
            self._embed_target(model), inputs, dimensions=dimensions, task=task, now=self._clock()
        )
        return EmbedRun(planned, timeouts, concurrency)

    def _embed_target(self, model: str | Target) -> Target:
        """:meth:`target`, or for a provider that only embeds (Voyage) and
        that the catalog does not name, its built-in spec."""
        if isinstance(model, str):
            spec = EMBEDDING_PROVIDERS.get(model.partition(":")[0])
            if spec is not None and spec.name not in self.catalog:
                only = Catalog([spec])
                only.keys_file = self.catalog.keys_file
                env = os.environ if self._env is None else self._env
                return only.target(model, env, self._api_keys)
        return self.target(model)

    def _batch(
        self,
        model: str | Target,
        requests: Sequence[BatchRequest | str],
        *,
        timeouts: Timeouts | None = None,
    ) -> OneShot[BatchRecord]:
        """Submit ``requests`` (prompts, or :class:`~elelem.batches.BatchRequest`
        values) as one batch to ``model``'s provider (Anthropic, OpenAI,
        Gemini) at the batch price; the returned record is what
        :meth:`batch_status` and :meth:`batch_results` take, in this process
        or another."""
        target = self.target(model)
        wire = batch_wire(target)
        neutral = neutral_requests(requests, target.model, self._clock())
        return OneShot(target, wire.submit(target, encode_batch(target, neutral)), BATCH, timeouts)

    def _batch_status(
        self, record: BatchRecord, *, timeouts: Timeouts | None = None
    ) -> OneShot[BatchRecord]:
        """``record`` with the batch's state now."""
        target = self.target(record.model)
        return OneShot(target, batch_wire(target).status(target, record), BATCH_STATUS, timeouts)

    def _batch_results(
        self, record: BatchRecord, *, timeouts: Timeouts | None = None
    ) -> OneShot[list[BatchResult]]:
        """Each request's response (or error) of a finished batch, in
        request order, read by the shape's own parser and priced at the
        batch price."""
        target = self.target(record.model)
        flow = _then(
            batch_wire(target).results(target, record),
            lambda items: read_results(target, record, items, self._clock()),
        )
        return OneShot(target, flow, BATCH_RESULTS, timeouts)

    def _speak(
        self,
        model: str | Target,
        text: str,
        *,
        voice: str = "alloy",
        format: str = "mp3",
        instructions: str | None = None,
        timeouts: Timeouts | None = None,
    ) -> OneShot[AudioBlock]:
        """``text`` spoken by a speech model (OpenAI ``audio/speech`` and
        servers with the same endpoint): an :class:`~elelem.vocabulary.AudioBlock`
        of ``format`` whose ``transcript`` is ``text``."""
        target = self.target(model)
        flow = speak_flow(target, SpeechRequest(target.model, text, voice, format, instructions))
        return OneShot(target, flow, SPEAK, timeouts)

    def _transcribe(
        self,
        model: str | Target,
        audio: AudioBlock | bytes | str,
        *,
        language: str | None = None,
        prompt: str | None = None,
        timeouts: Timeouts | None = None,
    ) -> OneShot[Transcript]:
        """What ``audio`` (a block of bytes, its bytes, or a file path) says,
        by a transcription model (OpenAI ``audio/transcriptions``, Groq's
        Whisper, any server with the same endpoint)."""
        target = self.target(model)
        flow = transcribe_flow(target, audio_of(audio), language=language, prompt=prompt)
        return OneShot(target, flow, TRANSCRIBE, timeouts)

    def _speak_stream(
        self,
        model: str | Target,
        text: str,
        *,
        voice: str = "alloy",
        format: str = "mp3",
        instructions: str | None = None,
        speed: float | None = None,
        stream_format: str = "audio",
        timeouts: Timeouts | None = None,
    ) -> Streamed[bytes, Speech]:
        """``text`` spoken by a speech model, streamed: an iterator of the
        audio's bytes as they arrive (``with`` it; async, ``async with``),
        whose ``final()`` is the whole
        :class:`~elelem.speech.streamed_speech.Speech` (the audio block,
        usage, cost); its ``core`` is the
        :class:`~elelem.speech.streamed_speech.SpeechReader` (``received``,
        ``summary()``).

        ``stream_format`` ``audio`` streams the file itself (every model);
        ``sse`` streams events that end with the usage (``gpt-4o-mini-tts``
        and newer).  The request is sent on the first iteration."""
        target = self.target(model)
        speech = SpeechRequest(
            target.model, text, voice, format, instructions, speed, stream_format
        )
        call = SpeechCall(target, speech, now=self._clock())
        return Streamed(call, SPEAK, timeouts, lambda stream: SpeechReader(stream, call))

    def _transcribe_stream(
        self,
        model: str | Target,
        audio: AudioBlock | bytes | str,
        *,
        language: str | None = None,
        prompt: str | None = None,
        timeouts: Timeouts | None = None,
    ) -> Streamed[str, Transcript]:
        """What ``audio`` (a block of bytes, its bytes, or a file path) says,
        streamed: an iterator of the text as the model writes it (``with``
        it; async, ``async with``), whose ``final()`` is the whole
        :class:`~elelem.speech.endpoints.Transcript` (text, usage, cost,
        unknown events).

        ``gpt-4o-transcribe`` and newer stream; a Whisper model is asked
        whole and its text arrives as one piece.  The request is sent on the
        first iteration."""
        call = TranscriptionCall(
            self.target(model), audio_of(audio), language=language, prompt=prompt, now=self._clock()
        )
        return Streamed(call, TRANSCRIBE, timeouts, lambda stream: TranscriptReader(stream, call))

    embed = awaited(_embed)
    batch = awaited(_batch)
    batch_status = awaited(_batch_status)
    batch_results = awaited(_batch_results)
    speak = awaited(_speak)
    transcribe = awaited(_transcribe)
    speak_stream = faced(_speak_stream)
    transcribe_stream = faced(_transcribe_stream)


__all__ = [
    "EMBED_CONCURRENCY",
    "AsyncExtras",
    "EmbedRun",
    "OneShot",
    "Streamed",
    "awaited",
    "blocked",
    "faced",
    "sync_faced",
]
