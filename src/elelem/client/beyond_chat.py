"""What a client does beyond a chat response: embeddings, batches, speech.

:class:`AsyncExtras` is part of :class:`elelem.Client` and
:class:`SyncExtras` of :class:`elelem.SyncClient`; each call is written once
as a plan or a flow (:mod:`elelem.embeddings`, :mod:`elelem.batches`,
:mod:`elelem.speech.endpoints`) and run by the client's one driver, async or
blocking: each one-shot call is planned once (a :class:`OneShot`, by
:class:`AsyncExtras`) and the two classes only run it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Generic, NamedTuple, TypeVar

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
from elelem.speech.streamed_speech import Speech, SpeechCall, SpeechReader
from elelem.speech.streamed_transcription import TranscriptionCall, TranscriptReader
from elelem.transport import Driver, Timeouts
from elelem.transport.config import (
    BATCH,
    BATCH_RESULTS,
    BATCH_STATUS,
    EMBEDDINGS,
    SPEAK,
    TRANSCRIBE,
)
from elelem.transport.faces import AsyncFace, SyncFace
from elelem.transport.one_shot import Exchange, run_async, run_sync
from elelem.vocabulary import AudioBlock

EMBED_CONCURRENCY = 4
"""How many embedding requests one :meth:`AsyncExtras.embed` has in flight."""

T = TypeVar("T")


class OneShot(NamedTuple, Generic[T]):
    """One planned exchange of one-shot calls: to ``target``, the ``flow``
    whose value is the answer, told to the hooks as ``operation``."""

    target: Target
    flow: Exchange[T]
    operation: str


def _then(flow: Exchange[Any], finish: Callable[[Any], T]) -> Exchange[T]:
    """``flow`` with its value passed through ``finish``."""
    return finish((yield from flow))


class AsyncExtras:
    """Embeddings, batches and speech on :class:`elelem.Client`."""

    _driver: Driver
    _clock: Callable[[], datetime]
    _env: Any
    _api_keys: dict[str, str]
    catalog: Catalog

    def target(self, model: str | Target) -> Target:
        """Resolved by the client (see :meth:`elelem.Client.target`)."""
        raise NotImplementedError

    async def embed(
        self,
        model: str | Target,
        inputs: Sequence[str] | str,
        *,
        dimensions: int | None = None,
        task: str | None = None,
        timeouts: Timeouts | None = None,
        concurrency: int = EMBED_CONCURRENCY,
    ) -> Embeddings:
        """Embed ``inputs`` (one text or a sequence) with ``model``: one
        float32 vector per input, in order (see
        :class:`~elelem.embeddings.Embeddings`).

        ``dimensions`` asks for shorter vectors where the model can make
        them; ``task`` says what they are for (``query``, ``document``,
        ``similarity``, ``classification``, ``clustering``, ``code-query``),
        reported as dropped on a wire that takes none.  The inputs go in as
        many requests as the provider's limits need, ``concurrency`` at a
        time; the first error is raised as the typed error it is."""
        run = self._embed_plan(model, inputs, dimensions, task)
        streams: list[Any] = [None] * len(run.calls)
        failures: list[Exception] = []
        pending = iter(range(len(run.calls)))
        endpoint = run.target.endpoint

        async def worker(group: anyio.abc.TaskGroup) -> None:
            for index in pending:
                try:
                    streams[index] = await self._driver.exchange(
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
            for _ in range(max(1, min(concurrency, len(run.calls)))):
                group.start_soon(worker, group)
        if failures:
            raise failures[0]
        return run.result(streams)

    def _embed_plan(
        self,
        model: str | Target,
        inputs: Sequence[str] | str,
        dimensions: int | None,
        task: str | None,
    ) -> EmbedPlan:
        return embed_plan(
            self._embed_target(model), inputs, dimensions=dimensions, task=task, now=self._clock()
        )

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

    async def batch(
        self,
        model: str | Target,
        requests: Sequence[BatchRequest | str],
        *,
        timeouts: Timeouts | None = None,
    ) -> BatchRecord:
        """Submit ``requests`` (prompts, or :class:`~elelem.batches.BatchRequest`
        values) as one batch to ``model``'s provider (Anthropic, OpenAI,
        Gemini) at the batch price; the returned record is what
        :meth:`batch_status` and :meth:`batch_results` take, in this process
        or another."""
        return await self._run(self._batch_submit(model, requests), timeouts)

    async def batch_status(
        self, record: BatchRecord, *, timeouts: Timeouts | None = None
    ) -> BatchRecord:
        """``record`` with the batch's state now."""
        return await self._run(self._batch_status(record), timeouts)

    async def batch_results(
        self, record: BatchRecord, *, timeouts: Timeouts | None = None
    ) -> list[BatchResult]:
        """Each request's response (or error) of a finished batch, in
        request order, read by the shape's own parser and priced at the
        batch price."""
        return await self._run(self._batch_results(record), timeouts)

    async def speak(
        self,
        model: str | Target,
        text: str,
        *,
        voice: str = "alloy",
        format: str = "mp3",
        instructions: str | None = None,
        timeouts: Timeouts | None = None,
    ) -> AudioBlock:
        """``text`` spoken by a speech model (OpenAI ``audio/speech`` and
        servers with the same endpoint): an :class:`~elelem.vocabulary.AudioBlock`
        of ``format`` whose ``transcript`` is ``text``."""
        return await self._run(self._speak(model, text, voice, format, instructions), timeouts)

    async def transcribe(
        self,
        model: str | Target,
        audio: AudioBlock | bytes | str,
        *,
        language: str | None = None,
        prompt: str | None = None,
        timeouts: Timeouts | None = None,
    ) -> Transcript:
        """What ``audio`` (a block of bytes, its bytes, or a file path) says,
        by a transcription model (OpenAI ``audio/transcriptions``, Groq's
        Whisper, any server with the same endpoint)."""
        return await self._run(self._transcribe(model, audio, language, prompt), timeouts)

    async def _run(self, one: OneShot[T], timeouts: Timeouts | None) -> T:
        target = one.target
        return await run_async(
            self._driver, target.endpoint, one.flow, target.model, timeouts, operation=one.operation
        )

    def _speak(
        self,
        model: str | Target,
        text: str,
        voice: str,
        format: str,
        instructions: str | None,
    ) -> OneShot[AudioBlock]:
        target = self.target(model)
        flow = speak_flow(target, text, voice=voice, format=format, instructions=instructions)
        return OneShot(target, flow, SPEAK)

    def _transcribe(
        self,
        model: str | Target,
        audio: AudioBlock | bytes | str,
        language: str | None,
        prompt: str | None,
    ) -> OneShot[Transcript]:
        target = self.target(model)
        flow = transcribe_flow(target, audio_of(audio), language=language, prompt=prompt)
        return OneShot(target, flow, TRANSCRIBE)

    def speak_stream(
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
    ) -> AsyncFace[bytes, Speech]:
        """``text`` spoken by a speech model, streamed: an async iterator of
        the audio's bytes as they arrive (``async with`` it), whose
        ``final()`` is the whole
        :class:`~elelem.speech.streamed_speech.Speech` (the audio block, usage,
        cost); its ``core`` is the
        :class:`~elelem.speech.streamed_speech.SpeechReader` (``received``,
        ``summary()``).

        ``stream_format`` ``audio`` streams the file itself (every model);
        ``sse`` streams events that end with the usage (``gpt-4o-mini-tts``
        and newer).  The request is sent on the first iteration."""
        call = self._speech_call(model, text, voice, format, instructions, speed, stream_format)
        stream = self._driver.stream(
            call.target.endpoint, call, call.request, timeouts=timeouts, operation=SPEAK
        )
        return AsyncFace(SpeechReader(stream, call))

    def transcribe_stream(
        self,
        model: str | Target,
        audio: AudioBlock | bytes | str,
        *,
        language: str | None = None,
        prompt: str | None = None,
        timeouts: Timeouts | None = None,
    ) -> AsyncFace[str, Transcript]:
        """What ``audio`` (a block of bytes, its bytes, or a file path) says,
        streamed: an async iterator of the text as the model writes it
        (``async with`` it), whose ``final()`` is the whole
        :class:`~elelem.speech.endpoints.Transcript` (text, usage, cost, unknown events).

        ``gpt-4o-transcribe`` and newer stream; a Whisper model is asked
        whole and its text arrives as one piece.  The request is sent on the
        first iteration."""
        call = self._transcription_call(model, audio, language, prompt)
        stream = self._driver.stream(
            call.target.endpoint, call, call.request, timeouts=timeouts, operation=TRANSCRIBE
        )
        return AsyncFace(TranscriptReader(stream, call))

    def _transcription_call(
        self,
        model: str | Target,
        audio: AudioBlock | bytes | str,
        language: str | None,
        prompt: str | None,
    ) -> TranscriptionCall:
        return TranscriptionCall(
            self.target(model),
            audio_of(audio),
            language=language,
            prompt=prompt,
            now=self._clock(),
        )

    def _speech_call(
        self,
        model: str | Target,
        text: str,
        voice: str,
        format: str,
        instructions: str | None,
        speed: float | None,
        stream_format: str,
    ) -> SpeechCall:
        return SpeechCall(
            self.target(model),
            text,
            voice=voice,
            format=format,
            instructions=instructions,
            speed=speed,
            stream_format=stream_format,
            now=self._clock(),
        )

    def _batch_submit(
        self, model: str | Target, requests: Sequence[BatchRequest | str]
    ) -> OneShot[BatchRecord]:
        target = self.target(model)
        wire = batch_wire(target)
        neutral = neutral_requests(requests, target.model, self._clock())
        return OneShot(target, wire.submit(target, encode_batch(target, neutral)), BATCH)

    def _batch_status(self, record: BatchRecord) -> OneShot[BatchRecord]:
        target = self.target(record.model)
        return OneShot(target, batch_wire(target).status(target, record), BATCH_STATUS)

    def _batch_results(self, record: BatchRecord) -> OneShot[list[BatchResult]]:
        target = self.target(record.model)
        flow = _then(
            batch_wire(target).results(target, record),
            lambda items: read_results(target, record, items, self._clock()),
        )
        return OneShot(target, flow, BATCH_RESULTS)


