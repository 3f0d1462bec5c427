"""OpenAI's speech to text: ``POST /audio/transcriptions``, sans-IO.

The request is a multipart upload (``file``, ``model``, ``language``,
``prompt``, ``response_format`` json, and ``stream`` ``true`` when streamed).
Streamed (``gpt-4o-transcribe``, ``gpt-4o-mini-transcribe`` and newer), the
answer is server-sent events, each a JSON object: ``{"type":
"transcript.text.delta", "delta": TEXT, "logprobs"?}`` for each piece of
text and ``{"type": "transcript.text.done", "text": WHOLE, "logprobs"?,
"usage"?}`` last, whose usage is ``{"type": "tokens", "input_tokens",
"input_token_details": {"text_tokens", "audio_tokens"}, "output_tokens",
"total_tokens"}`` or ``{"type": "duration", "seconds"}``.  The events go
through the one SSE decoder; a stream that ends without its done event is
incomplete.

Whisper models do not stream (OpenAI ignores ``stream`` for ``whisper-1``,
Groq's Whisper has no streamed form): they are asked without ``stream`` and
their JSON answer is taken whole, as one piece of text and the end.  A
server that answers JSON to a streamed request is read the same way.

:class:`TranscriptionParser` is sans-IO (frames in, chunks out): the text
is one ``text`` block whose deltas reach the caller as they arrive; the
token usage is a ``usage`` chunk; an event of another type is kept whole as
an unknown block; an ``error`` event is the provider's typed error; a
malformed event a :class:`~elelem.errors.MalformedStreamError` raised after
the text before it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from elelem.errors import UnsupportedError
from elelem.shapes.multipart import multipart
from elelem.shapes.openai_responses.speech import (
    AudioEvents,
    counts,
    malformed,
    provider_error,
    sse_event,
)
from elelem.stream import BlockEnd, BlockStart, Chunk, Finish, TextDelta, UsageUpdate
from elelem.vocabulary import BytesSource, ProviderId, Usage
from elelem.vocabulary.audio import AUDIO_FORMATS
from elelem.vocabulary.json import JSONValue
from elelem.wire import EncodedRequest
from elelem.wire.speech import TranscriptionRequest, TranscriptionWire

DELTA = "transcript.text.delta"
DONE = "transcript.text.done"
WHAT = "transcription"

_TOKEN_FIELDS = ("input_tokens", "output_tokens", "total_tokens")
_DETAIL_FIELDS = ("text_tokens", "audio_tokens")
_TEXT = 0


def streams(model: str) -> bool:
    """Whether ``model`` streams its transcripts (Whisper models do not)."""
    return not model.lower().startswith("whisper")


def encode_transcription(request: TranscriptionRequest) -> EncodedRequest:
    """The multipart ``audio/transcriptions`` upload of ``request`` (its audio
    must be bytes).  Asked to stream, the request takes server-sent events,
    and asks for them of a model that streams (a Whisper model answers JSON,
    read whole)."""
    audio = request.audio
    source = audio.source
    if not isinstance(source, BytesSource):
        raise UnsupportedError("a transcription uploads the audio's bytes: give audio of bytes")
    fields = {"model": request.model, "response_format": "json"}
    if request.language is not None:
        fields["language"] = request.language
    if request.prompt is not None:
        fields["prompt"] = request.prompt
    if request.stream and streams(request.model):
        fields["stream"] = "true"
    name = audio.filename or f"audio.{AUDIO_FORMATS.get(audio.media_type or '', 'bin')}"
    content, content_type = multipart(
        fields, "file", name, source.blob.data, audio.media_type or "application/octet-stream"
    )
    headers = {"content-type": content_type}
    if request.stream:
        headers["accept"] = "text/event-stream"
    path = "/audio/transcriptions"
    return EncodedRequest(path, {}, headers, stream=request.stream, content=content)


class TranscriptionParser(AudioEvents):
    """One streamed transcription answer, sans-IO, on the parser skeleton:
    frames in, chunks out (see the module docs).  :attr:`done` is the last
    event (or the JSON answer) as received, once it came."""

    what: ClassVar[str] = WHAT

    def __init__(self, provider: ProviderId, model: str) -> None:
        super().__init__(provider, model)
        self.done: dict[str, JSONValue] | None = None
        self.audio_tokens = 0
        """How many of the input tokens were audio (from the usage's details)."""
        self._open = False

    def message(self, event: str, data: str | bytes) -> Sequence[Chunk]:
        """One event, through the skeleton."""
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        return super().message(event, text)

    def event(self, obj: dict[str, Any], event: str) -> Sequence[Chunk]:
        """Apply one event: more text, the end with the whole text and its
        usage, the provider's error, or an event nobody modelled, kept whole."""
        kind, text = obj.get("type", event), self._data
        if kind == DELTA:
            delta = obj.get("delta")
            if not isinstance(delta, str):
                raise malformed(WHAT, f"sent a {DELTA} whose delta is not text", text)
            return self._text(delta)
        if kind == DONE:
            return self.whole(obj, text)
        if kind == "error":
            raise provider_error(obj)
        return self.unknown(obj)

    def answer(self, body: bytes) -> list[Chunk]:
        """The chunks of a whole JSON answer (a Whisper model, a server that
        does not stream): the whole transcript at once, then the end."""
        text = body.decode("utf-8", "replace")
        obj, _ = sse_event(WHAT, DONE, text)
        return [*self.open(200, {}), *self.whole(obj, text)]

    def whole(self, obj: dict[str, JSONValue], data: str) -> list[Chunk]:
        """The done event, or a whole JSON answer: its text (the deltas'
        block closed, or the whole text as one piece), its usage, the end."""
        whole = obj.get("text")
        if not isinstance(whole, str):
            raise malformed(WHAT, f"sent a {DONE} without its text", data)
        out = [] if self._open else self._text(whole)
        out.append(BlockEnd(_TEXT))
        usage = obj.get("usage")
        if isinstance(usage, dict) and usage.get("type", "tokens") == "tokens":
            found = counts(WHAT, DONE, usage, _TOKEN_FIELDS, data)
            details = usage.get("input_token_details")
            if details is not None:
                self.audio_tokens = counts(WHAT, DONE, details, _DETAIL_FIELDS, data)[
                    "audio_tokens"
                ]
            usage_value = Usage(
                input=found["input_tokens"], output=found["output_tokens"], raw=usage
            )
            out.append(UsageUpdate(usage_value))
        elif usage is not None and not isinstance(usage, dict):
            raise malformed(WHAT, f"{DONE} holds usage that is not an object", data)
        self.done = obj
        self.finished = True
        out.append(Finish("stop"))
        return out

    def _text(self, delta: str) -> list[Chunk]:
        out: list[Chunk] = []
        if not self._open:
            self._open = True
            out.append(BlockStart(_TEXT, "text"))
        if delta:
            out.append(TextDelta(_TEXT, delta))
        return out


TRANSCRIPTION = TranscriptionWire(encode_transcription, TranscriptionParser)
"""How OpenAI's wire transcribes."""

__all__ = [
    "DELTA",
    "DONE",
    "TRANSCRIPTION",
    "TranscriptionParser",
    "encode_transcription",
    "streams",
]
