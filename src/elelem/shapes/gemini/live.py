"""Gemini Live (``BidiGenerateContent`` over a WebSocket) as a live protocol, sans-IO.

Messages follow the Live API reference (https://ai.google.dev/api/live) and
the ``google-genai`` SDK's ``LiveClientMessage`` / ``LiveServerMessage``
types, which the tests validate every client message against.  The client
sends one ``setup`` first, then ``realtimeInput`` (audio at 16 kHz,
``audioStreamEnd``), ``clientContent`` (a user turn of text) and
``toolResponse``; the server sends ``setupComplete``, ``serverContent``
(``modelTurn`` parts: audio as ``inlineData`` at 24 kHz, text; the
``inputTranscription`` and ``outputTranscription`` pieces; ``interrupted``;
``turnComplete``), ``toolCall``, ``usageMetadata``, ``goAway`` and
``sessionResumptionUpdate``.

Gemini names no response and no item: the protocol numbers them (``turn-N``),
a response runs from its first content to ``turnComplete`` (``stop``), a
``toolCall`` (``tool-calls``: the model waits for the results, and what it
says next is the next response) or ``interrupted`` (the user cut in: the
server stopped generating; the audio is cut where the client says it stopped
playing, :class:`~elelem.wire.live.Interrupt`, which sends nothing on this
wire).  A top-level field no handler reads is an
:class:`~elelem.wire.live.UnknownEvent` of that field alone.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from elelem.errors import MalformedStreamError
from elelem.shapes.live_items import SpokenItem, websocket_base
from elelem.stream import (
    BlockEnd,
    BlockStart,
    Finish,
    ReasoningDelta,
    ResponseStart,
    TextDelta,
    ToolCallDelta,
    UsageUpdate,
)
from elelem.vocabulary import ProviderId, Usage
from elelem.wire.live import (
    INTERRUPTED,
    AudioOut,
    CommitAudio,
    GoAway,
    InputTranscript,
    Interrupt,
    LiveCommand,
    LiveOutput,
    LiveSettings,
    LiveWire,
    Resumption,
    SendAudio,
    SendText,
    SendToolResults,
    SessionOpened,
    TranscriptDelta,
    Truncated,
    UnknownEvent,
)

INPUT_RATE = 16_000
"""The rate of the audio the client sends (``audio/pcm;rate=16000``)."""

OUTPUT_RATE = 24_000
"""The rate of the audio the model speaks."""

PATH = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
"""The Live API's WebSocket path on the Gemini API's host (Vertex AI's is
:data:`VERTEX_PATH`)."""

VERTEX_PATH = "/ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent"
"""The Live API's WebSocket path on Vertex AI (the ``google-genai`` SDK's
default version there), where the model is a resource name."""

_decode = msgspec.json.Decoder()
_encode = msgspec.json.Encoder()


def _modality_count(details: object, modality: str) -> int:
    if not isinstance(details, list):
        return 0
    return sum(
        int(d.get("tokenCount") or 0)
        for d in details
        if isinstance(d, dict) and d.get("modality") == modality
    )


def live_usage(raw: dict[str, Any]) -> Usage:
    """Neutral usage of a Live ``usageMetadata``: cached prompt tokens in
    ``cache_read``, thoughts in ``reasoning``; the audio parts of the prompt
    and the response as the counters ``input_audio`` and ``output_audio``."""
    prompt = int(raw.get("promptTokenCount") or 0)
    cached = int(raw.get("cachedContentTokenCount") or 0)
    audio = {
        "input_audio": _modality_count(raw.get("promptTokensDetails"), "AUDIO"),
        "output_audio": _modality_count(raw.get("responseTokensDetails"), "AUDIO"),
        "cache_audio_read": _modality_count(raw.get("cacheTokensDetails"), "AUDIO"),
    }
    return Usage(
        input=max(prompt - cached, 0) + int(raw.get("toolUsePromptTokenCount") or 0),
        output=int(raw.get("responseTokenCount") or 0),
        cache_read=cached,
        reasoning=int(raw.get("thoughtsTokenCount") or 0),
        hosted={k: v for k, v in audio.items() if v},
        raw=raw,
    )


class GeminiLiveProtocol:
    """The Gemini Live wire as a :class:`~elelem.wire.live.LiveProtocol`."""

    name = "gemini_live"
    input_rate = INPUT_RATE
    output_rate = OUTPUT_RATE

    def __init__(
        self, provider: ProviderId, *, path: str = PATH, resource: str | None = None
    ) -> None:
        self.provider = provider
        self.path = path
        self.resource = resource  # Vertex AI: projects/…/publishers/google/models/…
        self.turns = 0
        self.current: str | None = None  # the response in progress (its item id too)
        self.spoken: SpokenItem | None = None
        self.text: str | None = None  # open text block kind: "text" or "reasoning"
        self.calls = 0
        self.usage: Usage | None = None

    # -- the client's side ------------------------------------------------------------

    def url(self, base_url: str, model: str) -> str:
        """The ``BidiGenerateContent`` WebSocket on the API's host."""
        return websocket_base(base_url) + self.path

    def open(self, settings: LiveSettings) -> Sequence[str]:
        """The ``setup`` message."""
        model = self.resource or settings.model
        if "/" not in model:
            model = f"models/{model}"
        config: dict[str, Any] = {"responseModalities": [settings.output.upper()]}
        if settings.voice:
            voice = {"prebuiltVoiceConfig": {"voiceName": settings.voice}}
            config["speechConfig"] = {"voiceConfig": voice}
        setup: dict[str, Any] = {"model": model, "generationConfig": config}
        if settings.instructions:
            setup["systemInstruction"] = {"parts": [{"text": settings.instructions}]}
        if settings.tools:
            declarations = [
                {"name": t.name, "description": t.description or "", "parameters": t.parameters}
                for t in settings.tools
            ]
            setup["tools"] = [{"functionDeclarations": declarations}]
        if settings.transcribe:
            setup["inputAudioTranscription"] = {}
        if settings.output == "audio":
            setup["outputAudioTranscription"] = {}
        setup["sessionResumption"] = {"handle": settings.resume} if settings.resume else {}
        return [self._frame({"setup": setup})]

    def send(self, command: LiveCommand) -> Sequence[str]:
        """The client messages of ``command``."""
        if isinstance(command, SendAudio):
            data = base64.b64encode(command.pcm).decode()
            blob = {"data": data, "mimeType": f"audio/pcm;rate={INPUT_RATE}"}
            return [self._frame({"realtimeInput": {"audio": blob}})]
        if isinstance(command, CommitAudio):
            return [self._frame({"realtimeInput": {"audioStreamEnd": True}})]
        if isinstance(command, SendText):
            turn = {"role": "user", "parts": [{"text": command.text}]}
            return [self._frame({"clientContent": {"turns": [turn], "turnComplete": True}})]
        if isinstance(command, SendToolResults):
            responses = [
                {
                    "id": r.call_id,
                    "name": r.name or "",
                    "response": {"error": r.content} if r.is_error else {"output": r.content},
                }
                for r in command.results
            ]
            return [self._frame({"toolResponse": {"functionResponses": responses}})]
        return self._interrupt(command)

    def _interrupt(self, command: Interrupt) -> list[str]:
        # The server stops by itself when it hears the user; what was heard
        # is the client's to say, and nothing goes on the wire.
        if self.spoken is not None and self.spoken.item_id == command.item_id:
            self.spoken.truncate(command.audio_end_ms, OUTPUT_RATE)
        return []

    @staticmethod
    def _frame(message: dict[str, Any]) -> str:
        return _encode.encode(message).decode()

    # -- the server's side ------------------------------------------------------------

    def receive(self, frame: str | bytes) -> Sequence[LiveOutput]:
        """What one server message means (the server sends JSON in binary frames)."""
        try:
            message = _decode.decode(frame)
        except msgspec.DecodeError as exc:
            raise MalformedStreamError(f"gemini live: a message that is not JSON: {exc}") from None
        if not isinstance(message, dict):
            raise MalformedStreamError("gemini live: a message that is not an object")
        out: list[LiveOutput] = []
        usage = message.get("usageMetadata")
        try:
            if isinstance(usage, dict):
                self.usage = live_usage(usage)
            for key, value in message.items():
                handler = _FIELDS.get(key)
                if handler is not None:
                    out.extend(handler(self, value))
                elif key != "usageMetadata":
                    out.append(UnknownEvent({key: value}))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise MalformedStreamError(
                f"gemini live: a message with a bad field ({type(exc).__name__}: {exc})"
            ) from None
        return out

    def _start(self, out: list[LiveOutput]) -> str:
        if self.current is None:
            self.turns += 1
            self.current = f"turn-{self.turns}"
            self.spoken, self.text, self.calls = SpokenItem(self.current), None, 0
            out.append(ResponseStart(self.current, None, self.provider))
        return self.current

    def _content(self, content: dict[str, Any]) -> Sequence[LiveOutput]:
        out: list[LiveOutput] = []
        heard = content.get("inputTranscription")
        if isinstance(heard, dict) and heard.get("text") is not None:
            out.append(InputTranscript(None, str(heard["text"]), bool(heard.get("finished"))))
        turn = content.get("modelTurn")
        if isinstance(turn, dict):
            for part in turn.get("parts") or ():
                self._part(part, out)
        said = content.get("outputTranscription")
        if isinstance(said, dict) and said.get("text") is not None:
            item = self._start(out)
            assert self.spoken is not None
            self.spoken.add_transcript(str(said["text"]))
            out.append(TranscriptDelta(item, str(said["text"])))
        if content.get("interrupted") and self.current is not None:
            # The server stopped: what was heard is what the client said it
            # played (Interrupt), else all that arrived.
            spoken = self.spoken
            if spoken is not None and spoken.audio:
                kept = spoken.received if spoken.cut is None else spoken.cut
                end = kept * 1000 // (2 * OUTPUT_RATE)
                out.append(Truncated(self.current, end, spoken.heard()))
            out.extend(self._finish(Finish(INTERRUPTED, "interrupted")))
        elif content.get("turnComplete") and self.current is not None:
            out.extend(self._finish(Finish("stop", "turnComplete")))
        known = {"inputTranscription", "modelTurn", "outputTranscription", "interrupted",
                 "turnComplete", "generationComplete", "turnCompleteReason", "waitingForInput"}  # fmt: skip
        rest = {k: v for k, v in content.items() if k not in known}
        if rest:
            out.append(UnknownEvent({"serverContent": rest}))
        return out

    def _part(self, part: dict[str, Any], out: list[LiveOutput]) -> None:
        item = self._start(out)
        assert self.spoken is not None
        inline = part.get("inlineData")
        if isinstance(inline, dict) and str(inline.get("mimeType", "")).startswith("audio/"):
            data = inline["data"]
            if not isinstance(data, str):
                raise TypeError("inlineData.data is not base64 text")
            self.spoken.add_audio(data)
            out.append(AudioOut(item, data))
            return
        if isinstance(part.get("text"), str):
            kind = "reasoning" if part.get("thought") else "text"
            key = f"{item}:{kind}"
            if self.text != kind:
                self._close_text(out)
                self.text = kind
                out.append(BlockStart(key, kind))
            delta = ReasoningDelta if kind == "reasoning" else TextDelta
            out.append(delta(key, part["text"]))
            return
        self._close_text(out)
        key = f"{item}:part-{len(out)}"
        out.extend(
            (BlockStart(key, "unknown", raw={"type": "gemini-live-part", **part}), BlockEnd(key))
        )

    def _close_text(self, out: list[LiveOutput]) -> None:
        if self.text is not None and self.current is not None:
            out.append(BlockEnd(f"{self.current}:{self.text}"))
            self.text = None

    def _tool_call(self, call: dict[str, Any]) -> Sequence[LiveOutput]:
        out: list[LiveOutput] = []
        item = self._start(out)
        calls: list[LiveOutput] = []
        for n, function in enumerate(call.get("functionCalls") or ()):
            key = f"{item}:call-{n}"
            call_id = str(function.get("id") or key)
            calls.append(BlockStart(key, "tool-call", id=call_id, name=str(function["name"])))
            arguments = _encode.encode(function.get("args") or {}).decode()
            calls.extend((ToolCallDelta(key, arguments), BlockEnd(key)))
            self.calls += 1
        out.extend(self._finish(Finish("tool-calls", "toolCall"), calls))
        return out

    def _finish(self, finish: Finish, calls: Sequence[LiveOutput] = ()) -> list[LiveOutput]:
        """The response's end: its text closed, its speech, then the calls
        that came after it, its usage and ``finish``."""
        out: list[LiveOutput] = []
        self._close_text(out)
        if self.spoken is not None:
            out.extend(self.spoken.block(f"{self.current}:audio", self.provider, OUTPUT_RATE))
        out.extend(calls)
        if self.usage is not None:
            out.append(UsageUpdate(self.usage))
            self.usage = None
        out.append(finish)
        self.current, self.spoken = None, None
        return out


