"""The ``audio`` block: registered, mapped by every shape whose wire takes
audio (Gemini inline data and file URIs, Chat Completions ``input_audio``,
Bedrock Converse ``audio``) and reported as a structured drop by every other;
kept in the blob store and through an export; shown as a line; priced by
duration.  Wire forms are written from each provider's API reference."""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace as msgspec_replace

from elelem import codec
from elelem.conversation import Conversation, open_store
from elelem.conversation.export import export_conversation, import_conversation
from elelem.errors import AttachmentTooLargeError, DecodeError
from elelem.providers import load_shape
from elelem.render.lines import attachment_line
from elelem.tokens import estimate_messages
from elelem.vocabulary import (
    AudioBlock,
    Drop,
    FileSource,
    Message,
    ProviderId,
    ProviderPayload,
    TextBlock,
)
from elelem.vocabulary.audio import audio_media_type, wav_duration
from elelem.vocabulary.registry import block_type
from elelem.wire import ModelRequest


def wav(seconds: float, rate: int = 8000) -> bytes:
    """A mono 16-bit PCM WAV of silence."""
    frames = int(seconds * rate)
    data = b"\x00\x00" * frames
    fmt = struct.pack("<HHIIHH", 1, 1, rate, rate * 2, 2, 16)
    chunks = b"fmt " + struct.pack("<I", 16) + fmt + b"data" + struct.pack("<I", len(data)) + data
    return b"RIFF" + struct.pack("<I", 4 + len(chunks)) + b"WAVE" + chunks


VOICE = AudioBlock.from_bytes(wav(0.5), filename="voice.wav")
B64 = VOICE.source.blob.base64()  # type: ignore[union-attr]


def encode(shape_name: str, provider: str, block: Any = VOICE, dialect: str | None = None) -> Any:
    shape: Any = load_shape(shape_name)
    if dialect is not None:
        shape = shape.with_dialect(dialect)
    message = Message("user", (TextBlock("What is said?"), block))
    request = ModelRequest(model="m", messages=(message,))
    return shape.encode_request(request, provider=ProviderId(provider), stream=False)


def test_the_block_is_registered_and_reads_its_header() -> None:
    assert block_type("audio") is AudioBlock
    assert (VOICE.media_type, VOICE.duration, VOICE.format) == ("audio/wav", 0.5, "wav")
    assert wav_duration(wav(2.25)) == 2.25
    assert audio_media_type(b"ID3\x04rest") == "audio/mpeg"
    assert audio_media_type(b"OggS\x00", None) == "audio/ogg"
    assert audio_media_type(b"??", "talk.flac") == "audio/flac"
    assert audio_media_type(b"%PDF-1.7") is None
    with pytest.raises(DecodeError, match="not audio elelem recognises"):
        AudioBlock.from_bytes(b"%PDF-1.7", filename="x.pdf")
    with pytest.raises(DecodeError, match="audio's media type must be audio"):
        AudioBlock.from_url("https://x/a.png", "image/png")
    with pytest.raises(DecodeError, match="duration must be seconds"):
        AudioBlock.from_url("https://x/a.wav", "audio/wav", duration=-1.0)


def test_gemini_takes_inline_audio_and_file_uris() -> None:
    body = encode("gemini", "google").body
    assert body["contents"] == [
        {
            "role": "user",
            "parts": [
                {"text": "What is said?"},
                {"inlineData": {"mimeType": "audio/wav", "data": B64}},
            ],
        }
    ]
    uri = "https://generativelanguage.googleapis.com/v1beta/files/abc"
    by_file = AudioBlock(
        FileSource(ProviderPayload(ProviderId("google"), "file", "1", uri)), "audio/mpeg"
    )
    part = encode("gemini", "google", by_file).body["contents"][0]["parts"][1]
    assert part == {"fileData": {"mimeType": "audio/mpeg", "fileUri": uri}}


