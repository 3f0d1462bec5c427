"""Streamed text to speech (``Client.speak_stream``, issue #30) on a loopback
stand-in of OpenAI's ``POST /v1/audio/speech``.

The two forms are written from OpenAI's API reference (no recording of this
endpoint exists in the corpus): the audio file sent chunked as it is made
(``stream_format: "audio"``), and server-sent events ``speech.audio.delta``
(``audio``: base64) then ``speech.audio.done`` (``usage``: ``input_tokens``,
``output_tokens``, ``total_tokens``) for ``stream_format: "sse"``.

The server holds the rest of each body behind a gate only the client opens,
once it has the first piece: the first bytes reach the caller before the
body ends (a client that waited for the whole body would leave the gate
shut, and the server then resets the connection).
"""

from __future__ import annotations

import base64
import json
import threading
from decimal import Decimal
from typing import Any

import anyio
import pytest

from elelem import Client, SyncClient
from elelem.errors import (
    AuthenticationError,
    ConfigError,
    IncompleteStreamError,
    MalformedStreamError,
    StreamError,
    TransportError,
    UnsupportedError,
)
from elelem.shapes.openai_responses.speech import SpeechParser
from elelem.speech.streamed_speech import Speech
from elelem.stream import BlockEnd, BlockStart, Finish, ResponseStart, UsageUpdate
from elelem.testing.servers import Await, LoopbackServer, Pause, Reply, Reset, Send, status
from elelem.vocabulary import ProviderId, UnknownBlock, Usage

KEY = "sk-speech-secret-0123456789"
MODEL = "openai:gpt-4o-mini-tts"
PIECES = (b"ID3\x04\x00\x00first-frames", b"\xff\xfbsecond", b"\xff\xfbthird-and-last")


def env(server: LoopbackServer) -> dict[str, str]:
    return {"OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": KEY, "ELELEM_CONFIG": "/x"}


