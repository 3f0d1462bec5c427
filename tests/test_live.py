"""Live sessions end to end: OpenAI Realtime, Azure OpenAI and Gemini Live over
loopback WebSocket servers (tests/live_servers.py, each event after the
provider's published examples), through the library's async and blocking
faces into a real SQLite log."""

from __future__ import annotations

import anyio
import pytest

pytest.importorskip("websockets")
pytest.importorskip("openai")
pytest.importorskip("google.genai")

from elelem import Client, SyncClient
from elelem.conversation import Conversation, SQLiteStore
from elelem.conversation.events import MessageBody, ResponseRecord, TurnStart
from elelem.conversation.session import SessionNote
from elelem.errors import TransportError
from elelem.providers.costs import response_cost
from elelem.shapes.live_items import wav_pcm
from elelem.stream import Finish
from elelem.tools import tool
from elelem.turns.live_session import live, live_sync
from elelem.vocabulary import AudioBlock, ToolCallBlock, ToolResultBlock
from elelem.wire.live import AudioOut
from live_servers import (
    ScriptedServer,
    b64,
    gemini_client_message,
    kind_of_gemini,
    kind_of_openai,
    openai_client_event,
    pcm,
)

OPENAI_RATE = 24_000
CHUNK = pcm(100, OPENAI_RATE)  # 100 ms of speech the server sends per delta


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def _usage(audio_in: int, audio_out: int, text_out: int, cached: int = 0) -> dict[str, object]:
    # https://platform.openai.com/docs/api-reference/realtime-server-events/response/done
    return {
        "total_tokens": 400 + audio_out + text_out,
        "input_tokens": 400,
        "output_tokens": audio_out + text_out,
        "input_token_details": {
            "text_tokens": 400 - audio_in,
            "audio_tokens": audio_in,
            "image_tokens": 0,
            "cached_tokens": cached,
            "cached_tokens_details": {"text_tokens": cached, "audio_tokens": 0, "image_tokens": 0},
        },
        "output_token_details": {"text_tokens": text_out, "audio_tokens": audio_out},
    }


def openai_script() -> list[tuple[str, object]]:
    """A user asks by voice (server VAD), the model calls a tool, then speaks
    and is interrupted 300 ms into its answer."""
    speech = [
        {"type": "input_audio_buffer.speech_started", "event_id": "ev_1", "audio_start_ms": 0,
         "item_id": "item_user"},
        {"type": "input_audio_buffer.speech_stopped", "event_id": "ev_2", "audio_end_ms": 200,
         "item_id": "item_user"},
        {"type": "input_audio_buffer.committed", "event_id": "ev_3", "previous_item_id": None,
         "item_id": "item_user"},
        {"type": "conversation.item.input_audio_transcription.completed", "event_id": "ev_4",
         "item_id": "item_user", "content_index": 0, "transcript": "Weather in Paris?",
         "usage": {"type": "duration", "seconds": 0.2}},
        {"type": "response.created", "event_id": "ev_5",
         "response": {"id": "resp_1", "object": "realtime.response", "status": "in_progress",
                      "output": []}},
        {"type": "response.output_item.added", "event_id": "ev_6", "response_id": "resp_1",
         "output_index": 0, "item": {"id": "item_fc", "type": "function_call",
                                     "status": "in_progress", "call_id": "call_1",
                                     "name": "get_weather", "arguments": ""}},
        {"type": "response.function_call_arguments.delta", "event_id": "ev_7",
         "response_id": "resp_1", "item_id": "item_fc", "output_index": 0, "call_id": "call_1",
         "delta": '{"city": '},
        {"type": "response.function_call_arguments.delta", "event_id": "ev_8",
         "response_id": "resp_1", "item_id": "item_fc", "output_index": 0, "call_id": "call_1",
         "delta": '"Paris"}'},
        {"type": "response.function_call_arguments.done", "event_id": "ev_9",
         "response_id": "resp_1", "item_id": "item_fc", "output_index": 0, "call_id": "call_1",
         "name": "get_weather", "arguments": '{"city": "Paris"}'},
        {"type": "response.done", "event_id": "ev_10",
         "response": {"id": "resp_1", "object": "realtime.response", "status": "completed",
                      "output": [], "usage": _usage(150, 0, 20)}},
    ]  # fmt: skip
    answer = [
        {"type": "response.created", "event_id": "ev_11",
         "response": {"id": "resp_2", "object": "realtime.response", "status": "in_progress",
                      "output": []}},
        {"type": "response.output_item.added", "event_id": "ev_12", "response_id": "resp_2",
         "output_index": 0, "item": {"id": "item_say", "type": "message", "role": "assistant",
                                     "status": "in_progress", "content": []}},
        {"type": "rate_limits.updated", "event_id": "ev_13",
         "rate_limits": [{"name": "requests", "limit": 1000, "remaining": 999,
                          "reset_seconds": 60.0}]},
    ]  # fmt: skip
    words = ["It ", "is ", "sunny ", "in ", "Paris."]
    for n, word in enumerate(words):
        answer.append(
            {"type": "response.output_audio.delta", "event_id": f"ev_a{n}",
             "response_id": "resp_2", "item_id": "item_say", "output_index": 0,
             "content_index": 0, "delta": b64(CHUNK)}
        )  # fmt: skip
        answer.append(
            {"type": "response.output_audio_transcript.delta", "event_id": f"ev_t{n}",
             "response_id": "resp_2", "item_id": "item_say", "output_index": 0,
             "content_index": 0, "delta": word}
        )  # fmt: skip
    cut = [
        {"type": "conversation.item.truncated", "event_id": "ev_20", "item_id": "item_say",
         "content_index": 0, "audio_end_ms": 300},
        {"type": "response.done", "event_id": "ev_21",
         "response": {"id": "resp_2", "object": "realtime.response", "status": "cancelled",
                      "status_details": {"type": "cancelled", "reason": "client_cancelled"},
                      "output": [], "usage": _usage(150, 60, 10, cached=128)}},
        {"type": "conversation.item.future_event", "event_id": "ev_22", "detail": {"x": 1}},
    ]  # fmt: skip
    return [
        ("send", [{"type": "session.created", "event_id": "ev_0",
                   "session": {"id": "sess_1", "type": "realtime", "model": "gpt-realtime"}}]),
        ("expect", "session.update"),
        ("send", [{"type": "session.updated", "event_id": "ev_u",
                   "session": {"id": "sess_1", "type": "realtime", "model": "gpt-realtime"}}]),
        ("expect", "input_audio_buffer.append"),
        ("send", speech),
        ("expect", "conversation.item.create"),
        ("expect", "response.create"),
        ("send", answer),
        ("expect", "response.cancel"),
        ("expect", "conversation.item.truncate"),
        ("send", cut),
        ("close", 1000),
    ]  # fmt: skip


