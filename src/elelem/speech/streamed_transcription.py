"""Streamed speech to text: the transcript's text as the model writes it.

The wire (the multipart upload, its server-sent events, and the sans-IO
parser that reads them, or a whole JSON answer of a model that does not
stream) is the shape package's ``transcription.py`` (OpenAI's:
:mod:`elelem.shapes.openai_responses.transcription`); the text is one
``text`` block whose deltas reach the caller as they arrive, its usage
priced with the audio tokens at the model's audio rate.
:class:`TranscriptionCall` is the request as a shape for the one driver
(keys, retries before content, typed errors, redaction, telemetry operation
``transcribe``); :class:`TranscriptReader` is the stream written once,
whose text the one async or blocking face iterates.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from elelem.errors import StreamError
from elelem.providers import Target
from elelem.providers.pricing import PROVIDER_IDS, Cost, price
from elelem.speech.endpoints import Transcript, transcription_wire
from elelem.speech.streamed_speech import Pieces
from elelem.stream import Chunk, TextDelta
from elelem.transport.faces import Pair
from elelem.vocabulary import AudioBlock, Part, ProviderId, TextBlock
from elelem.wire import EncodedRequest, FrameParser, Framing, ModelRequest
from elelem.wire.speech import TranscriptionRequest


class TranscriptionCall:
    """One streamed ``audio/transcriptions`` request as a
    :class:`~elelem.wire.Shape` for the driver; errors are classified by the
    provider's own shape."""

    def __init__(
        self,
        target: Target,
        audio: AudioBlock,
        *,
        language: str | None = None,
        prompt: str | None = None,
        now: datetime | None = None,
    ) -> None:
        wire = transcription_wire(target)
        self.transcription = TranscriptionRequest(target.model, audio, language, prompt, True)
        """The request as the wire takes it."""
        self._encoded = wire.encode(self.transcription)
        self._wire = wire
        self.name = "openai_transcription"
        self.framing: Framing = "sse"
        self.target = target
        self.request = ModelRequest(model=target.model, messages=(), now=now)
        """The neutral request the driver is given (the model, the time)."""
        self._shape = target.shape
        self.parser = wire.parser(target.provider, target.model)
        """The parser of the latest attempt (a retry starts a new one)."""

    def encode_request(
        self, request: ModelRequest, *, provider: ProviderId, stream: bool = True
    ) -> EncodedRequest:
        """The multipart ``audio/transcriptions`` upload, whatever the neutral request."""
        return self._encoded

    def new_parser(self, provider: ProviderId, request: ModelRequest | None = None) -> FrameParser:
        """A new parser of the wire, kept as :attr:`parser` (one per attempt)."""
        self.parser = self._wire.parser(provider, self.target.model)
        return self.parser

    def parse_response(
        self, body: bytes, provider: ProviderId, request: ModelRequest | None = None
    ) -> list[Chunk]:
        """The chunks of a whole JSON transcript: its text at once, then the end."""
        # A JSON answer (a Whisper model, a server that does not stream):
        # the whole transcript at once.
        self.parser = self._wire.parser(provider, self.target.model)
        return self.parser.answer(body)

    def classify_error(self, status: int, headers: Mapping[str, str], body: bytes) -> StreamError:
        """A typed error, classified by the provider's chat shape."""
        return self._shape.classify_error(status, headers, body)


class TranscriptReader(Pieces[str, Transcript]):
    """A streamed transcription, read once through either face: the text
    of each delta, and the whole
    :class:`~elelem.speech.endpoints.Transcript` at the end."""

    def __init__(self, stream: Any, call: TranscriptionCall) -> None:
        self.stream = stream
        self.call = call
        self._unknown: list[Part] = []

    def took(self, pair: Pair) -> str | None:
        """Keep what ``pair`` committed beside the text; the text it adds, or None."""
        chunk, committed = pair
        self._unknown.extend(part for part in committed if not isinstance(part, TextBlock))
        return chunk.text if isinstance(chunk, TextDelta) else None

    def result(self) -> Transcript:
        """The whole transcript of a stream read to its end (no I/O)."""
        assembled = self.stream.result()
        call, target = self.call, self.call.target
        done = call.parser.done or {}
        text = done.get("text")
        usage = done.get("usage")
        where = f"{target.provider}:{target.model}"
        if isinstance(usage, dict) and usage.get("type", "tokens") != "tokens":
            cost = Cost(
                None, unknown=(f"{where}: usage of type {usage.get('type')!r} is not priced",)
            )
        else:
            cost = price(
                target.provider,
                target.model,
                assembled.usage,
                api_url=None if target.provider in PROVIDER_IDS else target.endpoint.base_url,
                at=call.request.now,
                audio_input=call.parser.audio_tokens,
            )
        return Transcript(
            text if isinstance(text, str) else "",
            usage,
            done,
            cost,
            tuple(self._unknown),
            self.stream.request_id,
        )


__all__ = ["TranscriptReader", "TranscriptionCall"]