def test_openai_chat_takes_wav_and_mp3_as_input_audio() -> None:
    encoded = encode("openai_chat", "openai-chat", dialect="openai")
    assert encoded.body["messages"][0]["content"] == [
        {"type": "text", "text": "What is said?"},
        {"type": "input_audio", "input_audio": {"data": B64, "format": "wav"}},
    ]
    assert encoded.dropped == ()
    flac = AudioBlock.from_bytes(b"fLaC" + b"\x00" * 40)
    dropped = encode("openai_chat", "openai-chat", flac, dialect="openai").dropped
    assert dropped == (
        Drop(
            "messages[0].content[1]",
            "audio",
            "unsupported",
            "Chat Completions takes WAV or MP3 bytes, not type audio/flac",
        ),
    )


def test_bedrock_converse_audio_block() -> None:
    content = encode("bedrock_converse", "bedrock").body["messages"][0]["content"]
    assert content == [
        {"text": "What is said?"},
        {"audio": {"format": "wav", "source": {"bytes": B64}}},
    ]
    s3 = AudioBlock.from_url("s3://bucket/talk.mp3", "audio/mpeg")
    content = encode("bedrock_converse", "bedrock", s3).body["messages"][0]["content"]
    assert content[1] == {
        "audio": {"format": "mp3", "source": {"s3Location": {"uri": "s3://bucket/talk.mp3"}}}
    }


@pytest.mark.parametrize(
    ("shape", "provider", "dialect", "where"),
    [
        ("anthropic_messages", "anthropic", None, "messages[0].content[1]"),
        ("openai_responses", "openai", None, "messages[0].content[1]"),
        ("openai_chat", "groq", "groq", "messages[0].content[1]"),
        ("ollama_native", "ollama-native", None, "messages[0].content[1]"),
    ],
)
def test_every_other_wire_reports_a_structured_drop(
    shape: str, provider: str, dialect: str | None, where: str
) -> None:
    encoded = encode(shape, provider, dialect=dialect)
    drops = [d for d in encoded.dropped if d.what == "audio"]
    assert len(drops) == 1, encoded.dropped
    assert (drops[0].where, drops[0].why) == (where, "unsupported")
    assert B64 not in codec.dumps(encoded.body).decode()


def test_inline_audio_over_the_limit_is_refused_before_sending() -> None:
    big = AudioBlock.from_bytes(b"RIFF\x00\x00\x00\x00WAVE" + b"\x00" * (20 * 1024 * 1024))
    with pytest.raises(AttachmentTooLargeError, match="Gemini takes audio up to 20,971,520 bytes"):
        encode("gemini", "google", big)


def test_audio_is_a_blob_in_the_store_and_survives_an_export(tmp_path: Path) -> None:
    store = open_store(tmp_path / "a.db")
    conversation = Conversation.create(store)
    conversation.start_turn(model="google:gemini-x")
    conversation.add_message(Message("user", (TextBlock("Listen"), VOICE)))
    blob = VOICE.source.blob  # type: ignore[union-attr]
    assert store.has_blob(blob.sha256)
    raw = store.load_bytes(conversation.id)
    assert B64 not in b"".join(raw).decode()  # the event holds the reference, not the bytes
    exported = export_conversation(store, conversation.id)
    other = open_store(tmp_path / "b.db")
    imported = import_conversation(other, exported)
    [message] = Conversation.open(other, imported.id).history()
    audio = message.content[1]
    assert isinstance(audio, AudioBlock)
    assert audio.source.blob.data == blob.data  # type: ignore[union-attr]
    assert (audio.duration, audio.filename) == (0.5, "voice.wav")
    store.close()
    other.close()


def test_shown_as_a_line_and_priced_by_duration() -> None:
    said = AudioBlock.from_bytes(wav(1.5), filename="a.wav", transcript="Hello\x1b[2J there")
    assert attachment_line(said) == '[audio a.wav 1.5 s, 23 KB, "Hello there"]'
    gemini = estimate_messages([Message("user", (said,))], "google")
    assert gemini.audio == 48  # 32 tokens a second
    openai = estimate_messages(
        [Message("user", (AudioBlock.from_url("https://x/a.mp3", "audio/mpeg"),))], "openai"
    )
    assert (openai.audio, openai.exact_inputs) == (300, False)  # 30 s assumed


