"""Speech and transcription as kinds of exchange, types only: text to
speech, and speech to text.

A shape package whose wire has the audio endpoints holds a
:class:`SpeechWire` as ``speech.SPEECH`` and a :class:`TranscriptionWire` as
``transcription.TRANSCRIPTION``, and its ``SHAPE`` carries them (``speech``,
``transcription``; None for a wire without them).  The request is a
:class:`SpeechRequest` or a :class:`TranscriptionRequest`; the answer is read
by the wire's parser into the chunks every answer gives (an ``audio`` block
per piece of audio, or the transcript as a ``text`` block, then the usage
and the end), through the one driver (:mod:`elelem.speech`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import msgspec

from elelem.stream import Chunk
from elelem.vocabulary import AudioBlock, ProviderId
from elelem.vocabulary.json import JSONValue
from elelem.wire import EncodedRequest, FrameParser

STREAM_FORMATS = ("audio", "sse")
"""The ``stream_format`` values a :class:`SpeechRequest` may ask for."""


class SpeechRequest(msgspec.Struct, frozen=True):
    """Text to speak: ``text`` by ``model`` in ``voice``, as audio of
    ``format`` (``mp3``, ``wav``, ``opus``, ``aac``, ``flac``, ``pcm``),
    following ``instructions`` at ``speed``; ``stream_format`` ``audio`` or
    ``sse`` asks for a streamed answer, None for the whole audio at once."""

    model: str
    text: str
    voice: str = "alloy"
    format: str = "mp3"
    instructions: str | None = None
    speed: float | None = None
    stream_format: str | None = None


class TranscriptionRequest(msgspec.Struct, frozen=True):
    """Speech to transcribe: ``audio`` (of bytes) by ``model``, in
    ``language``, guided by ``prompt``; ``stream`` asks for the text as it
    is written (a model that cannot stream answers whole)."""

    model: str
    audio: AudioBlock
    language: str | None = None
    prompt: str | None = None
    stream: bool = False


class TranscriptionParser(FrameParser, Protocol):
    """A transcription answer's parser: a :class:`~elelem.wire.FrameParser`
    that also reads a whole JSON answer (:meth:`answer`) and keeps what the
    answer's last event said (:attr:`done`) and how many of its input tokens
    were audio (:attr:`audio_tokens`, for the price)."""

    done: dict[str, JSONValue] | None
    audio_tokens: int

    def answer(self, body: bytes) -> list[Chunk]:
        """The chunks of a whole JSON answer (a model that does not stream)."""
        ...


@dataclass(frozen=True)
class SpeechWire:
    """How one wire speaks: ``encode`` a request (a
    :class:`~elelem.errors.ConfigError` for a format it does not know), and
    a ``parser`` of a streamed answer for a provider and the request."""

    encode: Callable[[SpeechRequest], EncodedRequest]
    parser: Callable[[ProviderId, SpeechRequest], FrameParser]


@dataclass(frozen=True)
class TranscriptionWire:
    """How one wire transcribes: ``encode`` a request (its multipart
    upload), and a ``parser`` of its answer for a provider and a model."""

    encode: Callable[[TranscriptionRequest], EncodedRequest]
    parser: Callable[[ProviderId, str], TranscriptionParser]


__all__ = [
    "STREAM_FORMATS",
    "SpeechRequest",
    "SpeechWire",
    "TranscriptionParser",
    "TranscriptionRequest",
    "TranscriptionWire",
]
