"""OpenAI Realtime (GA, ``gpt-realtime``) as a live protocol, sans-IO.

It lives in the Responses package because the Realtime API is the Responses
item model on a WebSocket: the same ``message`` / ``function_call`` /
``function_call_output`` items, ``response.output_item.*`` and
``response.function_call_arguments.*`` events, usage and error objects;
Azure OpenAI serves the same wire under its resource's ``/openai/v1``.
Event names and fields follow the API reference's client and server events
(https://platform.openai.com/docs/api-reference/realtime-client-events,
https://platform.openai.com/docs/api-reference/realtime-server-events) and
the ``openai`` SDK's ``types.realtime`` models, which the tests validate
every client event against.

Server events, each to what it means (:data:`_EVENTS`): ``response.created``
opens a response (``response-start``); ``response.output_audio.delta`` and
``response.output_audio_transcript.delta`` build the item's speech
(:class:`~elelem.shapes.live_items.SpokenItem`) and are handed out for
playback and display; ``response.output_text.delta`` is a text block;
``response.function_call_arguments.*`` a tool call; ``response.done`` ends
the response: each item's audio block (cut where the user interrupted),
usage with its audio and cached parts, and ``finish``.  Input events
(``input_audio_buffer.*``, ``conversation.item.input_audio_transcription.*``),
``conversation.item.truncated``, ``rate_limits.updated`` and ``error`` are
session events; events that only confirm what other events carry
(``conversation.item.added``, ``response.content_part.done``, …) give
nothing; any other event is an :class:`~elelem.wire.live.UnknownEvent`.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from elelem.errors import MalformedStreamError
from elelem.shapes.live_items import SpokenItem, websocket_base
from elelem.shapes.openai_responses.errors import error_from_event
from elelem.stream import (
    BlockEnd,
    BlockStart,
    Finish,
    ResponseStart,
    TextDelta,
    ToolCallDelta,
    UsageUpdate,
)
from elelem.vocabulary import ProviderId, ProviderPayload, Usage
from elelem.vocabulary.json import JSONValue
from elelem.wire.live import (
    INTERRUPTED,
    AudioOut,
    CommitAudio,
    InputCommitted,
    InputTranscript,
    Interrupt,
    LiveCommand,
    LiveFailure,
    LiveOutput,
    LiveSettings,
    LiveWire,
    RateLimits,
    SendAudio,
    SendText,
    SendToolResults,
    SessionOpened,
    SpeechStarted,
    TranscriptDelta,
    Truncated,
    UnknownEvent,
)

RATE = 24_000
"""The GA API's PCM rate, in and out (``audio/pcm`` at 24 kHz)."""

RESPONSE_FORMAT = "realtime-response"
"""Finish payload format of a ``response.done``'s response object, less its
``output`` items and ``usage`` (which the blocks and the usage hold)."""

TRANSCRIPTION_MODEL = "gpt-4o-mini-transcribe"
"""The model that transcribes the user's audio when ``transcribe`` is on."""

_decode = msgspec.json.Decoder()
_encode = msgspec.json.Encoder()


class _AudioDelta(msgspec.Struct, tag_field="type", tag="response.output_audio.delta"):
    item_id: str
    delta: str


class _TranscriptDelta(
    msgspec.Struct, tag_field="type", tag="response.output_audio_transcript.delta"
):
    item_id: str
    delta: str


_hot = msgspec.json.Decoder(_AudioDelta | _TranscriptDelta)
"""The speech deltas, nine in ten of a session's events, decoded typed."""

# Events whose content other events already carry: nothing to hand out.
_CONFIRMING = frozenset(
    {
        "conversation.created",
        "conversation.item.created",
        "conversation.item.added",
        "conversation.item.done",
        "conversation.item.deleted",
        "conversation.item.retrieved",
        "response.content_part.added",
        "response.content_part.done",
        "response.output_audio.done",
        "response.output_audio_transcript.done",
        "response.output_item.done",
        "input_audio_buffer.speech_stopped",
        "input_audio_buffer.cleared",
        "output_audio_buffer.started",
        "output_audio_buffer.stopped",
        "output_audio_buffer.cleared",
    }
)


