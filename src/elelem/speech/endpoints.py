"""The dedicated speech endpoints: text to speech, speech to text.

OpenAI's ``POST /audio/speech`` (``model``, ``input``, ``voice``,
``response_format``, ``instructions``, ``speed``) answers with the audio's
bytes; ``POST /audio/transcriptions`` takes the audio as a multipart upload
(``file``, ``model``, ``language``, ``prompt``, ``response_format`` json)
and answers ``{"text", "usage"?}``.  Servers that speak OpenAI's wire have
the same endpoints (Groq's Whisper, a local server), so every provider on an
OpenAI shape can be asked: each wire's requests and answers are its shape
package's ``speech.py`` and ``transcription.py`` (:mod:`elelem.wire.speech`).
Each exchange is one one-shot exchange (:mod:`elelem.transport.one_shot`)
over the one driver: keys, typed errors and visible retries as everywhere.
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from elelem.errors import UnsupportedError
from elelem.providers import Target
from elelem.providers.pricing import Cost
from elelem.reading import ReadRefused, read_file
from elelem.transport.one_shot import Call, Exchange
from elelem.vocabulary import AudioBlock, Part
from elelem.vocabulary.audio import MEDIA_TYPES_BY_FORMAT
from elelem.vocabulary.json import JSONValue, decode_json
from elelem.wire.speech import SpeechRequest, SpeechWire, TranscriptionRequest, TranscriptionWire


class Transcript(msgspec.Struct, frozen=True):
    """What a transcription endpoint heard: ``text``, and the provider's
    ``usage`` and every other field of its answer (``raw``) as it gave them.

    A streamed transcription (:meth:`elelem.Client.transcribe_stream`) also
    gives its ``cost`` (unknown saying why where it cannot be priced), the
    events the parser did not know (``unknown``, kept whole) and the
    provider's ``request_id``."""

    text: str
    usage: JSONValue = None
    raw: JSONValue = None
    cost: Cost | None = None
    unknown: tuple[Part, ...] = ()
    request_id: str | None = None


W = TypeVar("W", SpeechWire, TranscriptionWire)


def _wire(target: Target, kind: str, wire_type: type[W]) -> W:
    wire = getattr(target.shape, kind, None)
    if not isinstance(wire, wire_type):
        raise UnsupportedError(f"provider {target.provider} has no speech endpoint elelem speaks")
    return wire


def speech_wire(target: Target) -> SpeechWire:
    """How ``target``'s wire speaks; an
    :class:`~elelem.errors.UnsupportedError` for a wire without the endpoint."""
    return _wire(target, "speech", SpeechWire)


def transcription_wire(target: Target) -> TranscriptionWire:
    """How ``target``'s wire transcribes; an
    :class:`~elelem.errors.UnsupportedError` for a wire without the endpoint."""
    return _wire(target, "transcription", TranscriptionWire)


def speak(target: Target, request: SpeechRequest) -> Exchange[AudioBlock]:
    """``request``'s text spoken by ``target``'s model, as an audio block of
    its ``format`` (``mp3``, ``wav``, ``opus``, ``aac``, ``flac``, ``pcm``)."""
    encoded = speech_wire(target).encode(request)
    data = yield Call(target.shape, encoded, bytes, "speak")
    media_type = MEDIA_TYPES_BY_FORMAT[request.format]
    return AudioBlock.from_bytes(data, media_type, transcript=request.text)


def _transcript(body: bytes) -> Transcript:
    data = decode_json(body)
    if not isinstance(data, dict) or not isinstance(data.get("text"), str):
        raise ValueError("the answer holds no text")
    return Transcript(data["text"], data.get("usage"), data)


def transcribe(
    target: Target,
    audio: AudioBlock,
    *,
    language: str | None = None,
    prompt: str | None = None,
) -> Exchange[Transcript]:
    """What ``audio`` (bytes) says, transcribed by ``target``'s model."""
    request = TranscriptionRequest(target.model, audio, language, prompt)
    encoded = transcription_wire(target).encode(request)
    result: Transcript = yield Call(target.shape, encoded, _transcript, "transcribe")
    return result


AUDIO_LIMIT = 512 * 1024 * 1024
"""The most bytes of an audio file :func:`audio_of` reads (as an attachment)."""


def audio_of(value: AudioBlock | bytes | str | Any) -> AudioBlock:
    """An audio block of ``value``: an :class:`AudioBlock`, its bytes, or a
    file path, read bounded (:func:`elelem.reading.read_file`): a FIFO or a
    device (``/dev/zero``) or a file past :data:`AUDIO_LIMIT` is a
    :class:`~elelem.reading.ReadRefused` naming the path, before it is read."""
    if isinstance(value, AudioBlock):
        return value
    if isinstance(value, bytes):
        return AudioBlock.from_bytes(value)
    from pathlib import Path

    path = Path(value)
    try:
        data = read_file(path, AUDIO_LIMIT)
    except ReadRefused as exc:
        raise ReadRefused(f"{path}: {exc}") from None
    return AudioBlock.from_bytes(data, filename=path.name)


__all__ = [
    "AUDIO_LIMIT",
    "Transcript",
    "audio_of",
    "speak",
    "speech_wire",
    "transcribe",
    "transcription_wire",
]
