"""The live protocols, sans-IO: every client event checked against the official
SDKs' types; server events (written after the providers' published examples:
https://platform.openai.com/docs/api-reference/realtime-server-events and
https://ai.google.dev/api/live) to chunks and session events; unknown events
kept; malformed ones typed errors."""

from __future__ import annotations

import base64
import json

import pytest

pytest.importorskip("openai")
pytest.importorskip("google.genai")

from elelem.errors import MalformedStreamError, RateLimitError
from elelem.shapes.gemini.live import GeminiLiveProtocol
from elelem.shapes.live_items import SpokenItem, pcm_size, wav_bytes, wav_pcm
from elelem.shapes.openai_responses.live import RealtimeProtocol
from elelem.stream import Assembler, BlockEnd, BlockStart, Finish, ResponseStart
from elelem.vocabulary import AudioBlock, ProviderId, ToolResultBlock, ToolSpec
from elelem.wire.live import (
    LIVE_EVENT_TYPES,
    CommitAudio,
    GoAway,
    InputTranscript,
    Interrupt,
    LiveFailure,
    LiveSettings,
    RateLimits,
    Resumption,
    SendAudio,
    SendText,
    SendToolResults,
    SessionOpened,
    SpeechStarted,
    Truncated,
    UnknownEvent,
)
from live_servers import gemini_client_message, openai_client_event, pcm