def _usage(raw: dict[str, Any] | None) -> Usage | None:
    """Neutral usage of a Realtime response: ``input`` without the cached
    tokens; the audio parts of input, output and cache reads as the counters
    ``input_audio``, ``output_audio`` and ``cache_audio_read`` (priced at the
    model's audio rates)."""
    if not isinstance(raw, dict):
        return None
    given = raw.get("input_token_details") or {}
    made = raw.get("output_token_details") or {}
    cached_details = given.get("cached_tokens_details") or {}
    cached = int(given.get("cached_tokens") or 0)
    audio = {
        "input_audio": int(given.get("audio_tokens") or 0),
        "output_audio": int(made.get("audio_tokens") or 0),
        "cache_audio_read": int(cached_details.get("audio_tokens") or 0),
    }
    return Usage(
        input=int(raw.get("input_tokens") or 0) - cached,
        output=int(raw.get("output_tokens") or 0),
        cache_read=cached,
        hosted={k: v for k, v in audio.items() if v},
        raw=raw,
    )


class RealtimeProtocol:
    """The OpenAI Realtime GA wire (OpenAI, Azure OpenAI) as a
    :class:`~elelem.wire.live.LiveProtocol`."""

    name = "openai_realtime"
    input_rate = RATE
    output_rate = RATE

    def __init__(self, provider: ProviderId) -> None:
        self.provider = provider
        self.response: str | None = None  # the response in progress
        self.items: dict[str, SpokenItem] = {}  # its spoken items, in order
        # The last finished response's: audio arrives faster than it plays,
        # so the user often cuts in once the response is done.
        self.played: dict[str, SpokenItem] = {}
        self.calls = 0  # its tool calls
        self.open_text: set[str] = set()
        self.open_calls: dict[str, bool] = {}  # item id -> any argument delta sent
        self.interrupted = False
        self.cut: dict[str, int] = {}  # item id -> audio_end_ms, once interrupted
        # The response's speech items and tool calls in output order: both
        # commit at its end (speech may still be cut until then; a call runs
        # only once the response ended), so the log keeps the order they came in.
        self.order: list[tuple[str, str]] = []

    # -- the client's side ------------------------------------------------------------

    def url(self, base_url: str, model: str) -> str:
        """``{base}/realtime?model=…`` on ``wss`` (``ws`` for a plain-HTTP base)."""
        return f"{websocket_base(base_url)}/realtime?model={model}"

    def open(self, settings: LiveSettings) -> Sequence[str]:
        """One ``session.update``: modalities, audio formats, transcription,
        turn detection, voice, instructions and tools."""
        fmt = {"type": "audio/pcm", "rate": RATE}
        audio_in: dict[str, Any] = {
            "format": fmt,
            "turn_detection": {"type": "server_vad"} if settings.vad else None,
        }
        if settings.transcribe:
            audio_in["transcription"] = {"model": TRANSCRIPTION_MODEL}
        audio_out: dict[str, Any] = {"format": fmt}
        if settings.voice:
            audio_out["voice"] = settings.voice
        session: dict[str, Any] = {
            "type": "realtime",
            "output_modalities": [settings.output],
            "audio": {"input": audio_in, "output": audio_out},
        }
        if settings.instructions:
            session["instructions"] = settings.instructions
        if settings.tools:
            session["tools"] = [
                {
                    "type": "function",
                    "name": t.name,
                    "description": t.description or "",
                    "parameters": t.parameters,
                }
                for t in settings.tools
            ]
            session["tool_choice"] = "auto"
        return [self._frame({"type": "session.update", "session": session})]

    def send(self, command: LiveCommand) -> Sequence[str]:
        """The client events of ``command``."""
        if isinstance(command, SendAudio):
            audio = base64.b64encode(command.pcm).decode()
            return [self._frame({"type": "input_audio_buffer.append", "audio": audio})]
        if isinstance(command, CommitAudio):
            return [self._frame({"type": "input_audio_buffer.commit"}), self._create()]
        if isinstance(command, SendText):
            content = [{"type": "input_text", "text": command.text}]
            item = {"type": "message", "role": "user", "content": content}
            return [self._frame({"type": "conversation.item.create", "item": item}), self._create()]
        if isinstance(command, SendToolResults):
            out = [
                self._frame(
                    {
                        "type": "conversation.item.create",
                        "item": {
                            "type": "function_call_output",
                            "call_id": r.call_id,
                            "output": r.content,
                        },
                    }
                )
                for r in command.results
            ]
            return [*out, self._create()]
        return self._interrupt(command)

    def _interrupt(self, command: Interrupt) -> list[str]:
        out = []
        if self.response is not None:
            # Server VAD cancels by itself; a cancel with nothing in progress
            # is an error event, so only an active response is cancelled.
            out.append(self._frame({"type": "response.cancel"}))
            self.interrupted = True
        self.cut[command.item_id] = command.audio_end_ms
        spoken = self.items.get(command.item_id) or self.played.get(command.item_id)
        if spoken is not None:
            spoken.truncate(command.audio_end_ms, RATE)
        truncate = {
            "type": "conversation.item.truncate",
            "item_id": command.item_id,
            "content_index": 0,
            "audio_end_ms": command.audio_end_ms,
        }
        out.append(self._frame(truncate))
        return out

    def _create(self) -> str:
        return self._frame({"type": "response.create"})

    @staticmethod
    def _frame(event: dict[str, Any]) -> str:
        return _encode.encode(event).decode()

    # -- the server's side ------------------------------------------------------------

    def receive(self, frame: str | bytes) -> Sequence[LiveOutput]:
        """What one server event means."""
        if type(frame) is str and "output_audio" in frame:
            try:
                hot = _hot.decode(frame)
            except msgspec.DecodeError:
                pass  # another event (or a bad one): the general path decides
            else:
                item_id, delta = hot.item_id, hot.delta
                item = self.items.get(item_id) or self._spoken(item_id)
                if type(hot) is _AudioDelta:
                    item.add_audio(delta)
                    return (AudioOut(item_id, delta),)
                item.add_transcript(delta)
                return (TranscriptDelta(item_id, delta),)
        try:
            event = _decode.decode(frame)
        except msgspec.DecodeError as exc:
            raise MalformedStreamError(
                f"openai realtime: a frame that is not JSON: {exc}"
            ) from None
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise MalformedStreamError("openai realtime: an event with no type")
        kind = event["type"]
        handler = _EVENTS.get(kind)
        try:
            if handler is not None:
                return handler(self, event)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise MalformedStreamError(
                f"openai realtime: a {kind} event with a bad field ({type(exc).__name__}: {exc})"
            ) from None
        if kind in _CONFIRMING:
            return ()
        return (UnknownEvent(event),)

    def _audio_delta(self, event: dict[str, Any]) -> Sequence[LiveOutput]:
        item_id, data = str(event["item_id"]), event["delta"]
        if not isinstance(data, str):
            raise TypeError("delta is not base64 text")
        self._spoken(item_id).add_audio(data)
        return (AudioOut(item_id, data),)

    def _transcript_delta(self, event: dict[str, Any]) -> Sequence[LiveOutput]:
        item_id, text = str(event["item_id"]), str(event["delta"])
        self._spoken(item_id).add_transcript(text)
        return (TranscriptDelta(item_id, text),)

    def _spoken(self, item_id: str) -> SpokenItem:
        spoken = self.items.get(item_id)
        if spoken is None:
            spoken = self.items[item_id] = SpokenItem(item_id)
        return spoken

    def _created(self, event: dict[str, Any]) -> Sequence[LiveOutput]:
        response = event["response"]
        self.response = str(response.get("id") or "")
        self.items, self.calls, self.interrupted = {}, 0, False
        self.open_text, self.open_calls, self.order = set(), {}, []
        return (ResponseStart(self.response or None, None, self.provider),)

    def _item_added(self, event: dict[str, Any]) -> Sequence[LiveOutput]:
        item = event["item"]
        kind = item.get("type")
        if kind == "function_call":
            item_id = str(item["id"])
            self.open_calls[item_id] = False
            self.calls += 1
            self.order.append(("call", item_id))
            return (
                BlockStart(item_id, "tool-call", id=str(item["call_id"]), name=str(item["name"])),
            )
        if kind in ("message", None):
            if item.get("id") is not None:
                self.order.append(("speech", str(item["id"])))
            return ()
        # An item this protocol does not model (an MCP call…): kept whole.
        return (BlockStart(str(item.get("id") or kind), "unknown", raw=dict(item)),
                BlockEnd(str(item.get("id") or kind)))  # fmt: skip

    def _text_delta(self, event: dict[str, Any]) -> Sequence[LiveOutput]:
        key = f"{event['item_id']}:{event.get('content_index', 0)}"
        out: list[LiveOutput] = []
        if key not in self.open_text:
            self.open_text.add(key)
            out.append(BlockStart(key, "text"))
        out.append(TextDelta(key, str(event["delta"])))
        return out

    def _text_done(self, event: dict[str, Any]) -> Sequence[LiveOutput]:
        key = f"{event['item_id']}:{event.get('content_index', 0)}"
        if key not in self.open_text:
            return (BlockStart(key, "text"), TextDelta(key, str(event["text"])), BlockEnd(key))
        self.open_text.discard(key)
        return (BlockEnd(key),)

    def _arguments_delta(self, event: dict[str, Any]) -> Sequence[LiveOutput]:
        item_id = str(event["item_id"])
        self.open_calls[item_id] = True
        return (ToolCallDelta(item_id, str(event["delta"])),)

    def _arguments_done(self, event: dict[str, Any]) -> Sequence[LiveOutput]:
        item_id = str(event["item_id"])
        out: list[LiveOutput] = []
        if item_id not in self.open_calls:
            self.calls += 1
            self.order.append(("call", item_id))
            call_id, name = str(event["call_id"]), str(event["name"])
            out.append(BlockStart(item_id, "tool-call", id=call_id, name=name))
        if not self.open_calls.get(item_id, False):
            out.append(ToolCallDelta(item_id, str(event["arguments"])))
        self.open_calls[item_id] = True
        return out

    def _done(self, event: dict[str, Any]) -> Sequence[LiveOutput]:
        response = event["response"]
        out: list[LiveOutput] = []
        for key in sorted(self.open_text):
            out.append(BlockEnd(key))
        items = dict(self.items)
        for kind, key in self.order:
            if kind == "call":
                out.append(BlockEnd(key))
            elif key in items:
                out.extend(items.pop(key).block(key, self.provider, RATE))
        for item_id, spoken in items.items():  # the speech of an item never announced
            out.extend(spoken.block(item_id, self.provider, RATE))
        usage = _usage(response.get("usage"))
        if usage is not None:
            out.append(UsageUpdate(usage))
        finish = self._finish(response)
        # What the response object says beyond its items and usage (its
        # status details, metadata, conversation, modalities) is kept.
        rest = {k: v for k, v in response.items() if k not in ("output", "usage")}
        payload = ProviderPayload(self.provider, RESPONSE_FORMAT, None, rest)
        out.append(msgspec.structs.replace(finish, payloads=(payload,)))
        self.response = None
        self.played = self.items
        self.items, self.open_text, self.open_calls, self.order = {}, set(), {}, []
        return out

    def _finish(self, response: dict[str, Any]) -> Finish:
        status = str(response.get("status") or "")
        details = response.get("status_details") or {}
        reason = details.get("reason") if isinstance(details, dict) else None
        if status == "completed":
            return Finish("tool-calls" if self.calls else "stop", status)
        if status == "cancelled":
            # The user cut in (server VAD's ``turn_detected``, or our cancel).
            return Finish(INTERRUPTED, f"{status}:{reason}" if reason else status)
        if status == "incomplete" and reason == "max_output_tokens":
            return Finish("max-tokens", f"{status}:{reason}")
        if status == "incomplete" and reason == "content_filter":
            return Finish("content-filter", f"{status}:{reason}")
        error = details.get("error") if isinstance(details, dict) else None
        failure = msgspec.json.encode(error).decode() if error else (reason or status)
        return Finish("error", status or None, failure=str(failure))

    def _truncated(self, event: dict[str, Any]) -> Sequence[LiveOutput]:
        item_id, end = str(event["item_id"]), int(event["audio_end_ms"])
        spoken = self.items.get(item_id) or self.played.get(item_id)
        heard = spoken.truncate(end, RATE) if spoken is not None else ""
        return (Truncated(item_id, end, heard),)

    def _error(self, event: dict[str, Any]) -> Sequence[LiveOutput]:
        error = event["error"]
        if not isinstance(error, dict):
            raise TypeError("error is not an object")
        return (LiveFailure(error_from_event(error, _encode.encode(event))),)

    def _transcription_failed(self, event: dict[str, Any]) -> Sequence[LiveOutput]:
        return (LiveFailure(error_from_event(event.get("error") or {}, _encode.encode(event))),)


