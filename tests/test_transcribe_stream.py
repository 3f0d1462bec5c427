"""Streamed speech to text (``Client.transcribe_stream``, issue #30) on a
loopback stand-in of OpenAI's ``POST /v1/audio/transcriptions``.

The events are written from OpenAI's API reference (no recording of this
endpoint exists in the corpus): ``transcript.text.delta`` (``delta``) for
each piece and ``transcript.text.done`` (``text``, ``usage`` of type
``tokens`` with ``input_token_details``) last.  The server holds the rest
of the body behind a gate only the client opens once it has the first
piece: the text reaches the caller before the body ends.
"""

from __future__ import annotations

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
)
from elelem.shapes.openai_responses.transcription import TranscriptionParser
from elelem.speech.endpoints import Transcript
from elelem.stream import BlockEnd, BlockStart, Finish, ResponseStart, TextDelta, UsageUpdate
from elelem.testing.servers import Await, LoopbackServer, Pause, Reply, Send, status
from elelem.vocabulary import AudioBlock, ProviderId, UnknownBlock, Usage

KEY = "sk-transcribe-secret-0123456789"
MODEL = "openai:gpt-4o-transcribe"
VOICE = AudioBlock.from_bytes(b"RIFF\x24\x00\x00\x00WAVEfmt voice", "audio/wav", filename="v.wav")
AUDIO = b"RIFF\x24\x00\x00\x00WAVEfmt voice"
PIECES = ("Hello", " there,", " general.")
USAGE = {
    "type": "tokens",
    "input_tokens": 120,
    "input_token_details": {"text_tokens": 20, "audio_tokens": 100},
    "output_tokens": 30,
    "total_tokens": 150,
}


def env(server: LoopbackServer) -> dict[str, str]:
    return {"OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": KEY, "ELELEM_CONFIG": "/x"}


def event(obj: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def delta(text: str) -> bytes:
    return event({"type": "transcript.text.delta", "delta": text})


DONE_EVENT = {"type": "transcript.text.done", "text": "".join(PIECES), "usage": USAGE}
DONE = event(DONE_EVENT)


def events(body: bytes) -> Reply:
    return status(200, body, content_type="text/event-stream")


def fields(body: bytes, content_type: str) -> dict[str, bytes]:
    """The multipart form's fields by name (the file's value is its bytes)."""
    kind, _, boundary = content_type.partition("; boundary=")
    assert kind == "multipart/form-data"
    out = {}
    for part in body.split(b"--" + boundary.encode())[1:-1]:
        head, _, value = part.partition(b"\r\n\r\n")
        out[head.split(b'name="')[1].split(b'"')[0].decode()] = value[:-2]
    return out


def test_text_arrives_piece_by_piece_before_the_body_ends_priced_with_audio() -> None:
    gate = threading.Event()
    before: list[str] = []

    async def main(server: LoopbackServer) -> tuple[list[str], Transcript]:
        after: list[str] = []
        async with Client(env=env(server), max_retries=0) as client:
            heard = client.transcribe_stream(MODEL, VOICE, language="en", prompt="A greeting.")
            async with heard:
                async for text in heard:
                    if gate.is_set():
                        after.append(text)
                        continue
                    before.append(text)
                    gate.set()  # the server sends the rest only now
            return after, await heard.final()

    script = (
        Send(delta(PIECES[0])),
        Await(gate),
        Pause(0.02),
        Send(delta(PIECES[1])),
        Send(delta(PIECES[2]) + DONE),
    )
    head = {"content-type": "text/event-stream", "x-request-id": "req_stt_1"}
    with LoopbackServer([Reply(200, head, script, chunked=True)]) as server:
        after, whole = anyio.run(main, server)
        (sent,) = server.requests
    assert (sent.method, sent.path) == ("POST", "/v1/audio/transcriptions")
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.headers["accept"] == "text/event-stream"
    form = fields(sent.body, sent.headers["content-type"])
    assert form == {
        "model": b"gpt-4o-transcribe",
        "response_format": b"json",
        "language": b"en",
        "prompt": b"A greeting.",
        "stream": b"true",
        "file": VOICE.source.blob.data,  # type: ignore[union-attr]
    }
    assert before == [PIECES[0]] and after == [PIECES[1], PIECES[2]]
    assert whole.text == "Hello there, general."
    assert whole.usage == USAGE and whole.raw == DONE_EVENT
    # gpt-4o-transcribe: $2.50/M text in, $6/M audio in, $10/M out:
    # 20 * 2.5 + 100 * 6 + 30 * 10 = 950 per million
    assert whole.cost is not None and whole.cost.total == Decimal("0.00095")
    assert whole.unknown == () and whole.request_id == "req_stt_1"


def test_an_unknown_event_is_kept_whole_and_the_text_goes_on() -> None:
    note = {"type": "transcript.text.segment", "detail": {"start": 0.5}}
    body = delta(PIECES[0]) + event(note) + delta(PIECES[1]) + DONE
    with (
        LoopbackServer([events(body)]) as server,
        SyncClient(env=env(server), max_retries=0) as client,
    ):
        heard = client.transcribe_stream(MODEL, VOICE)
        with heard:
            got = list(heard)
            whole = heard.final()
    assert got == [PIECES[0], PIECES[1]]
    assert whole.text == "Hello there, general."  # the done event's text is the whole
    assert [type(part) for part in whole.unknown] == [UnknownBlock]
    assert whole.unknown[0].raw == note  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("frame", "why"),
    [
        (b"data: {oops\n\n", "the transcription stream sent an event that is not JSON"),
        (b"data: [1, 2]\n\n", "sent an event that is not a JSON object"),
        (
            b"data: " + b"[" * 100_000 + b"]" * 100_000 + b"\n\n",
            "sent an event that is not JSON: JSON nested too deeply to decode",
        ),
        (event({"delta": "x"}), "sent an event without a type"),
        (
            event({"type": "transcript.text.delta", "delta": 7}),
            "sent a transcript.text.delta whose delta is not text",
        ),
        (event({"type": "transcript.text.done"}), "sent a transcript.text.done without its text"),
        (
            event({"type": "transcript.text.done", "text": "x", "usage": {"input_tokens": -1}}),
            "transcript.text.done holds a input_tokens that is no count: -1",
        ),
    ],
)
def test_a_malformed_event_is_a_typed_error_after_the_text_before_it(
    frame: bytes, why: str
) -> None:
    body = delta(PIECES[0]) + frame + delta(PIECES[1]) + DONE
    got: list[str] = []
    with (
        LoopbackServer([events(body)]) as server,
        SyncClient(env=env(server), max_retries=0) as client,
    ):
        heard = client.transcribe_stream(MODEL, VOICE)
        with heard, pytest.raises(MalformedStreamError) as info:
            for text in heard:
                got.append(text)
    assert got == [PIECES[0]]
    assert why in str(info.value)