# -- generated audio ------------------------------------------------------------


def assembled(chunks: list[Any]) -> Any:
    from elelem.stream import Assembler

    assembler = Assembler(ProviderId("openai-chat"))
    assembler.feed_all(chunks)
    return assembler.result()


def test_chat_message_audio_becomes_an_audio_block() -> None:
    from elelem.shapes.openai_chat.blocks import AUDIO_FORMAT
    from elelem.shapes.openai_chat.parser import parse_body

    body = {
        "id": "chatcmpl-AJ",
        "object": "chat.completion",
        "model": "gpt-4o-audio-preview-2024-10-01",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "refusal": None,
                    "audio": {
                        "id": "audio_6711f92b13a0819086d2e4e0d8ae9a3a",
                        "data": B64,
                        "expires_at": 1729201019,
                        "transcript": "Yes, golden retrievers are known to be good family dogs.",
                    },
                },
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 17, "completion_tokens": 68, "total_tokens": 85},
    }
    result = assembled(parse_body(codec.dumps(body), ProviderId("openai-chat")))
    [audio] = result.blocks
    assert isinstance(audio, AudioBlock)
    assert audio.source.blob.data == VOICE.source.blob.data  # type: ignore[union-attr]
    assert (audio.media_type, audio.duration) == ("audio/wav", 0.5)
    assert audio.transcript == "Yes, golden retrievers are known to be good family dogs."
    [payload] = audio.payloads
    assert (payload.format, payload.value) == (
        AUDIO_FORMAT,
        {"id": "audio_6711f92b13a0819086d2e4e0d8ae9a3a", "expires_at": 1729201019},
    )


def test_chat_streamed_audio_deltas_join_into_one_block() -> None:
    from elelem.shapes.openai_chat.parser import ChatParser

    parser = ChatParser(ProviderId("openai-chat"))
    half = len(B64) // 2
    frames = [
        {"id": "c", "choices": [{"index": 0, "delta": {"role": "assistant", "audio": {"id": "audio_1", "transcript": "Hel"}}}]},
        {"id": "c", "choices": [{"index": 0, "delta": {"audio": {"data": B64[:half], "transcript": "lo"}}}]},
        {"id": "c", "choices": [{"index": 0, "delta": {"audio": {"data": B64[half:], "expires_at": 7}}}]},
        {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]  # fmt: skip
    chunks: list[Any] = []
    for frame in frames:
        chunks += parser.feed_object(frame)
    chunks += parser.end()
    [audio] = assembled(chunks).blocks
    assert isinstance(audio, AudioBlock) and audio.transcript == "Hello"
    assert audio.source.blob.data == VOICE.source.blob.data  # type: ignore[union-attr]
    assert audio.payloads[0].value == {"id": "audio_1", "expires_at": 7}


def test_gemini_tts_inline_audio_becomes_an_audio_block() -> None:
    from elelem.shapes.gemini.parser import parse_body

    pcm = base64.b64encode(b"\x01\x00" * 240).decode()
    body_part = {"inlineData": {"mimeType": "audio/L16;codec=pcm;rate=24000", "data": pcm}}
    body = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [{"inlineData": {"mimeType": "audio/L16;codec=pcm;rate=24000", "data": pcm}}],
                },
                "finishReason": "STOP",
            }
        ],
        "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 12},
        "modelVersion": "gemini-2.5-flash-preview-tts",
    }  # fmt: skip
    [audio] = assembled(parse_body(codec.dumps(body), ProviderId("google"))).blocks
    assert isinstance(audio, AudioBlock)
    assert audio.media_type == "audio/L16;codec=pcm;rate=24000"
    assert audio.source.blob.data == b"\x01\x00" * 240  # type: ignore[union-attr]
    # replayed to Gemini as the part it came as
    reply = Message("assistant", (audio,), "assistant", ProviderId("google"), "gemini-tts")
    request = ModelRequest(model="m", messages=(Message.user("Say hi"), reply))
    encoded = load_shape("gemini").encode_request(
        request, provider=ProviderId("google"), stream=False
    )
    assert encoded.body["contents"][1]["parts"] == [body_part]