def _session(_: RealtimeProtocol, event: dict[str, Any]) -> Sequence[LiveOutput]:
    session = event["session"]
    ident = session.get("id") if isinstance(session, dict) else None
    return (SessionOpened(ident, session, event["type"] == "session.updated"),)


def _speech_started(_: RealtimeProtocol, event: dict[str, Any]) -> Sequence[LiveOutput]:
    return (SpeechStarted(event.get("item_id"), event.get("audio_start_ms")),)


def _committed(_: RealtimeProtocol, event: dict[str, Any]) -> Sequence[LiveOutput]:
    return (InputCommitted(event.get("item_id")),)


def _input_delta(_: RealtimeProtocol, event: dict[str, Any]) -> Sequence[LiveOutput]:
    return (InputTranscript(event.get("item_id"), str(event["delta"])),)


def _input_done(_: RealtimeProtocol, event: dict[str, Any]) -> Sequence[LiveOutput]:
    return (InputTranscript(event.get("item_id"), str(event["transcript"]), done=True),)


def _rate_limits(_: RealtimeProtocol, event: dict[str, Any]) -> Sequence[LiveOutput]:
    limits: JSONValue = event["rate_limits"]
    return (RateLimits(limits),)


_Handler = Callable[[RealtimeProtocol, dict[str, Any]], Sequence[LiveOutput]]