def _openai_server() -> ScriptedServer:
    return ScriptedServer([openai_script()], openai_client_event, kind_of_openai)


def _kinds(conv: Conversation) -> list[str]:
    out = []
    for e in conv.events:
        body = e.body
        if isinstance(body, SessionNote):
            out.append(f"session:{body.what}")
        elif isinstance(body, MessageBody):
            out.append(f"{body.role}:{type(body.content[0]).__name__}")
        else:
            out.append(e.kind)
    return out


def _check_openai_log(conv: Conversation, server: ScriptedServer) -> None:
    assert _kinds(conv) == [
        "session:opened",
        "session:updated",
        "turn-start",
        "user:AudioBlock",
        "assistant:ToolCallBlock",
        "response",
        "user:ToolResultBlock",
        "session:rate-limits",
        "session:interrupted",
        "assistant:AudioBlock",
        "response",
        "session:unknown",
        "session:closed",
    ]
    events = conv.events
    assert isinstance(events[2].body, TurnStart) and events[2].body.trigger == "user"
    user = events[3].body.content[0]
    assert isinstance(user, AudioBlock) and user.transcript == "Weather in Paris?"
    assert user.duration == 0.2
    call = events[4].body.content[0]
    assert isinstance(call, ToolCallBlock)
    assert (call.id, call.name, call.arguments) == ("call_1", "get_weather", '{"city": "Paris"}')
    first: ResponseRecord = events[5].body
    assert (first.response_id, first.finish, first.usage.input, first.usage.output) == (
        "resp_1", "tool-calls", 400, 20,
    )  # fmt: skip
    result = events[6].body.content[0]
    assert isinstance(result, ToolResultBlock) and result.content == "sunny in Paris"
    # The truncate the user's cut sent, and the audio and transcript stored, end at 300 ms.
    truncate = [e for e in server.received if e["type"] == "conversation.item.truncate"]
    assert truncate == [{"type": "conversation.item.truncate", "item_id": "item_say",
                         "content_index": 0, "audio_end_ms": 300}]  # fmt: skip
    assert events[8].body.detail == {
        "item_id": "item_say", "audio_end_ms": 300, "heard": "It is sunny "
    }  # fmt: skip
    spoken = events[9].body.content[0]
    assert isinstance(spoken, AudioBlock)
    assert spoken.duration == 0.3 and spoken.transcript == "It is sunny "
    said = [b for m in conv.project().messages for b in m.content if isinstance(b, AudioBlock)]
    samples, rate, channels = wav_pcm(said[-1].source.blob.data)  # type: ignore[union-attr]
    assert (samples, rate, channels) == (CHUNK * 3, OPENAI_RATE, 1)
    second: ResponseRecord = events[10].body
    assert (second.finish, second.finish_raw) == ("interrupted", "cancelled:client_cancelled")
    (payload,) = second.payloads  # the response object beyond its items and usage, kept
    assert payload.format == "realtime-response" and payload.value["status_details"] == {
        "type": "cancelled", "reason": "client_cancelled"
    }  # fmt: skip
    assert events[1].body.detail["session"]["model"] == "gpt-realtime"
    usage = second.usage
    assert (usage.input, usage.cache_read, usage.output) == (272, 128, 70)
    assert usage.hosted == {"input_audio": 150, "output_audio": 60}
    assert response_cost(second).total is not None
    assert events[11].body.detail["type"] == "conversation.item.future_event"


