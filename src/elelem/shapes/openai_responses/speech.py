"""OpenAI's text to speech: ``POST /audio/speech``, sans-IO.

The request (``model``, ``input``, ``voice``, ``response_format``,
``instructions``, ``speed``, and ``stream_format`` when streamed) answers
with the audio's bytes.  Streamed, the answer takes one of two forms:

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
:class:`~elelem.errors.MalformedStreamError`.  What the transcription
endpoint's events share with these (their decoding, their errors, their
counts) is here too.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import msgspec

from elelem.errors import ConfigError, LimitExceededError, MalformedStreamError, StreamError
from elelem.shapes.openai_responses.errors import error_from_event
from elelem.shapes.skeleton import ParserSkeleton
from elelem.stream import BlockEnd, BlockStart, Chunk, Finish, ResponseStart, UsageUpdate, assembler
from elelem.vocabulary import ProviderId, Usage
from elelem.vocabulary.audio import MEDIA_TYPES_BY_FORMAT
from elelem.vocabulary.json import JSONValue, decode_json
from elelem.wire import EncodedRequest
from elelem.wire.speech import STREAM_FORMATS, SpeechRequest, SpeechWire

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


def media_type(request: SpeechRequest) -> str:
    """The media type of the audio ``request`` asks for; a
    :class:`~elelem.errors.ConfigError` for a format OpenAI has not."""
    found = MEDIA_TYPES_BY_FORMAT.get(request.format)
    if found is None:
        raise ConfigError(f"unknown speech format {request.format!r}")
    return found


def encode_speech(request: SpeechRequest) -> EncodedRequest:
    """The ``audio/speech`` request of ``request``, streamed when it asks for a
    ``stream_format`` (SSE then accepted as ``text/event-stream``)."""
    if request.stream_format is not None and request.stream_format not in STREAM_FORMATS:
        raise ConfigError(
            f"unknown speech stream_format {request.stream_format!r} (known: audio, sse)"
        )
    media_type(request)
    body: dict[str, JSONValue] = {
        "model": request.model,
        "input": request.text,
        "voice": request.voice,
        "response_format": request.format,
    }
    if request.instructions is not None:
        body["instructions"] = request.instructions
    if request.speed is not None:
        body["speed"] = request.speed
    if request.stream_format is None:
        return EncodedRequest("/audio/speech", body, {"accept": "*/*"}, stream=False)
    sse = request.stream_format == "sse"
    if sse:
        body["stream_format"] = "sse"
    accept = "text/event-stream" if sse else "*/*"
    return EncodedRequest("/audio/speech", body, {"accept": accept}, stream=True)


class AudioEvents(ParserSkeleton):
    """What the parsers of the audio endpoints' answers share, on the
    parser skeleton: the response starts with the headers, each event is
    decoded by :func:`sse_event` (its text kept for the errors that name
    it), and an event nobody modelled is kept whole as an unknown block."""

    def __init__(self, provider: ProviderId, model: str) -> None:
        super().__init__(provider)
        self.model = model
        self._blocks = 0
        self._unknown = 0
        self._data = ""

    def open(self, status: int, headers: Mapping[str, str]) -> Sequence[Chunk]:
        """The answer's headers arrived: the response starts."""
        self.started = True
        return [ResponseStart(provider=self.provider, model=self.model)]

    def decode(self, event: str, data: str) -> dict[str, Any]:
        """The event's JSON object, with a type (see :func:`sse_event`)."""
        self._data = data
        return sse_event(self.what, event, data)[0]

    def unknown(self, obj: dict[str, Any]) -> list[Chunk]:
        """An event this parser does not know, kept whole in its place.

        A streamed speech answer may start far more blocks than the
        assembler's bound (a block per piece of audio: its ``max_blocks`` is
        its own), so these count against ``Assembler.max_blocks`` here: an
        endless run of tiny unknown events still stops there."""
        self._unknown += 1
        if self._unknown > (most := assembler.MAX_BLOCKS):
            raise LimitExceededError(
                f"the response passed {most} blocks", limit="Assembler.max_blocks", value=most
            )
        self._blocks += 1
        return [BlockStart(self._blocks, "unknown", raw=obj), BlockEnd(self._blocks)]


class SpeechParser(AudioEvents):
    """One streamed speech answer, sans-IO, on the parser skeleton: frames
    in, chunks out (see the module docs).  ``sse`` says which form the
    answer takes; ``media_type`` is the audio's (from the
    ``response_format`` asked).  In the raw form each read is one frame of
    bytes, and the body's end ends the audio."""

    what: ClassVar[str] = "speech"

    def __init__(self, provider: ProviderId, model: str, media_type: str, *, sse: bool) -> None:
        super().__init__(provider, model)
        self.media_type = media_type
        self.sse = sse

    def message(self, event: str, data: str | bytes) -> Sequence[Chunk]:
        """One read of the audio (raw form), or one event (SSE form) through
        the skeleton."""
        if isinstance(data, bytes):
            self.frames += 1
            return self.piece(data) if data else []
        return super().message(event, data)

    def event(self, obj: dict[str, Any], event: str) -> Sequence[Chunk]:
        """Apply one event: a piece of audio, the end with its usage, the
        provider's error, or an event nobody modelled, kept whole."""
        kind, data = obj.get("type", event), self._data
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
            self.finished = True
            return out
        if kind == "error":
            raise provider_error(obj)
        return self.unknown(obj)

    def at_eof(self) -> Sequence[Chunk]:
        """The body ended: the end of the audio (raw form); an SSE answer
        that ends without ``speech.audio.done`` is incomplete."""
        return [] if self.sse else [Finish("stop")]

    def piece(self, data: bytes) -> list[Chunk]:
        """One piece of audio as an ``audio`` block, whole."""
        return self._audio(base64.b64encode(data).decode("ascii"))

    def _audio(self, encoded: str) -> list[Chunk]:
        self._blocks += 1
        key = self._blocks
        raw: dict[str, JSONValue] = {
            "type": "audio",
            "source": {"kind": "bytes", "blob": {"base64": encoded}},
            "media_type": self.media_type,
        }
        return [BlockStart(key, "audio", raw=raw), BlockEnd(key)]


def new_parser(provider: ProviderId, request: SpeechRequest) -> SpeechParser:
    """The parser of the streamed answer to ``request``."""
    return SpeechParser(
        provider, request.model, media_type(request), sse=request.stream_format == "sse"
    )


SPEECH = SpeechWire(encode_speech, new_parser)
"""How OpenAI's wire speaks."""

__all__ = [
    "DELTA",
    "DONE",
    "SPEECH",
    "AudioEvents",
    "SpeechParser",
    "counts",
    "encode_speech",
    "malformed",
    "media_type",
    "new_parser",
    "provider_error",
    "sse_event",
]