_EVENTS: dict[str, _Handler] = {
    "session.created": _session,
    "session.updated": _session,
    "input_audio_buffer.speech_started": _speech_started,
    "input_audio_buffer.committed": _committed,
    "conversation.item.input_audio_transcription.delta": _input_delta,
    "conversation.item.input_audio_transcription.completed": _input_done,
    "conversation.item.input_audio_transcription.failed": RealtimeProtocol._transcription_failed,
    "conversation.item.truncated": RealtimeProtocol._truncated,
    "response.created": RealtimeProtocol._created,
    "response.output_item.added": RealtimeProtocol._item_added,
    "response.output_audio.delta": RealtimeProtocol._audio_delta,
    "response.output_audio_transcript.delta": RealtimeProtocol._transcript_delta,
    "response.output_text.delta": RealtimeProtocol._text_delta,
    "response.output_text.done": RealtimeProtocol._text_done,
    "response.function_call_arguments.delta": RealtimeProtocol._arguments_delta,
    "response.function_call_arguments.done": RealtimeProtocol._arguments_done,
    "response.done": RealtimeProtocol._done,
    "rate_limits.updated": _rate_limits,
    "error": RealtimeProtocol._error,
}
"""Each server event this protocol reads, to its handler."""


LIVE = LiveWire(RealtimeProtocol)
"""OpenAI Realtime as this wire's live sessions (OpenAI, Azure OpenAI)."""

__all__ = ["LIVE", "RATE", "RESPONSE_FORMAT", "RealtimeProtocol"]