def test_openai_realtime_blocking(tmp_path) -> None:
    store = SQLiteStore(tmp_path / "log.db")
    conv = Conversation.create(store)
    with _openai_server() as server:
        env = {"OPENAI_API_KEY": "sk-live-test", "OPENAI_BASE_URL": server.base_url + "/v1"}
        client = SyncClient(env=env)
        heard_ms = 0
        with live_sync(client, "openai:gpt-realtime", conversation=conv,
                       tools=[get_weather], instructions="Be brief.") as session:  # fmt: skip
            session.send_audio(pcm(200, OPENAI_RATE))
            for output in session:
                if isinstance(output, AudioOut):
                    heard_ms += 100
                    if heard_ms == 500:
                        session.interrupt(audio_end_ms=300)
        assert server.headers[0]["authorization"] == "Bearer sk-live-test"
        update = server.received[0]["session"]
        assert update["instructions"] == "Be brief."
        assert update["tools"][0]["name"] == "get_weather"
    _check_openai_log(Conversation.open(store, conv.id), server)


def test_openai_realtime_async_same_log(tmp_path) -> None:
    store = SQLiteStore(tmp_path / "log.db")
    conv = Conversation.create(store)

    async def main(server: ScriptedServer) -> None:
        env = {"OPENAI_API_KEY": "sk-live-test", "OPENAI_BASE_URL": server.base_url + "/v1"}
        async with Client(env=env) as client:
            heard = 0
            async with live(client, "openai:gpt-realtime", conversation=conv,
                            tools=[get_weather]) as session:  # fmt: skip
                await session.send_audio(pcm(200, OPENAI_RATE))
                async for output in session:
                    if isinstance(output, AudioOut):
                        heard += 100
                        if heard == 500:
                            await session.interrupt(audio_end_ms=300)

    with _openai_server() as server:
        anyio.run(main, server)
    _check_openai_log(Conversation.open(store, conv.id), server)


def test_azure_realtime_same_wire(tmp_path) -> None:
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    script = [
        ("send", [{"type": "session.created", "event_id": "e0", "session": {"id": "s"}}]),
        ("expect", "session.update"),
        ("expect", "conversation.item.create"),
        ("expect", "response.create"),
        ("send", [
            {"type": "response.created", "event_id": "e1", "response": {"id": "r1"}},
            {"type": "response.output_text.delta", "event_id": "e2", "response_id": "r1",
             "item_id": "i1", "output_index": 0, "content_index": 0, "delta": "Hello"},
            {"type": "response.output_text.done", "event_id": "e3", "response_id": "r1",
             "item_id": "i1", "output_index": 0, "content_index": 0, "text": "Hello"},
            {"type": "response.done", "event_id": "e4",
             "response": {"id": "r1", "status": "completed", "usage": _usage(0, 0, 1)}},
        ]),
        ("close", 1000),
    ]  # fmt: skip
    with ScriptedServer([script], openai_client_event, kind_of_openai) as server:
        env = {"AZURE_OPENAI_API_KEY": "azure-key-123", "AZURE_OPENAI_ENDPOINT": server.base_url}
        with live_sync(SyncClient(env=env), "azure:my-realtime", conversation=conv,
                       output="text") as session:  # fmt: skip
            session.send_text("Hi")
            outputs = list(session)
        assert server.headers[0]["api-key"] == "azure-key-123"
        assert server.received[0]["session"]["output_modalities"] == ["text"]
    assert [o.reason for o in outputs if isinstance(o, Finish)] == ["stop"]
    assert "Hello" in conv.text