def event(obj: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def delta(piece: bytes) -> bytes:
    return event({"type": "speech.audio.delta", "audio": base64.b64encode(piece).decode()})


DONE_USAGE = {"input_tokens": 14, "output_tokens": 120, "total_tokens": 134}
DONE = event({"type": "speech.audio.done", "usage": DONE_USAGE})


def events(body: bytes) -> Reply:
    return status(200, body, content_type="text/event-stream")


def gated(
    gate: threading.Event,
    first: bytes,
    *rest: bytes,
    content_type: str,
    headers: dict[str, str] | None = None,
) -> Reply:
    """``first``, then (once the client opened ``gate``) the rest, with pauses."""
    script: list[Any] = [Send(first), Await(gate)]
    for piece in rest:
        script += [Pause(0.02), Send(piece)]
    head = {"content-type": content_type, **(headers or {})}
    return Reply(200, head, tuple(script), chunked=True)


def test_raw_audio_arrives_piece_by_piece_before_the_body_ends() -> None:
    gate = threading.Event()
    before_gate: list[bytes] = []

    async def main(server: LoopbackServer) -> tuple[list[bytes], Speech]:
        after: list[bytes] = []
        async with Client(env=env(server), max_retries=0) as client:
            speech = client.speak_stream(MODEL, "Hello there.", voice="coral", speed=1.25)
            async with speech:
                async for piece in speech:
                    if gate.is_set():
                        after.append(piece)
                        continue
                    before_gate.append(piece)
                    if b"".join(before_gate) == PIECES[0]:
                        gate.set()  # the server sends the rest only now
            return after, await speech.final()

    reply = gated(gate, *PIECES, content_type="audio/mpeg")
    with LoopbackServer([reply]) as server:
        after, speech = anyio.run(main, server)
        (sent,) = server.requests
    assert (sent.method, sent.path) == ("POST", "/v1/audio/speech")
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.headers["accept"] == "*/*"
    assert json.loads(sent.body) == {
        "model": "gpt-4o-mini-tts",
        "input": "Hello there.",
        "voice": "coral",
        "response_format": "mp3",
        "speed": 1.25,
    }
    assert b"".join(before_gate) == PIECES[0]
    assert b"".join(after) == PIECES[1] + PIECES[2]
    audio = speech.audio
    assert audio.source.blob.data == b"".join(PIECES)  # type: ignore[union-attr]
    assert (audio.media_type, audio.transcript) == ("audio/mpeg", "Hello there.")
    assert speech.usage is None and speech.unknown == ()
    assert speech.cost.unknown == ("openai:gpt-4o-mini-tts: the response reported no usage",)


def test_sse_events_are_decoded_exactly_with_usage_and_cost() -> None:
    gate = threading.Event()
    body = (delta(PIECES[0]), delta(PIECES[1]) + delta(PIECES[2]), DONE)
    reply = gated(
        gate, *body, content_type="text/event-stream", headers={"x-request-id": "req_tts_1"}
    )
    with LoopbackServer([reply]) as server:
        with SyncClient(env=env(server), max_retries=0) as client:
            speech = client.speak_stream(
                MODEL, "Hi.", format="pcm", instructions="Calm.", stream_format="sse"
            )
            with speech:
                first = next(speech)
                gate.set()
                rest = list(speech)
                whole = speech.final()
        (sent,) = server.requests
    assert json.loads(sent.body) == {
        "model": "gpt-4o-mini-tts",
        "input": "Hi.",
        "voice": "alloy",
        "response_format": "pcm",
        "instructions": "Calm.",
        "stream_format": "sse",
    }
    assert sent.headers["accept"] == "text/event-stream"
    assert [first, *rest] == list(PIECES)
    assert whole.audio.source.blob.data == b"".join(PIECES)  # type: ignore[union-attr]
    assert whole.audio.media_type == "audio/pcm"
    assert whole.usage == Usage(input=14, output=120, raw=DONE_USAGE)
    # gpt-4o-mini-tts: $0.60 per million text tokens in, $12 per million audio tokens out
    assert whole.cost.total == Decimal("0.0014484")
    assert whole.request_id == "req_tts_1" and speech.core.received == sum(map(len, PIECES))


def test_an_unknown_event_is_kept_whole_and_the_audio_goes_on() -> None:
    note = {"type": "speech.audio.note", "detail": {"n": 1}}
    body = delta(PIECES[0]) + event(note) + delta(PIECES[1]) + DONE
    with (
        LoopbackServer([events(body)]) as server,
        SyncClient(env=env(server), max_retries=0) as client,
    ):
        speech = client.speak_stream(MODEL, "Hi.", stream_format="sse")
        with speech:
            pieces = list(speech)
            whole = speech.final()
    assert pieces == [PIECES[0], PIECES[1]]
    assert whole.unknown == (UnknownBlock(note),)


@pytest.mark.parametrize(
    ("frame", "why"),
    [
        (
            event({"type": "speech.audio.delta", "audio": "not base64!"}),
            "whose audio is not base64",
        ),
        (event({"type": "speech.audio.delta"}), "without base64 audio"),
        (b"data: {oops\n\n", "sent an event that is not JSON"),
        (b"data: [1, 2]\n\n", "sent an event that is not a JSON object"),
        (
            b"data: " + b"[" * 100_000 + b"]" * 100_000 + b"\n\n",
            "sent an event that is not JSON: JSON nested too deeply to decode",
        ),
        (event({"audio": "AAAA"}), "sent an event without a type"),
        (
            event({"type": "speech.audio.done", "usage": {"input_tokens": "14"}}),
            "holds a input_tokens that is no count: '14'",
        ),
    ],
)
def test_a_malformed_event_is_a_typed_error_after_the_audio_before_it(
    frame: bytes, why: str
) -> None:
    body = delta(PIECES[0]) + frame + delta(PIECES[1]) + DONE
    got: list[bytes] = []
    with (
        LoopbackServer([events(body)]) as server,
        SyncClient(env=env(server), max_retries=0) as client,
    ):
        speech = client.speak_stream(MODEL, "Hi.", stream_format="sse")
        with speech, pytest.raises(MalformedStreamError) as info:
            for piece in speech:
                got.append(piece)
    assert got == [PIECES[0]]
    assert why in str(info.value)


def test_an_sse_answer_without_its_done_event_is_incomplete() -> None:
    server = LoopbackServer([events(delta(PIECES[0]))])
    with server, SyncClient(env=env(server), max_retries=0) as client:
        speech = client.speak_stream(MODEL, "Hi.", stream_format="sse")
        with speech, pytest.raises(IncompleteStreamError):
            speech.final()
        assert speech.core.received == len(PIECES[0])


def test_a_raw_body_cut_by_a_reset_is_a_transport_error_not_short_audio() -> None:
    reply = Reply(
        200, {"content-type": "audio/mpeg"}, (Send(PIECES[0]), Pause(0.02), Reset()), chunked=True
    )
    server = LoopbackServer([reply])
    with server, SyncClient(env=env(server), max_retries=0) as client:
        speech = client.speak_stream(MODEL, "Hi.")
        with speech, pytest.raises(TransportError):
            speech.final()


def test_an_error_event_is_the_providers_typed_error_with_the_key_redacted() -> None:
    error = {"type": "error", "error": {"type": "server_error", "message": f"bad key {KEY}"}}
    with (
        LoopbackServer([events(delta(PIECES[0]) + event(error))]) as server,
        SyncClient(env=env(server), max_retries=0) as client,
    ):
        speech = client.speak_stream(MODEL, "Hi.", stream_format="sse")
        with speech, pytest.raises(StreamError) as info:
            speech.final()
    assert "bad key" in str(info.value) and KEY not in str(info.value)
    assert info.value.kind != "malformed-stream"


def test_an_error_status_is_typed_and_retried_before_content() -> None:
    body = b'{"error": {"message": "Incorrect API key: sk-speech-secret-0123456789"}}'
    with (
        LoopbackServer([status(401, body)]) as server,
        SyncClient(env=env(server), max_retries=0) as client,
    ):
        speech = client.speak_stream(MODEL, "Hi.")
        with pytest.raises(AuthenticationError) as info, speech:
            speech.final()
    assert KEY not in str(info.value) and "Incorrect API key" in str(info.value)

    overloaded = status(503, b'{"error": {"message": "busy"}}', headers={"retry-after": "0"})
    audio = Reply(200, {"content-type": "audio/wav"}, (Send(PIECES[0]),), chunked=True)
    with LoopbackServer([overloaded, audio]) as server:
        with SyncClient(env=env(server), max_retries=1) as client:
            speech = client.speak_stream(MODEL, "Hi.", format="wav")
            with speech:
                whole = speech.final()
        assert len(server.requests) == 2
    assert [r.status for r in speech.retries] == [503]
    assert whole.audio.source.blob.data == PIECES[0]  # type: ignore[union-attr]


def test_bad_arguments_are_typed_errors_before_any_request() -> None:
    with SyncClient(env={"OPENAI_API_KEY": "k", "ELELEM_CONFIG": "/x"}) as client:
        with pytest.raises(ConfigError, match="unknown speech stream_format 'ws'"):
            client.speak_stream(MODEL, "Hi.", stream_format="ws")
        with pytest.raises(ConfigError, match="unknown speech format 'midi'"):
            client.speak_stream(MODEL, "Hi.", format="midi")
    anthropic = SyncClient(env={"ANTHROPIC_API_KEY": "k", "ELELEM_CONFIG": "/x"})
    with anthropic, pytest.raises(UnsupportedError, match="no speech endpoint"):
        anthropic.speak_stream("anthropic:claude-sonnet-4-5", "Hi.")


def test_the_parser_is_sans_io_frames_in_chunks_out() -> None:
    sse = SpeechParser(ProviderId("openai"), "gpt-4o-mini-tts", "audio/mpeg", sse=True)
    assert sse.open(200, {}) == [
        ResponseStart(provider=ProviderId("openai"), model="gpt-4o-mini-tts")
    ]
    data = delta(b"\x01\x02")[6:-2].decode()
    assert sse.message("", data) == [
        BlockStart(
            1,
            "audio",
            raw={
                "type": "audio",
                "source": {"kind": "bytes", "blob": {"base64": "AQI="}},
                "media_type": "audio/mpeg",
            },
        ),
        BlockEnd(1),
    ]
    done = json.dumps({"type": "speech.audio.done", "usage": DONE_USAGE})
    assert sse.message("", done) == [
        UsageUpdate(Usage(input=14, output=120, raw=DONE_USAGE)),
        Finish("stop"),
    ]
    assert list(sse.eof()) == []
    raw = SpeechParser(ProviderId("openai"), "tts-1", "audio/wav", sse=False)
    assert raw.message("", b"") == []
    assert [type(c) for c in raw.message("", b"RIFF")] == [BlockStart, BlockEnd]
    assert raw.eof() == [Finish("stop")]


def test_a_json_answer_where_audio_was_asked_is_malformed() -> None:
    with (
        LoopbackServer([status(200, b'{"ok": true}')]) as server,
        SyncClient(env=env(server), max_retries=0) as client,
    ):
        speech = client.speak_stream(MODEL, "Hi.")
        with speech, pytest.raises(MalformedStreamError, match="answered JSON, not audio"):
            speech.final()


class Recorder:
    """A request hook keeping what each response ended with."""

    def __init__(self) -> None:
        self.ended: list[tuple[str, Any, BaseException | None]] = []

    def start(self, stream: Any) -> Recorder.Span:
        return Recorder.Span(self, stream.request.model)

    class Span:
        def __init__(self, recorder: Recorder, model: str) -> None:
            self.recorder, self.model = recorder, model

        def end(self, result: Any, error: BaseException | None) -> None:
            self.recorder.ended.append((self.model, result, error))


def test_async_sse_tells_the_hooks_the_usage() -> None:
    recorder = Recorder()

    async def main(server: LoopbackServer) -> list[bytes]:
        async with Client(env=env(server), max_retries=0, hooks=[recorder]) as client:
            speech = client.speak_stream(MODEL, "Hi.", stream_format="sse")
            async with speech:
                return [piece async for piece in speech]

    with LoopbackServer([events(delta(PIECES[0]) + delta(PIECES[1]) + DONE)]) as server:
        pieces = anyio.run(main, server)
    assert pieces == [PIECES[0], PIECES[1]]
    ((model, result, error),) = recorder.ended
    assert (model, error) == ("gpt-4o-mini-tts", None)
    assert result.usage == Usage(input=14, output=120, raw=DONE_USAGE)
    assert [type(b).__name__ for b in result.content] == ["AudioBlock", "AudioBlock"]