def _setup_complete(_: GeminiLiveProtocol, value: Any) -> Sequence[LiveOutput]:
    return (SessionOpened(None, value),)


def _go_away(_: GeminiLiveProtocol, value: Any) -> Sequence[LiveOutput]:
    return (GoAway(value.get("timeLeft") if isinstance(value, dict) else None),)


def _resumption(_: GeminiLiveProtocol, value: Any) -> Sequence[LiveOutput]:
    return (Resumption(value.get("newHandle") or None, bool(value.get("resumable"))),)


_FIELDS: dict[str, Callable[[GeminiLiveProtocol, Any], Sequence[LiveOutput]]] = {
    "setupComplete": _setup_complete,
    "serverContent": GeminiLiveProtocol._content,
    "toolCall": GeminiLiveProtocol._tool_call,
    "goAway": _go_away,
    "sessionResumptionUpdate": _resumption,
}
"""Each top-level field of a server message this protocol reads, to its handler."""


LIVE = LiveWire(GeminiLiveProtocol, cloud_path=VERTEX_PATH)
"""Gemini Live as this wire's live sessions (the Gemini API; Vertex AI)."""

__all__ = [
    "INPUT_RATE",
    "LIVE",
    "OUTPUT_RATE",
    "PATH",
    "VERTEX_PATH",
    "GeminiLiveProtocol",
    "live_usage",
]