WEATHER = ToolSpec(
    "get_weather",
    "The weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
SETTINGS = [
    LiveSettings("gpt-realtime"),
    LiveSettings("gpt-realtime", "Be brief.", (WEATHER,), "text", "marin", False, False),
]
COMMANDS = [
    SendAudio(b"\x01\x00" * 10),
    CommitAudio(),
    SendText("Hello"),
    SendToolResults((ToolResultBlock("call_1", "sunny", False, "get_weather"),)),
    SendToolResults((ToolResultBlock("call_2", "boom", True, "get_weather"),)),
    Interrupt("item_1", 300),
]


@pytest.mark.parametrize("settings", SETTINGS)
def test_every_openai_client_event_is_the_sdks(settings: LiveSettings) -> None:
    protocol = RealtimeProtocol(ProviderId("openai"))
    protocol.receive(json.dumps({"type": "response.created", "response": {"id": "r"}}))
    frames = [*protocol.open(settings)]
    for command in COMMANDS:
        frames += protocol.send(command)
    kinds = [openai_client_event(f)["type"] for f in frames]
    assert kinds == [
        "session.update", "input_audio_buffer.append", "input_audio_buffer.commit",
        "response.create", "conversation.item.create", "response.create",
        "conversation.item.create", "response.create", "conversation.item.create",
        "response.create", "response.cancel", "conversation.item.truncate",
    ]  # fmt: skip


@pytest.mark.parametrize("settings", SETTINGS)
def test_every_gemini_client_message_is_the_sdks(settings: LiveSettings) -> None:
    protocol = GeminiLiveProtocol(ProviderId("google"))
    frames = [*protocol.open(settings)]
    for command in COMMANDS:
        frames += protocol.send(command)
    messages = [gemini_client_message(f) for f in frames]
    assert [next(iter(m)) for m in messages] == [
        "setup", "realtimeInput", "realtimeInput", "clientContent", "toolResponse",
        "toolResponse",
    ]  # fmt: skip
    assert messages[-1]["toolResponse"]["functionResponses"][0]["response"] == {"error": "boom"}


def test_cancel_only_while_a_response_runs() -> None:
    protocol = RealtimeProtocol(ProviderId("openai"))
    kinds = [json.loads(f)["type"] for f in protocol.send(Interrupt("item_1", 120))]
    assert kinds == ["conversation.item.truncate"]


def test_openai_session_events() -> None:
    protocol = RealtimeProtocol(ProviderId("openai"))
    frames = [
        {"type": "session.created", "event_id": "e", "session": {"id": "sess_9"}},
        {"type": "input_audio_buffer.speech_started", "event_id": "e", "audio_start_ms": 40,
         "item_id": "it"},
        {"type": "conversation.item.input_audio_transcription.delta", "event_id": "e",
         "item_id": "it", "content_index": 0, "delta": "Hel"},
        {"type": "rate_limits.updated", "event_id": "e",
         "rate_limits": [{"name": "tokens", "limit": 9, "remaining": 1, "reset_seconds": 2.5}]},
        {"type": "conversation.item.added", "event_id": "e", "item": {"id": "it"}},
        {"type": "brand.new_event", "event_id": "e", "x": [1]},
    ]  # fmt: skip
    outputs = [o for f in frames for o in protocol.receive(json.dumps(f))]
    assert outputs == [
        SessionOpened("sess_9", {"id": "sess_9"}),
        SpeechStarted("it", 40),
        InputTranscript("it", "Hel"),
        RateLimits([{"name": "tokens", "limit": 9, "remaining": 1, "reset_seconds": 2.5}]),
        UnknownEvent({"type": "brand.new_event", "event_id": "e", "x": [1]}),
    ]


def test_openai_error_event_is_typed() -> None:
    protocol = RealtimeProtocol(ProviderId("openai"))
    error = {"type": "rate_limit_exceeded", "code": "rate_limit_exceeded",
             "message": "Slow down", "param": None, "event_id": "c1"}  # fmt: skip
    (failure,) = protocol.receive(json.dumps({"type": "error", "event_id": "e", "error": error}))
    assert isinstance(failure, LiveFailure) and isinstance(failure.error, RateLimitError)
    assert "Slow down" in failure.error.message


@pytest.mark.parametrize(
    "frame",
    [
        b"not json",
        b'["a list"]',
        b'{"no": "type"}',
        b'{"type": "response.output_audio.delta", "item_id": "i", "delta": 7}',
        b'{"type": "response.done"}',
    ],
)
def test_openai_malformed_frames(frame: bytes) -> None:
    with pytest.raises(MalformedStreamError, match="openai realtime"):
        RealtimeProtocol(ProviderId("openai")).receive(frame)


@pytest.mark.parametrize(
    "frame", [b"{", b"[1]", b'{"serverContent": {"modelTurn": {"parts": [7]}}}']
)
def test_gemini_malformed_messages(frame: bytes) -> None:
    with pytest.raises(MalformedStreamError, match="gemini live"):
        GeminiLiveProtocol(ProviderId("google")).receive(frame)


def test_gemini_session_events_and_unknown_fields() -> None:
    protocol = GeminiLiveProtocol(ProviderId("google"))
    frames = [
        {"setupComplete": {}},
        {"goAway": {"timeLeft": "9s"}},
        {"sessionResumptionUpdate": {"newHandle": "h1", "resumable": True}},
        {"toolCallCancellation": {"ids": ["fc1"]}},
        {"serverContent": {"inputTranscription": {"text": "hi", "finished": True},
                           "groundingMetadata": {"x": 1}}},
    ]  # fmt: skip
    outputs = [o for f in frames for o in protocol.receive(json.dumps(f).encode())]
    assert outputs == [
        SessionOpened(None, {}),
        GoAway("9s"),
        Resumption("h1", True),
        UnknownEvent({"toolCallCancellation": {"ids": ["fc1"]}}),
        InputTranscript(None, "hi", True),
        UnknownEvent({"serverContent": {"groundingMetadata": {"x": 1}}}),
    ]


def _assemble(outputs: list[object]) -> Assembler:
    assembler = Assembler(ProviderId("google"))
    for o in outputs:
        if not isinstance(o, LIVE_EVENT_TYPES):
            assembler.feed(o)  # type: ignore[arg-type]
    return assembler


def test_gemini_interrupted_turn_keeps_what_was_heard() -> None:
    protocol = GeminiLiveProtocol(ProviderId("google"))
    chunk = base64.b64encode(pcm(100, 24_000)).decode()
    outputs: list[object] = []
    for word in ("One ", "two ", "three."):
        part = {"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": chunk}}
        outputs += protocol.receive(json.dumps({"serverContent": {"modelTurn": {"parts": [part]}}}))
        said = {"outputTranscription": {"text": word}}
        outputs += protocol.receive(json.dumps({"serverContent": said}))
    assert protocol.send(Interrupt("turn-1", 200)) == []
    outputs += protocol.receive(json.dumps({"serverContent": {"interrupted": True}}))
    result = _assemble(outputs).result()
    assert isinstance(outputs[0], ResponseStart) and outputs[0].response_id == "turn-1"
    assert [o for o in outputs if isinstance(o, Truncated)] == [
        Truncated("turn-1", 200, "One two ")
    ]
    (audio,) = result.content
    assert isinstance(audio, AudioBlock)
    assert (audio.duration, audio.transcript) == (0.2, "One two ")
    assert result.finish is not None and result.finish.reason == "interrupted"


