"""Streamed text to speech: the audio's bytes as the server makes them.

OpenAI's ``POST /audio/speech`` streams its answer in one of two forms:

- ``stream_format: "audio"`` (the default, every speech model): the audio
  file itself, sent chunked as it is made, in the ``response_format`` asked
  (``mp3``, ``wav``, ``pcm``, …).  The body is read with the ``raw`` framing
  (:mod:`elelem.transport.rawbody`): each network read is one frame, and the
  body's end is the end of the audio.
- ``stream_format: "sse"`` (``gpt-4o-mini-tts`` and newer): server-sent
  events, each a JSON object, ``{"type": "speech.audio.delta", "audio":
  BASE64}`` for every piece and ``{"type": "speech.audio.done", "usage":
  {"input_tokens", "output_tokens", "total_tokens"}}`` last.  The events go
  through the one SSE decoder; a stream that ends without ``speech.audio.done``
  is incomplete.

:class:`SpeechParser` is sans-IO (frames in, chunks out): each piece of
audio is one ``audio`` block (``block-start`` with the piece's bytes,
``block-end``), committed by the one assembler as it arrives, so a reader
has the first bytes before the body ends; the usage of ``speech.audio.done``
is a ``usage`` chunk.  An event of another type is kept whole, as an unknown
block, never dropped; an ``error`` event is the provider's typed error; a
malformed event, or audio that is not base64, a
:class:`~elelem.errors.MalformedStreamError`.

:class:`SpeechCall` is the request as a shape for the driver, so the keys,
the retries before any content, the typed errors and their redaction are the
driver's, as for every other request.  :class:`SpeechStream` (async) and
:class:`SyncSpeechStream` (blocking) iterate the audio's bytes over the same
core, and :meth:`~SpeechStream.final` returns the whole :class:`Speech`: one
audio block, the usage and its cost.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Any, Generic, Self, TypeVar

import msgspec

from elelem.errors import ConfigError, MalformedStreamError, StreamError
from elelem.providers import Target
from elelem.providers.pricing import PROVIDER_IDS, Cost, price
from elelem.speech.endpoints import speech_body
from elelem.stream import BlockEnd, BlockStart, Chunk, Finish, ResponseStart, UsageUpdate
from elelem.transport import ResponseStream, SyncResponseStream
from elelem.transport.stream_core import StreamCore
from elelem.vocabulary import AudioBlock, BytesSource, Part, ProviderId, Usage
from elelem.vocabulary.json import JSONValue, decode_json
from elelem.wire import EncodedRequest, FrameParser, Framing, ModelRequest

T = TypeVar("T")
R = TypeVar("R")

STREAM_FORMATS = ("audio", "sse")
"""The ``stream_format`` values of ``audio/speech``."""

DELTA = "speech.audio.delta"
DONE = "speech.audio.done"

_USAGE_FIELDS = ("input_tokens", "output_tokens", "total_tokens")


def malformed(what: str, why: str, data: str | bytes = b"") -> MalformedStreamError:
    """The ``what`` stream ``why``: a malformed answer, its first bytes kept."""
    body = data.encode("utf-8", "replace") if isinstance(data, str) else data
    return MalformedStreamError(f"the {what} stream {why}", body=body[:2048], retryable=False)


def _malformed(why: str, data: str | bytes = b"") -> MalformedStreamError:
    return malformed("speech", why, data)


def sse_event(what: str, event: str, data: str) -> tuple[dict[str, JSONValue], str]:
    """One server-sent event of the ``what`` stream: its JSON object and its
    type (the object's ``type``, else the SSE event name); anything else is
    a :class:`~elelem.errors.MalformedStreamError` saying what."""
    try:
        obj = decode_json(data)
    except msgspec.DecodeError as exc:
        raise malformed(what, f"sent an event that is not JSON: {exc}", data) from None
    if not isinstance(obj, dict):
        raise malformed(what, "sent an event that is not a JSON object", data)
    kind = obj.get("type", event or None)
    if not isinstance(kind, str):
        raise malformed(what, "sent an event without a type", data)
    return obj, kind


def provider_error(obj: dict[str, JSONValue]) -> StreamError:
    """An ``error`` event, typed by OpenAI's error table."""
    # Loaded here, not with the module: loading the client loads no shape
    # code (tests/test_layers.py).
    from elelem.shapes.openai_responses.errors import error_from_event

    inner = obj.get("error")
    return error_from_event(inner if isinstance(inner, dict) else obj)


def counts(
    what: str, event: str, value: JSONValue, names: Sequence[str], data: str
) -> dict[str, int]:
    """The token counts ``names`` of the usage object ``value`` of ``event``
    (a missing one is 0); one that is no count is a malformed stream."""
    if not isinstance(value, dict):
        raise malformed(what, f"{event} holds usage that is not an object", data)
    found: dict[str, int] = {}
    for name in names:
        count = value.get(name, 0)
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise malformed(what, f"{event} holds a {name} that is no count: {count!r}", data)
        found[name] = count
    return found


def _usage(value: JSONValue, data: str) -> Usage:
    found = counts("speech", DONE, value, _USAGE_FIELDS, data)
    return Usage(input=found["input_tokens"], output=found["output_tokens"], raw=value)


class SpeechParser:
    """One streamed speech answer, sans-IO: frames in, chunks out (see the
    module docs).  ``sse`` says which form the answer takes; ``media_type``
    is the audio's (from the ``response_format`` asked)."""

    def __init__(self, provider: ProviderId, model: str, media_type: str, *, sse: bool) -> None:
        self.provider = provider
        self.model = model
        self.media_type = media_type
        self.sse = sse
        self._blocks = 0

    def open(self, status: int, headers: Mapping[str, str]) -> Sequence[Chunk]:
        """The answer's headers arrived."""
        return [ResponseStart(provider=self.provider, model=self.model)]

    def message(self, event: str, data: str | bytes) -> Sequence[Chunk]:
        """One read of the audio (raw form) or one event (SSE form)."""
        if isinstance(data, bytes):
            return self.piece(data) if data else []
        obj, kind = sse_event("speech", event, data)
        if kind == DELTA:
            audio = obj.get("audio")
            if not isinstance(audio, str):
                raise _malformed(f"sent a {DELTA} without base64 audio", data)
            try:
                piece = base64.b64decode(audio, validate=True)
            except (binascii.Error, ValueError):
                raise _malformed(f"sent a {DELTA} whose audio is not base64", data) from None
            # The event's own base64 goes on as it came: checked, not re-encoded.
            return self._audio(audio) if piece else []
        if kind == DONE:
            out: list[Chunk] = []
            if "usage" in obj:
                out.append(UsageUpdate(_usage(obj["usage"], data)))
            out.append(Finish("stop"))
            return out
        if kind == "error":
            raise provider_error(obj)
        # An event this parser does not know is kept whole, in its place.
        key = self._key()
        return [BlockStart(key, "unknown", raw=obj), BlockEnd(key)]

    def eof(self) -> Sequence[Chunk]:
        """The body ended: the end of the audio (raw form); an SSE answer
        ends with its ``speech.audio.done`` event, so nothing is added."""
        return [] if self.sse else [Finish("stop")]

    def piece(self, data: bytes) -> list[Chunk]:
        """One piece of audio as an ``audio`` block, whole."""
        return self._audio(base64.b64encode(data).decode("ascii"))

    def _audio(self, encoded: str) -> list[Chunk]:
        key = self._key()
        raw: dict[str, JSONValue] = {
            "type": "audio",
            "source": {"kind": "bytes", "blob": {"base64": encoded}},
            "media_type": self.media_type,
        }
        return [BlockStart(key, "audio", raw=raw), BlockEnd(key)]

    def _key(self) -> int:
        self._blocks += 1
        return self._blocks


MAX_AUDIO_PIECES = 100_000_000
"""The most pieces (blocks) one streamed speech answer may hold: far past
``Assembler``'s default, since a narration is a block per network read or
per ``speech.audio.delta``; what bounds it is the body's size limit."""


class SpeechCall:
    """One streamed ``audio/speech`` request as a :class:`~elelem.wire.Shape`
    for the driver; errors are classified by the provider's own shape."""

    max_blocks = MAX_AUDIO_PIECES
    """The blocks its answer may start (the driver's assembler reads it)."""

    def __init__(
        self,
        target: Target,
        text: str,
        *,
        voice: str = "alloy",
        format: str = "mp3",
        instructions: str | None = None,
        speed: float | None = None,
        stream_format: str = "audio",
        now: datetime | None = None,
    ) -> None:
        if stream_format not in STREAM_FORMATS:
            raise ConfigError(f"unknown speech stream_format {stream_format!r} (known: audio, sse)")
        body, media_type = speech_body(target, text, voice, format, instructions, speed)
        self.sse = stream_format == "sse"
        if self.sse:
            body["stream_format"] = "sse"
        self.name = "openai_speech"
        self.framing: Framing = "sse" if self.sse else "raw"
        self.target = target
        self.text = text
        self.media_type = media_type
        self.request = ModelRequest(model=target.model, messages=(), now=now)
        """The neutral request the driver is given (the model, the time)."""
        accept = "text/event-stream" if self.sse else "*/*"
        self._encoded = EncodedRequest("/audio/speech", body, {"accept": accept}, stream=True)
        self._shape = target.shape

    def encode_request(
        self, request: ModelRequest, *, provider: ProviderId, stream: bool = True
    ) -> EncodedRequest:
        return self._encoded

    def new_parser(self, provider: ProviderId, request: ModelRequest | None = None) -> FrameParser:
        return SpeechParser(provider, self.target.model, self.media_type, sse=self.sse)

    def parse_response(
        self, body: bytes, provider: ProviderId, request: ModelRequest | None = None
    ) -> list[Chunk]:
        # Only a JSON body comes here (the driver streams every other one).
        raise _malformed("answered JSON, not audio", body)

    def classify_error(self, status: int, headers: Mapping[str, str], body: bytes) -> StreamError:
        return self._shape.classify_error(status, headers, body)


@dataclass(frozen=True)
class Speech:
    """A whole streamed speech answer: ``audio`` (one block of every byte,
    its ``transcript`` the text spoken), the ``usage`` the provider reported
    (None in the raw form, which reports none) and its ``cost``; ``unknown``
    the events the parser did not know, kept whole; ``request_id`` the
    provider's."""

    audio: AudioBlock
    usage: Usage | None
    cost: Cost
    unknown: tuple[Part, ...] = ()
    request_id: str | None = None


class Pieces(Generic[T, R]):
    """What every streamed answer read piece by piece shares: the driver's
    stream, each ``(chunk, committed)`` pair turned into a piece (or None)
    by :meth:`take`, and the whole answer made by :meth:`result`."""

    stream: StreamCore

    def take(self, pair: tuple[Chunk, tuple[Part, ...]]) -> T | None:
        """The piece ``pair`` holds for the caller, or None."""
        raise NotImplementedError

    def result(self) -> R:
        """The whole answer of a stream read to its end (no I/O)."""
        raise NotImplementedError


class AsyncPieces(Pieces[T, R]):
    """:class:`Pieces` as an async iterator (the request is sent on first
    iteration, or on ``async with``); :meth:`final` reads the rest and
    returns the whole answer.  Use ``async with`` (or :meth:`aclose`) so
    the connection closes when iteration stops early."""

    stream: ResponseStream

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> T:
        while (pair := await self.stream.step()) is not None:
            piece = self.take(pair)
            if piece is not None:
                return piece
        raise StopAsyncIteration

    async def final(self) -> R:
        """Read the rest of the answer; the whole of it."""
        async for _ in self:
            pass
        return self.result()

    async def aclose(self) -> None:
        """Close the connection."""
        await self.stream.aclose()

    async def __aenter__(self) -> Self:
        await self.stream.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class SyncPieces(Pieces[T, R]):
    """:class:`AsyncPieces`, blocking: an iterator (``with`` it)."""

    stream: SyncResponseStream

    def __iter__(self) -> Self:
        return self

    def __next__(self) -> T:
        while (pair := self.stream.step()) is not None:
            piece = self.take(pair)
            if piece is not None:
                return piece
        raise StopIteration

    def final(self) -> R:
        """Read the rest of the answer; the whole of it."""
        for _ in self:
            pass
        return self.result()

    def close(self) -> None:
        """Close the connection."""
        self.stream.close()

    def __enter__(self) -> Self:
        self.stream.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class _SpeechReader(Pieces[bytes, Speech]):
    """What both speech streams share: the audio taken from each commit,
    and the whole :class:`Speech` at the end."""

    def __init__(self, stream: StreamCore, call: SpeechCall) -> None:
        self.stream = stream
        """The driver's stream underneath (status, headers, retries, …)."""
        self.call = call
        self._pieces: list[bytes] = []
        self._unknown: list[Part] = []

    def take(self, pair: tuple[Chunk, tuple[Part, ...]]) -> bytes | None:
        data = None
        for part in pair[1]:
            if isinstance(part, AudioBlock) and isinstance(part.source, BytesSource):
                data = part.source.blob.data
                self._pieces.append(data)
            else:
                self._unknown.append(part)
        return data

    @property
    def received(self) -> int:
        """How many bytes of audio were handed out so far."""
        return sum(len(piece) for piece in self._pieces)

    def summary(self) -> tuple[Usage | None, Cost]:
        """The usage and cost of a stream read to its end, without joining
        its audio into one block (what a caller that wrote each piece as it
        came needs: the whole audio again would double the memory)."""
        assembled = self.stream.result()
        target = self.call.target
        provider = target.provider
        cost = price(
            provider,
            target.model,
            assembled.usage,
            api_url=None if provider in PROVIDER_IDS else target.endpoint.base_url,
            at=self.call.request.now,
        )
        return assembled.usage, cost

    def result(self) -> Speech:
        """The whole answer of a stream read to its end (no I/O)."""
        usage, cost = self.summary()
        call = self.call
        audio = AudioBlock.from_bytes(b"".join(self._pieces), call.media_type, transcript=call.text)
        return Speech(audio, usage, cost, tuple(self._unknown), self.stream.request_id)


class SpeechStream(_SpeechReader, AsyncPieces[bytes, Speech]):
    """The audio of a streamed speech answer, piece by piece: an async
    iterator of ``bytes``; :meth:`final` reads the rest and returns the
    :class:`Speech` (see :class:`AsyncPieces`)."""

    stream: ResponseStream


class SyncSpeechStream(_SpeechReader, SyncPieces[bytes, Speech]):
    """:class:`SpeechStream`, blocking: an iterator of ``bytes``."""

    stream: SyncResponseStream


__all__ = [
    "MAX_AUDIO_PIECES",
    "STREAM_FORMATS",
    "AsyncPieces",
    "Pieces",
    "Speech",
    "SpeechCall",
    "SpeechParser",
    "SpeechStream",
    "SyncPieces",
    "SyncSpeechStream",
    "counts",
    "malformed",
    "provider_error",
    "sse_event",
]