def test_ask_sends_a_wav_and_writes_the_spoken_answer(tmp_path: Path) -> None:
    from cli_helpers import base_env, run
    from elelem.testing.servers import LoopbackServer, replay, sse_body

    voice = tmp_path / "voice.wav"
    voice.write_bytes(wav(0.5))
    answer = {"id": "c", "object": "chat.completion.chunk", "model": "gpt-4o-audio-preview",
              "choices": [{"index": 0, "delta": {"role": "assistant", "audio": {
                  "id": "audio_9", "data": B64, "transcript": "It says hello.",
                  "expires_at": 1729201019}}, "finish_reason": "stop"}]}  # fmt: skip
    config = tmp_path / "elelem.toml"
    out = tmp_path / "spoken"
    with LoopbackServer(
        [replay(sse_body([(None, json.dumps(answer)), (None, "[DONE]")]))]
    ) as server:
        config.write_text(
            f'[providers.speech]\ncompatible = "openai"\nbase_url = "{server.url}/v1"\n'
            'dialect = "openai"\n'
        )
        env = base_env(tmp_path, ELELEM_CONFIG=str(config))
        result = run(env, "ask", "-m", "speech:gpt-4o-audio-preview", "-a", str(voice),
                     "--audio-out", str(out), "What does it say?")  # fmt: skip
        sent = json.loads(server.requests[0].body)
    assert result.returncode == 0, result.stderr
    assert sent["messages"][0]["content"][0] == {
        "type": "input_audio",
        "input_audio": {"data": B64, "format": "wav"},
    }
    assert '[audio 0.5 s, 8 KB, "It says hello."]' in result.stdout
    (written,) = sorted(out.iterdir())
    assert written.suffix == ".wav" and written.read_bytes() == wav(0.5)
    assert f"audio saved to {written}\n" in result.stderr


def test_generated_chat_audio_goes_back_by_its_id() -> None:
    from elelem.shapes.openai_chat.blocks import AUDIO_FORMAT

    spoken = AudioBlock.from_bytes(wav(0.5), transcript="Hi.")
    payload = ProviderPayload(ProviderId("openai-chat"), AUDIO_FORMAT, None, {"id": "audio_1"})
    spoken = msgspec_replace(spoken, payloads=(payload,))
    assistant = Message(
        "assistant", (spoken,), "assistant", ProviderId("openai-chat"), "gpt-4o-audio"
    )
    shape: Any = load_shape("openai_chat")
    shape = shape.with_dialect("openai")
    request = ModelRequest(
        model="m", messages=(Message.user("Hello"), assistant, Message.user("Again"))
    )
    body = shape.encode_request(request, provider=ProviderId("openai-chat"), stream=False).body
    assert body["messages"][1] == {"role": "assistant", "content": "", "audio": {"id": "audio_1"}}


# -- the speech endpoints ----------------------------------------------------------


def test_speak_posts_audio_speech_and_returns_the_bytes_as_audio() -> None:
    from elelem import SyncClient
    from elelem.testing.servers import LoopbackServer, status

    spoken = wav(0.25)
    with LoopbackServer([status(200, spoken, content_type="audio/wav")]) as server:
        env = {
            "OPENAI_BASE_URL": server.url + "/v1",
            "OPENAI_API_KEY": "sk-s",
            "ELELEM_CONFIG": "/x",
        }
        with SyncClient(env=env, max_retries=0) as client:
            audio = client.speak("openai:gpt-4o-mini-tts", "Hello there.", voice="coral",
                                 format="wav", instructions="Cheerful.")  # fmt: skip
        (sent,) = server.requests
    assert (sent.method, sent.path) == ("POST", "/v1/audio/speech")
    assert json.loads(sent.body) == {
        "model": "gpt-4o-mini-tts",
        "input": "Hello there.",
        "voice": "coral",
        "response_format": "wav",
        "instructions": "Cheerful.",
    }
    assert audio.source.blob.data == spoken  # type: ignore[union-attr]
    assert (audio.media_type, audio.duration, audio.transcript) == (
        "audio/wav",
        0.25,
        "Hello there.",
    )