def test_gemini_text_and_thoughts_are_blocks() -> None:
    protocol = GeminiLiveProtocol(ProviderId("google"))
    parts = [{"text": "Let me think", "thought": True}, {"text": "Hi"}, {"text": " there"}]
    outputs = list(protocol.receive(json.dumps({"serverContent": {"modelTurn": {"parts": parts}}})))
    outputs += protocol.receive(json.dumps({"serverContent": {"turnComplete": True}}))
    result = _assemble(outputs).result()
    assert [type(b).__name__ for b in result.content] == ["ReasoningBlock", "TextBlock"]
    assert result.text == "Hi there"
    assert isinstance(outputs[-1], Finish) and outputs[-1].reason == "stop"


def test_spoken_item_cut_and_sizes() -> None:
    item = SpokenItem("i")
    for n in range(4):
        item.add_audio(base64.b64encode(bytes([n]) * 4800).decode())
        item.add_transcript(f"w{n} ")
    assert item.received == 19200
    assert item.truncate(250, 24_000) == "w0 w1 "  # 250 ms = 12000 bytes, two pieces heard
    assert item.pcm() == bytes([0]) * 4800 + bytes([1]) * 4800 + bytes([2]) * 2400
    assert [pcm_size(base64.b64encode(b"x" * n).decode()) for n in range(5)] == [0, 1, 2, 3, 4]
    samples, rate, channels = wav_pcm(wav_bytes(b"\x01\x02" * 3, 16_000))
    assert (samples, rate, channels) == (b"\x01\x02" * 3, 16_000, 1)
    chunks = item.block("i", ProviderId("openai"), 24_000)
    assert isinstance(chunks[0], BlockStart) and isinstance(chunks[1], BlockEnd)


def test_a_cut_after_the_response_ended_says_what_was_heard() -> None:
    """Speech arrives faster than it plays: the user cuts in after
    response.done, and the truncation still names what was heard."""
    protocol = RealtimeProtocol(ProviderId("openai"))
    chunk = base64.b64encode(pcm(100, 24_000)).decode()
    base = {"response_id": "r", "item_id": "it", "output_index": 0, "content_index": 0}
    frames = [{"type": "response.created", "response": {"id": "r"}}]
    for word in ("a ", "b ", "c "):
        frames.append({"type": "response.output_audio.delta", **base, "delta": chunk})
        frames.append({"type": "response.output_audio_transcript.delta", **base, "delta": word})
    frames.append({"type": "response.done", "response": {"id": "r", "status": "completed"}})
    for frame in frames:
        protocol.receive(json.dumps(frame))
    (sent,) = protocol.send(Interrupt("it", 100))  # no response runs: no cancel
    assert json.loads(sent)["audio_end_ms"] == 100
    truncated = {"type": "conversation.item.truncated", "item_id": "it", "content_index": 0,
                 "audio_end_ms": 100}  # fmt: skip
    assert protocol.receive(json.dumps(truncated)) == (Truncated("it", 100, "a "),)


def test_audio_after_a_commit_belongs_to_the_next_turn(tmp_path) -> None:
    """A microphone keeps streaming after server VAD committed the turn: the
    audio sent since is no turn of its own, whether the transcript comes
    before the answer or after it."""
    from elelem.conversation import Conversation, SQLiteStore
    from elelem.conversation.events import MessageBody
    from elelem.turns.actions import Append
    from elelem.turns.live import LiveCore
    from elelem.wire.live import InputCommitted

    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    core = LiveCore(conv, "openai:gpt-realtime", ProviderId("openai"), "gpt-realtime",
                    24_000, 24_000)  # fmt: skip

    def run(actions: list[object]) -> None:
        for action in actions:
            if isinstance(action, Append):
                conv.append(*action.drafts)

    run(core.audio(pcm(200, 24_000)))
    run(core.feed(InputCommitted("u1")))
    run(core.audio(pcm(100, 24_000)))  # after the commit
    run(core.feed(InputTranscript("u1", "Hi there", done=True)))
    for chunk in (ResponseStart("r1"), Finish("stop")):
        run(core.feed(chunk))
    run(core.feed(InputTranscript("u1", "Hi there (again)", done=True)))
    users = [e.body.content[0] for e in conv.events
             if isinstance(e.body, MessageBody) and e.body.role == "user"]  # fmt: skip
    assert [(u.duration, u.transcript) for u in users] == [(0.2, "Hi there")]
    assert conv.turn == 1
    assert conv.events[-1].body.what == "input-transcript"