class SyncExtras:
    """Embeddings, batches and speech on :class:`elelem.SyncClient`, blocking."""

    _client: AsyncExtras
    _driver: Driver

    def target(self, model: str | Target) -> Target:
        """Resolved by the client (see :meth:`elelem.Client.target`)."""
        raise NotImplementedError

    def speak(
        self,
        model: str | Target,
        text: str,
        *,
        voice: str = "alloy",
        format: str = "mp3",
        instructions: str | None = None,
        timeouts: Timeouts | None = None,
    ) -> AudioBlock:
        """As :meth:`Client.speak`, blocking."""
        return self._run(self._client._speak(model, text, voice, format, instructions), timeouts)

    def transcribe(
        self,
        model: str | Target,
        audio: AudioBlock | bytes | str,
        *,
        language: str | None = None,
        prompt: str | None = None,
        timeouts: Timeouts | None = None,
    ) -> Transcript:
        """As :meth:`Client.transcribe`, blocking."""
        return self._run(self._client._transcribe(model, audio, language, prompt), timeouts)

    def _run(self, one: OneShot[T], timeouts: Timeouts | None) -> T:
        target = one.target
        return run_sync(
            self._driver, target.endpoint, one.flow, target.model, timeouts, operation=one.operation
        )

    def speak_stream(
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
    ) -> SyncFace[bytes, Speech]:
        """As :meth:`Client.speak_stream`, blocking: an iterator of the
        audio's bytes (``with`` it)."""
        call = self._client._speech_call(
            model, text, voice, format, instructions, speed, stream_format
        )
        stream = self._driver.sync_stream(
            call.target.endpoint, call, call.request, timeouts=timeouts, operation=SPEAK
        )
        return SyncFace(SpeechReader(stream, call))

    def transcribe_stream(
        self,
        model: str | Target,
        audio: AudioBlock | bytes | str,
        *,
        language: str | None = None,
        prompt: str | None = None,
        timeouts: Timeouts | None = None,
    ) -> SyncFace[str, Transcript]:
        """As :meth:`Client.transcribe_stream`, blocking: an iterator of the
        text as it arrives (``with`` it)."""
        call = self._client._transcription_call(model, audio, language, prompt)
        stream = self._driver.sync_stream(
            call.target.endpoint, call, call.request, timeouts=timeouts, operation=TRANSCRIBE
        )
        return SyncFace(TranscriptReader(stream, call))

    def batch(
        self,
        model: str | Target,
        requests: Sequence[BatchRequest | str],
        *,
        timeouts: Timeouts | None = None,
    ) -> BatchRecord:
        """As :meth:`Client.batch`, blocking."""
        return self._run(self._client._batch_submit(model, requests), timeouts)

    def batch_status(self, record: BatchRecord, *, timeouts: Timeouts | None = None) -> BatchRecord:
        """As :meth:`Client.batch_status`, blocking."""
        return self._run(self._client._batch_status(record), timeouts)

    def batch_results(
        self, record: BatchRecord, *, timeouts: Timeouts | None = None
    ) -> list[BatchResult]:
        """As :meth:`Client.batch_results`, blocking."""
        return self._run(self._client._batch_results(record), timeouts)

    def embed(
        self,
        model: str | Target,
        inputs: Sequence[str] | str,
        *,
        dimensions: int | None = None,
        task: str | None = None,
        timeouts: Timeouts | None = None,
    ) -> Embeddings:
        """As :meth:`Client.embed`, blocking: the requests one after another."""
        run = self._client._embed_plan(model, inputs, dimensions, task)
        endpoint = run.target.endpoint
        streams = [
            self._driver.sync_exchange(
                endpoint, call, run.request, timeouts=timeouts, operation=EMBEDDINGS
            )
            for call in run.calls
        ]
        return run.result(streams)


__all__ = ["EMBED_CONCURRENCY", "AsyncExtras", "OneShot", "SyncExtras"]