def gemini_script(resumable: bool) -> list[list[tuple[str, object]]]:
    """Speech in, a tool call, speech out; the socket drops and resumes."""
    first = [
        ("expect", "setup"),
        ("send", [{"setupComplete": {}}]),
        ("expect", "realtimeInput"),
        ("send", [
            {"serverContent": {"inputTranscription": {"text": "Weather in Paris?"}}},
            {"toolCall": {"functionCalls": [{"id": "fc1", "name": "get_weather",
                                             "args": {"city": "Paris"}}]}},
        ]),
        ("expect", "toolResponse"),
        ("send", [
            {"serverContent": {"modelTurn": {"parts": [
                {"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": b64(CHUNK)}}]}}},
            {"serverContent": {"outputTranscription": {"text": "Sunny."}}},
            {"serverContent": {"turnComplete": True},
             "usageMetadata": {"promptTokenCount": 300, "responseTokenCount": 40,
                               "totalTokenCount": 340,
                               "promptTokensDetails": [{"modality": "AUDIO", "tokenCount": 200},
                                                       {"modality": "TEXT", "tokenCount": 100}],
                               "responseTokensDetails": [{"modality": "AUDIO",
                                                          "tokenCount": 40}]}},
            {"sessionResumptionUpdate": {"newHandle": "handle-7", "resumable": resumable}},
            {"goAway": {"timeLeft": "5s"}},
        ]),
        ("drop", None),
    ]  # fmt: skip
    second = [
        ("expect", "setup"),
        ("send", [{"setupComplete": {}}]),
        ("close", 1000),
    ]
    return [first, second]


def test_gemini_live_resumes_one_session(tmp_path) -> None:
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    server = ScriptedServer(gemini_script(True), gemini_client_message, kind_of_gemini, binary=True)
    with server:
        env = {"GEMINI_API_KEY": "g-key-1", "GOOGLE_GEMINI_BASE_URL": server.base_url}
        with live_sync(SyncClient(env=env), "google:gemini-live-2.5-flash", conversation=conv,
                       tools=[get_weather]) as session:  # fmt: skip
            session.send_audio(pcm(100, 16_000))
            list(session)
        assert server.headers[0]["x-goog-api-key"] == "g-key-1"
        setups = [m["setup"] for m in server.received if "setup" in m]
        assert "sessionResumption" in setups[0] and setups[0]["sessionResumption"] == {}
        assert setups[1]["sessionResumption"] == {"handle": "handle-7"}
        response = next(m for m in server.received if "toolResponse" in m)
        assert response["toolResponse"]["functionResponses"] == [
            {"id": "fc1", "name": "get_weather", "response": {"output": "sunny in Paris"}}
        ]
    kinds = _kinds(conv)
    assert kinds == [
        "session:opened", "turn-start", "user:AudioBlock", "assistant:ToolCallBlock",
        "response", "user:ToolResultBlock", "assistant:AudioBlock", "response",
        "session:go-away", "session:dropped", "session:resumed", "session:closed",
    ]  # fmt: skip
    user = conv.events[2].body.content[0]
    assert user.transcript == "Weather in Paris?" and user.duration == 0.1
    said = conv.events[6].body.content[0]
    assert said.transcript == "Sunny." and said.duration == 0.1
    record = conv.events[7].body
    assert record.usage.hosted == {"input_audio": 200, "output_audio": 40}
    assert (record.usage.input, record.usage.output) == (300, 40)


def test_gemini_drop_without_handle_is_lost(tmp_path) -> None:
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    scripts = gemini_script(False)[:1]
    with ScriptedServer(scripts, gemini_client_message, kind_of_gemini, binary=True) as server:
        env = {"GEMINI_API_KEY": "g-key-1", "GOOGLE_GEMINI_BASE_URL": server.base_url}
        session = live_sync(
            SyncClient(env=env), "google:gemini-live-2.5-flash", conversation=conv,
            tools=[get_weather],
        )  # fmt: skip
        with pytest.raises(TransportError, match="the connection closed"), session:
            session.send_audio(pcm(100, 16_000))
            list(session)
    assert _kinds(conv)[-2:] == ["session:go-away", "session:lost"]
    assert "g-key-1" not in repr(conv.events[-1].body)
