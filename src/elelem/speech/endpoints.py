"""The dedicated speech endpoints: text to speech, speech to text.

OpenAI's ``POST /audio/speech`` (``model``, ``input``, ``voice``,
``response_format``, ``instructions``, ``speed``) answers with the audio's
bytes; ``POST /audio/transcriptions`` takes the audio as a multipart upload
(``file``, ``model``, ``language``, ``prompt``, ``response_format`` json)
and answers ``{"text", "usage"?}``.  Servers that speak OpenAI's wire have
the same endpoints (Groq's Whisper, a local server), so every provider on an
OpenAI shape can be asked.  Each exchange is one flow (:mod:`elelem.transport.one_shot`)
over the one driver: keys, typed errors and visible retries as everywhere.
"""

from __future__ import annotations

from typing import Any

import msgspec

from elelem.errors import ConfigError, UnsupportedError
from elelem.providers import Target
from elelem.providers.pricing import Cost
from elelem.reading import ReadRefused, read_file
from elelem.transport.one_shot import Call, Flow, multipart
from elelem.vocabulary import AudioBlock, BytesSource, Part
from elelem.vocabulary.audio import AUDIO_FORMATS, MEDIA_TYPES_BY_FORMAT
from elelem.vocabulary.json import JSONValue, decode_json
from elelem.wire import EncodedRequest

SPEECH_SHAPES = frozenset({"openai_responses", "openai_chat"})
"""The shapes whose servers have OpenAI's audio endpoints."""


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


def _check(target: Target) -> None:
    if target.spec.shape not in SPEECH_SHAPES:
        raise UnsupportedError(f"provider {target.provider} has no speech endpoint elelem speaks")


def speech_body(
    target: Target,
    text: str,
    voice: str,
    format: str,
    instructions: str | None,
    speed: float | None,
) -> tuple[dict[str, JSONValue], str]:
    """The JSON body of an ``audio/speech`` request and the media type of
    the audio it asks for (the whole answer's and the streamed one's)."""
    _check(target)
    media_type = MEDIA_TYPES_BY_FORMAT.get(format)
    if media_type is None:
        raise ConfigError(f"unknown speech format {format!r}")
    body: dict[str, JSONValue] = {
        "model": target.model,
        "input": text,
        "voice": voice,
        "response_format": format,
    }
    if instructions is not None:
        body["instructions"] = instructions
    if speed is not None:
        body["speed"] = speed
    return body, media_type


def speak(
    target: Target,
    text: str,
    *,
    voice: str = "alloy",
    format: str = "mp3",
    instructions: str | None = None,
    speed: float | None = None,
) -> Flow[AudioBlock]:
    """``text`` spoken by ``target``'s model in ``voice``, as an audio block
    of ``format`` (``mp3``, ``wav``, ``opus``, ``aac``, ``flac``, ``pcm``)."""
    body, media_type = speech_body(target, text, voice, format, instructions, speed)
    encoded = EncodedRequest("/audio/speech", body, {"accept": "*/*"}, stream=False)
    data = yield Call(target.shape, encoded, bytes, "speak")
    return AudioBlock.from_bytes(data, media_type, transcript=text)


def _transcript(body: bytes) -> Transcript:
    data = decode_json(body)
    if not isinstance(data, dict) or not isinstance(data.get("text"), str):
        raise ValueError("the answer holds no text")
    return Transcript(data["text"], data.get("usage"), data)


def upload(
    target: Target,
    audio: AudioBlock,
    language: str | None,
    prompt: str | None,
    stream: bool = False,
) -> tuple[bytes, str]:
    """The multipart body of an ``audio/transcriptions`` request and its
    content type (the whole answer's and the streamed one's)."""
    _check(target)
    source = audio.source
    if not isinstance(source, BytesSource):
        raise UnsupportedError("a transcription uploads the audio's bytes: give audio of bytes")
    fields = {"model": target.model, "response_format": "json"}
    if language is not None:
        fields["language"] = language
    if prompt is not None:
        fields["prompt"] = prompt
    if stream:
        fields["stream"] = "true"
    name = audio.filename or f"audio.{AUDIO_FORMATS.get(audio.media_type or '', 'bin')}"
    return multipart(
        fields, "file", name, source.blob.data, audio.media_type or "application/octet-stream"
    )


def transcribe(
    target: Target,
    audio: AudioBlock,
    *,
    language: str | None = None,
    prompt: str | None = None,
) -> Flow[Transcript]:
    """What ``audio`` (bytes) says, transcribed by ``target``'s model."""
    content, content_type = upload(target, audio, language, prompt)
    encoded = EncodedRequest(
        "/audio/transcriptions", {}, {"content-type": content_type}, stream=False, content=content
    )
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
    "SPEECH_SHAPES",
    "Transcript",
    "audio_of",
    "speak",
    "speech_body",
    "transcribe",
    "upload",
]