def test_a_stream_without_its_done_event_is_incomplete() -> None:
    server = LoopbackServer([events(delta(PIECES[0]) + delta(PIECES[1]))])
    with server, SyncClient(env=env(server), max_retries=0) as client:
        heard = client.transcribe_stream(MODEL, VOICE)
        with heard, pytest.raises(IncompleteStreamError):
            heard.final()


def test_an_error_event_and_status_are_typed_with_the_key_redacted() -> None:
    error = {"type": "error", "error": {"type": "server_error", "message": f"bad key {KEY}"}}
    with (
        LoopbackServer([events(delta(PIECES[0]) + event(error))]) as server,
        SyncClient(env=env(server), max_retries=0) as client,
    ):
        heard = client.transcribe_stream(MODEL, VOICE)
        with heard, pytest.raises(StreamError) as info:
            heard.final()
    assert "bad key" in str(info.value) and KEY not in str(info.value)
    assert info.value.kind != "malformed-stream"

    body = f'{{"error": {{"message": "Incorrect API key: {KEY}"}}}}'.encode()
    with (
        LoopbackServer([status(401, body)]) as server,
        SyncClient(env=env(server), max_retries=0) as client,
    ):
        heard = client.transcribe_stream(MODEL, VOICE)
        with pytest.raises(AuthenticationError) as auth, heard:
            heard.final()
    assert KEY not in str(auth.value) and "Incorrect API key" in str(auth.value)


def test_an_overloaded_answer_is_retried_before_any_text() -> None:
    overloaded = status(503, b'{"error": {"message": "busy"}}', headers={"retry-after": "0"})
    with LoopbackServer(
        [overloaded, events(delta("Hi.") + event({**DONE_EVENT, "text": "Hi."}))]
    ) as server:
        with SyncClient(env=env(server), max_retries=1) as client:
            heard = client.transcribe_stream(MODEL, VOICE)
            with heard:
                whole = heard.final()
        assert len(server.requests) == 2
    assert [r.status for r in heard.retries] == [503]
    assert whole.text == "Hi."


