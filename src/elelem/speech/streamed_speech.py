"""Streamed text to speech: the audio's bytes as the server makes them.

The wire (the request, its two streamed forms, raw audio and server-sent
events, and the sans-IO parser of each) is the shape package's
``speech.py`` (OpenAI's: :mod:`elelem.shapes.openai_responses.speech`); each
piece of audio reaches the caller as one committed ``audio`` block.

:class:`SpeechCall` is the request as a shape for the driver, so the keys,
the retries before any content, the typed errors and their redaction are the
driver's, as for every other request.  :class:`SpeechReader` is the stream
written once: the one async or blocking face
(:class:`~elelem.transport.faces.AsyncFace`,
:class:`~elelem.transport.faces.SyncFace`) iterates the audio's bytes over
it, and its ``final()`` returns the whole :class:`Speech`: one audio block,
the usage and its cost.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from elelem.errors import MalformedStreamError, StreamError
from elelem.providers import Target
from elelem.providers.pricing import PROVIDER_IDS, Cost, price
from elelem.speech.endpoints import speech_wire
from elelem.stream import AssembledResponse, Chunk, Retry
from elelem.transport.faces import Effects, Pair, close_of, start_of, step_of
from elelem.vocabulary import AudioBlock, BytesSource, Part, ProviderId, Usage
from elelem.vocabulary.audio import MEDIA_TYPES_BY_FORMAT
from elelem.wire import EncodedRequest, FrameParser, Framing, ModelRequest
from elelem.wire.speech import STREAM_FORMATS, SpeechRequest

T = TypeVar("T")
R = TypeVar("R")


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
        self, target: Target, speech: SpeechRequest, *, now: datetime | None = None
    ) -> None:
        wire = speech_wire(target)
        self.speech = speech
        """The request as the wire takes it (``stream_format`` ``audio`` or ``sse``)."""
        self._encoded = wire.encode(speech)
        self._wire = wire
        self.sse = speech.stream_format == "sse"
        self.name = "openai_speech"
        self.framing: Framing = "sse" if self.sse else "raw"
        self.target = target
        self.text = speech.text
        self.media_type = MEDIA_TYPES_BY_FORMAT[speech.format]
        self.request = ModelRequest(model=target.model, messages=(), now=now)
        """The neutral request the driver is given (the model, the time)."""
        self._shape = target.shape

    def encode_request(
        self, request: ModelRequest, *, provider: ProviderId, stream: bool = True
    ) -> EncodedRequest:
        """The ``audio/speech`` request, streamed, whatever the neutral one."""
        return self._encoded

    def new_parser(self, provider: ProviderId, request: ModelRequest | None = None) -> FrameParser:
        """The wire's parser of the form asked (raw audio or SSE)."""
        return self._wire.parser(provider, self.speech)

    def parse_response(
        self, body: bytes, provider: ProviderId, request: ModelRequest | None = None
    ) -> list[Chunk]:
        """A JSON answer to a streamed speech request: malformed, never audio."""
        # Only a JSON body comes here (the driver streams every other one).
        raise MalformedStreamError(
            "the speech stream answered JSON, not audio", body=body[:2048], retryable=False
        )

    def classify_error(self, status: int, headers: Mapping[str, str], body: bytes) -> StreamError:
        """A typed error, classified by the provider's chat shape."""
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
    """What every answer read piece by piece shares, as a core the one
    async or blocking face reads (:class:`~elelem.transport.faces.AsyncFace`,
    :class:`~elelem.transport.faces.SyncFace`): the driver's stream
    underneath, each ``(chunk, committed)`` pair it reads taken in by
    :meth:`took` (which keeps what the whole answer needs and gives the
    piece for the caller, or None), and the whole answer made by
    :meth:`result`.  The request is sent on the first read, or on ``with``."""

    stream: Any
    """The driver's stream underneath (status, headers, retries, …)."""
    _piece: T | None = None

    def stepping(self) -> Effects[Pair | None]:
        """The stream's next pair, taken in."""
        pair: Pair | None = yield step_of(self.stream)
        self._piece = None if pair is None else self.took(pair)
        return pair

    def starting(self) -> Effects[None]:
        """Send the request and wait for the response headers (idempotent)."""
        yield start_of(self.stream)

    def closing(self) -> Effects[None]:
        """Close the connection."""
        yield close_of(self.stream)

    def took(self, pair: Pair) -> T | None:
        """Take ``pair`` in; the piece it holds for the caller, or None."""
        raise NotImplementedError

    def shown(self, pair: Pair) -> T | None:
        """The piece of ``pair``, the pair just read."""
        return self._piece

    def result(self) -> R:
        """The whole answer of a stream read to its end (no I/O)."""
        raise NotImplementedError

    def partial(self) -> AssembledResponse:
        """What arrived so far, as the driver's stream assembled it."""
        return self.stream.partial()  # type: ignore[no-any-return]

    def open_parts(self) -> tuple[Part, ...]:
        """The blocks in progress."""
        return self.stream.open_parts()  # type: ignore[no-any-return]

    @property
    def request_id(self) -> str | None:
        """The provider's id of the request."""
        return self.stream.request_id  # type: ignore[no-any-return]

    @property
    def retries(self) -> list[Retry]:
        """The retries before the answer."""
        return self.stream.retries  # type: ignore[no-any-return]


class SpeechReader(Pieces[bytes, Speech]):
    """A streamed speech answer, read once through either face: the audio
    taken from each commit, and the whole :class:`Speech` at the end."""

    def __init__(self, stream: Any, call: SpeechCall) -> None:
        self.stream = stream
        self.call = call
        self._pieces: list[bytes] = []
        self._unknown: list[Part] = []

    def took(self, pair: Pair) -> bytes | None:
        """Keep the audio ``pair`` committed (and what else it did); the audio, or None."""
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


__all__ = [
    "MAX_AUDIO_PIECES",
    "STREAM_FORMATS",
    "Pieces",
    "Speech",
    "SpeechCall",
    "SpeechReader",
]