def test_transcribe_uploads_the_audio_and_reads_the_text() -> None:
    import anyio

    from elelem import Client
    from elelem.testing.servers import LoopbackServer, status

    answer = {"text": "Hello there.", "usage": {"type": "tokens", "input_tokens": 14,
              "output_tokens": 4, "total_tokens": 18}}  # fmt: skip

    async def main(server: LoopbackServer) -> Any:
        env = {
            "OPENAI_BASE_URL": server.url + "/v1",
            "OPENAI_API_KEY": "sk-t",
            "ELELEM_CONFIG": "/x",
        }
        async with Client(env=env, max_retries=0) as client:
            return await client.transcribe("openai:gpt-4o-transcribe", VOICE, language="en")

    with LoopbackServer([status(200, json.dumps(answer).encode())]) as server:
        heard = anyio.run(main, server)
        (sent,) = server.requests
    assert (sent.method, sent.path) == ("POST", "/v1/audio/transcriptions")
    kind, _, boundary = sent.headers["content-type"].partition("; boundary=")
    assert kind == "multipart/form-data"
    parts = sent.body.split(b"--" + boundary.encode())[1:-1]
    fields = {}
    for part in parts:
        head, _, value = part.partition(b"\r\n\r\n")
        fields[head.split(b'name="')[1].split(b'"')[0].decode()] = (head, value[:-2])
    assert fields["model"][1] == b"gpt-4o-transcribe"
    assert fields["response_format"][1] == b"json" and fields["language"][1] == b"en"
    file_head, data = fields["file"]
    assert b'filename="voice.wav"' in file_head and b"Content-Type: audio/wav" in file_head
    assert data == VOICE.source.blob.data  # type: ignore[union-attr]
    assert (heard.text, heard.usage) == ("Hello there.", answer["usage"])


def test_speech_on_a_wire_without_the_endpoint_is_unsupported() -> None:
    from elelem import SyncClient
    from elelem.errors import UnsupportedError

    client = SyncClient(env={"ANTHROPIC_API_KEY": "k", "ELELEM_CONFIG": "/x"})
    with client, pytest.raises(UnsupportedError, match="provider anthropic has no speech endpoint"):
        client.speak("anthropic:claude-x", "hi")


def test_an_audio_file_from_the_browser_becomes_an_audio_block() -> None:
    from elelem.web.messages import messages_from_ui

    ui = [{"id": "m1", "role": "user", "parts": [
        {"type": "file", "mediaType": "audio/wav", "filename": "voice.wav",
         "url": "data:audio/wav;base64," + B64},
        {"type": "text", "text": "What is said?"},
    ]}]  # fmt: skip
    [message] = messages_from_ui(ui)
    audio = message.content[0]
    assert isinstance(audio, AudioBlock)
    assert (audio.filename, audio.duration, audio.media_type) == ("voice.wav", 0.5, "audio/wav")


def test_the_ui_message_stream_sends_audio_as_a_file_part() -> None:
    from elelem.stream import BlockEnd, BlockStart
    from elelem.web.ui_chunks import UIMessageEncoder

    encoder = UIMessageEncoder()
    raw = {"type": "audio", "source": {"kind": "bytes", "blob": {"base64": B64}},
           "media_type": "audio/wav"}  # fmt: skip
    committed = AudioBlock(VOICE.source, "audio/wav")
    out = encoder.feed(BlockStart("a", "audio", raw=raw))
    out += encoder.feed(BlockEnd("a"), (committed,))
    assert {"type": "file", "mediaType": "audio/wav", "url": "data:audio/wav;base64," + B64} in out