def test_whisper_is_asked_without_stream_and_its_answer_is_one_piece() -> None:
    answer = {"text": "Hello.", "usage": {"type": "duration", "seconds": 3.2}}
    with (
        LoopbackServer([status(200, json.dumps(answer).encode())]) as server,
        SyncClient(env=env(server), max_retries=0) as client,
    ):
        heard = client.transcribe_stream("openai:whisper-1", VOICE)
        with heard:
            got = list(heard)
            whole = heard.final()
        (sent,) = server.requests
    form = fields(sent.body, sent.headers["content-type"])
    assert "stream" not in form and form["model"] == b"whisper-1"
    assert got == ["Hello."]
    assert (whole.text, whole.usage, whole.raw) == ("Hello.", answer["usage"], answer)
    assert whole.cost is not None and whole.cost.total is None
    assert whole.cost.unknown == ("openai:whisper-1: usage of type 'duration' is not priced",)


def test_the_parser_is_sans_io_frames_in_chunks_out() -> None:
    parser = TranscriptionParser(ProviderId("openai"), "gpt-4o-mini-transcribe")
    assert parser.open(200, {}) == [
        ResponseStart(provider=ProviderId("openai"), model="gpt-4o-mini-transcribe")
    ]
    assert parser.message("", delta("Hi")[6:-2].decode()) == [
        BlockStart(0, "text"),
        TextDelta(0, "Hi"),
    ]
    assert parser.message("", delta("")[6:-2].decode()) == []
    assert parser.message("", DONE[6:-2].decode()) == [
        BlockEnd(0),
        UsageUpdate(Usage(input=120, output=30, raw=USAGE)),
        Finish("stop"),
    ]
    assert (parser.audio_tokens, parser.done) == (100, DONE_EVENT)
    assert list(parser.eof()) == []


class Hooked:
    """A request hook keeping each request's operation and what it ended with."""

    def __init__(self) -> None:
        self.ended: list[tuple[str, str, Any, BaseException | None]] = []

    def start(self, stream: Any) -> Hooked.Span:
        return Hooked.Span(self, stream.operation, stream.request.model)

    class Span:
        def __init__(self, hooked: Hooked, operation: str, model: str) -> None:
            self.hooked, self.operation, self.model = hooked, operation, model

        def end(self, result: Any, error: BaseException | None) -> None:
            self.hooked.ended.append((self.operation, self.model, result, error))


def test_the_hooks_see_a_transcribe_operation_with_its_usage() -> None:
    hooked = Hooked()

    async def main(server: LoopbackServer) -> list[str]:
        async with Client(env=env(server), max_retries=0, hooks=[hooked]) as client:
            heard = client.transcribe_stream(MODEL, VOICE.source.blob.data)  # type: ignore[union-attr]
            async with heard:
                return [text async for text in heard]

    with LoopbackServer([events(delta(PIECES[0]) + delta(PIECES[1]) + DONE)]) as server:
        got = anyio.run(main, server)
    assert got == [PIECES[0], PIECES[1]]
    ((operation, model, result, error),) = hooked.ended
    assert (operation, model, error) == ("transcribe", "gpt-4o-transcribe", None)
    assert result.usage == Usage(input=120, output=30, raw=USAGE)


def test_bad_text_is_refused_before_sending_and_a_hostile_filename_is_escaped() -> None:
    named = AudioBlock.from_bytes(AUDIO, "audio/wav", filename='a"\r\nX-Forged: 1.wav')
    body = delta("Hi.") + event({**DONE_EVENT, "text": "Hi."})
    with (
        LoopbackServer([events(body)]) as server,
        SyncClient(env=env(server), max_retries=0) as client,
    ):
        with pytest.raises(
            ConfigError, match=r"the prompt is not valid UTF-8 text \(at character 2\)"
        ):
            client.transcribe_stream(MODEL, VOICE, prompt="a\udcff")
        assert server.requests == []
        with client.transcribe_stream(MODEL, named) as heard:
            assert heard.final().text == "Hi."
        (sent,) = server.requests
    assert b'filename="a%22%0D%0AX-Forged: 1.wav"\r\nContent-Type: audio/wav\r\n' in sent.body
    assert b"\r\nX-Forged" not in sent.body
