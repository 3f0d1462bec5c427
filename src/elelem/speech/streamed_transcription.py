"""Streamed speech to text: the transcript's text as the model writes it.

OpenAI's ``POST /audio/transcriptions`` with the multipart field ``stream``
``true`` (``gpt-4o-transcribe``, ``gpt-4o-mini-transcribe`` and newer)
answers server-sent events, each a JSON object: ``{"type":
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
token usage is a ``usage`` chunk, priced with the audio tokens at the
model's audio rate; an event of another type is kept whole as an unknown
block; an ``error`` event is the provider's typed error; a malformed event a
:class:`~elelem.errors.MalformedStreamError` raised after the text before
it.  :class:`TranscriptionCall` is the request as a shape for the one
driver (keys, retries before content, typed errors, redaction, telemetry
operation ``transcribe``); :class:`TranscriptStream` and
:class:`SyncTranscriptStream` iterate the text over the same core.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from elelem.errors import StreamError
from elelem.providers import Target
from elelem.providers.pricing import PROVIDER_IDS, Cost, price
from elelem.speech.endpoints import Transcript, upload
from elelem.speech.streamed_speech import (
    AsyncPieces,
    Pieces,
    SyncPieces,
    counts,
    malformed,
    provider_error,
    sse_event,
)
from elelem.stream import (
    BlockEnd,
    BlockStart,
    Chunk,
    Finish,
    ResponseStart,
    TextDelta,
    UsageUpdate,
)
from elelem.transport import ResponseStream, SyncResponseStream
from elelem.transport.stream_core import StreamCore
from elelem.vocabulary import AudioBlock, Part, ProviderId, TextBlock, Usage
from elelem.vocabulary.json import JSONValue
from elelem.wire import EncodedRequest, FrameParser, Framing, ModelRequest

DELTA = "transcript.text.delta"
DONE = "transcript.text.done"
WHAT = "transcription"

_TOKEN_FIELDS = ("input_tokens", "output_tokens", "total_tokens")
_DETAIL_FIELDS = ("text_tokens", "audio_tokens")
_TEXT = 0


def streams(model: str) -> bool:
    """Whether ``model`` streams its transcripts (Whisper models do not)."""
    return not model.lower().startswith("whisper")


class TranscriptionParser:
    """One streamed transcription answer, sans-IO: frames in, chunks out
    (see the module docs).  :attr:`done` is the last event (or the JSON
    answer) as received, once it came."""

    def __init__(self, provider: ProviderId, model: str) -> None:
        self.provider = provider
        self.model = model
        self.done: dict[str, JSONValue] | None = None
        self.audio_tokens = 0
        """How many of the input tokens were audio (from the usage's details)."""
        self._open = False
        self._blocks = 0

    def open(self, status: int, headers: Mapping[str, str]) -> Sequence[Chunk]:
        """The answer's headers arrived."""
        return [ResponseStart(provider=self.provider, model=self.model)]

    def message(self, event: str, data: str | bytes) -> Sequence[Chunk]:
        """One event."""
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        obj, kind = sse_event(WHAT, event, text)
        if kind == DELTA:
            delta = obj.get("delta")
            if not isinstance(delta, str):
                raise malformed(WHAT, f"sent a {DELTA} whose delta is not text", text)
            return self._text(delta)
        if kind == DONE:
            return self.whole(obj, text)
        if kind == "error":
            raise provider_error(obj)
        # An event this parser does not know is kept whole, in its place.
        self._blocks += 1
        return [BlockStart(self._blocks, "unknown", raw=obj), BlockEnd(self._blocks)]

    def eof(self) -> Sequence[Chunk]:
        """The body ended; the answer ends with its done event, so nothing is added."""
        return []

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
        self.stream = streams(target.model)
        content, content_type = upload(target, audio, language, prompt, stream=self.stream)
        self.name = "openai_transcription"
        self.framing: Framing = "sse"
        self.target = target
        self.request = ModelRequest(model=target.model, messages=(), now=now)
        """The neutral request the driver is given (the model, the time)."""
        headers = {"content-type": content_type, "accept": "text/event-stream"}
        self._encoded = EncodedRequest(
            "/audio/transcriptions", {}, headers, stream=True, content=content
        )
        self._shape = target.shape
        self.parser = TranscriptionParser(target.provider, target.model)
        """The parser of the latest attempt (a retry starts a new one)."""

    def encode_request(
        self, request: ModelRequest, *, provider: ProviderId, stream: bool = True
    ) -> EncodedRequest:
        return self._encoded

    def new_parser(self, provider: ProviderId, request: ModelRequest | None = None) -> FrameParser:
        self.parser = TranscriptionParser(provider, self.target.model)
        return self.parser

    def parse_response(
        self, body: bytes, provider: ProviderId, request: ModelRequest | None = None
    ) -> list[Chunk]:
        # A JSON answer (a Whisper model, a server that does not stream):
        # the whole transcript at once.
        self.parser = TranscriptionParser(provider, self.target.model)
        text = body.decode("utf-8", "replace")
        obj, _ = sse_event(WHAT, DONE, text)
        return [*self.parser.open(200, {}), *self.parser.whole(obj, text)]

    def classify_error(self, status: int, headers: Mapping[str, str], body: bytes) -> StreamError:
        return self._shape.classify_error(status, headers, body)


class _TranscriptReader(Pieces[str, Transcript]):
    """What both transcript streams share: the text of each delta, and the
    whole :class:`~elelem.speech.endpoints.Transcript` at the end."""

    def __init__(self, stream: StreamCore, call: TranscriptionCall) -> None:
        self.stream = stream
        """The driver's stream underneath (status, headers, retries, …)."""
        self.call = call
        self._unknown: list[Part] = []

    def take(self, pair: tuple[Chunk, tuple[Part, ...]]) -> str | None:
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


class TranscriptStream(_TranscriptReader, AsyncPieces[str, Transcript]):
    """The text of a streamed transcription, piece by piece: an async
    iterator of ``str`` (``async with`` it); :meth:`final` reads the rest
    and returns the :class:`~elelem.speech.endpoints.Transcript`."""

    stream: ResponseStream


class SyncTranscriptStream(_TranscriptReader, SyncPieces[str, Transcript]):
    """:class:`TranscriptStream`, blocking: an iterator of ``str``."""

    stream: SyncResponseStream


__all__ = [
    "SyncTranscriptStream",
    "TranscriptStream",
    "TranscriptionCall",
    "TranscriptionParser",
    "streams",
]
