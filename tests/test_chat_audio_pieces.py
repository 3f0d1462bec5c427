"""Chat Completions audio out, each streamed piece base64 on its own (#42).

platform.openai.com/docs/guides/audio and the chat streaming object
(platform.openai.com/docs/api-reference/chat-streaming/streaming): a
streamed response carries generated audio as ``delta.audio`` objects whose
``data`` is base64; a server may encode each piece on its own (padding
and all), as other clients decode them piece by piece.  Joining those
strings before decoding gave no base64: the audio was an unknown field, no
file was written, and the next request sent the whole audio back instead of
``{"id"}``.  Now each piece is decoded in turn into one audio block, and the
follow-up names the audio by its id.
"""

from __future__ import annotations

import base64
import itertools
import json
import struct
from typing import Any

from elelem.providers import load_shape
from elelem.shapes.openai_chat.blocks import AUDIO_FORMAT
from elelem.shapes.openai_chat.parser import ChatParser, parse_body
from elelem.stream import AssembledResponse, Assembler, Chunk
from elelem.vocabulary import AudioBlock, Message, ProviderId
from elelem.wire import ModelRequest

CHAT = ProviderId("openai-chat")


def _wav(samples: int) -> bytes:
    data = bytes(range(256)) * (samples * 2 // 256 + 1)
    data = data[: samples * 2]
    header = b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt "
    header += struct.pack("<IHHIIHH", 16, 1, 1, 24000, 48000, 2, 16)
    return header + b"data" + struct.pack("<I", len(data)) + data


WAV = _wav(12000)  # half a second at 24 kHz
CUTS = (0, 1001, 1003, 9998, len(WAV))  # uneven: the pieces' base64 is padded


def _assemble(chunks: list[Chunk]) -> AssembledResponse:
    assembler = Assembler(CHAT)
    assembler.feed_all(chunks)
    return assembler.result()


def _frame(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "model": "gpt-4o-audio",
        "choices": [choice],
    }


def _pieces() -> list[str]:
    return [base64.b64encode(WAV[a:b]).decode() for a, b in itertools.pairwise(CUTS)]


def _follow_up(answer: Message) -> dict[str, Any]:
    shape: Any = load_shape("openai_chat").with_dialect("openai")
    request = ModelRequest("gpt-4o-audio", (Message.user("Hi"), answer, Message.user("Again")))
    body: dict[str, Any] = shape.encode_request(request, provider=CHAT, stream=True).body
    return body["messages"][1]


def test_streamed_pieces_each_base64_on_their_own_decode_into_one_audio_block() -> None:
    pieces = _pieces()
    assert all(p.endswith("=") for p in pieces[:-1])  # padded inside: joined, no base64
    parser = ChatParser(CHAT)
    chunks: list[Chunk] = list(
        parser.feed_object(
            _frame({"role": "assistant", "audio": {"id": "audio_7", "transcript": "Hel"}})
        )
    )
    for i, piece in enumerate(pieces):
        delta = {"audio": {"data": piece, "transcript": "lo" if i == 0 else ""}}
        chunks += parser.feed_object(_frame(delta))
    chunks += parser.feed_object(_frame({"audio": {"expires_at": 1729201019}}, "stop"))
    chunks += parser.end()
    [audio] = _assemble(chunks).blocks
    assert isinstance(audio, AudioBlock)
    assert audio.source.blob.data == WAV  # type: ignore[union-attr]
    assert (audio.media_type, audio.duration, audio.transcript) == ("audio/wav", 0.5, "Hello")
    assert [(p.format, p.value) for p in audio.payloads] == [
        (AUDIO_FORMAT, {"id": "audio_7", "expires_at": 1729201019})
    ]
    answer = Message("assistant", (audio,), "assistant", CHAT, "gpt-4o-audio")
    assert _follow_up(answer) == {"role": "assistant", "content": "", "audio": {"id": "audio_7"}}


def test_a_whole_body_audio_is_one_piece_and_goes_back_by_its_id() -> None:
    audio_field = {
        "id": "audio_8",
        "data": base64.b64encode(WAV).decode(),
        "expires_at": 1729201019,
        "transcript": "Hello",
    }
    body = {
        "id": "c",
        "object": "chat.completion",
        "model": "gpt-4o-audio",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "audio": audio_field},
                "finish_reason": "stop",
            }
        ],
    }
    [audio] = _assemble(parse_body(json.dumps(body).encode(), CHAT)).blocks
    assert isinstance(audio, AudioBlock) and audio.source.blob.data == WAV  # type: ignore[union-attr]
    answer = Message("assistant", (audio,), "assistant", CHAT, "gpt-4o-audio")
    assert _follow_up(answer) == {"role": "assistant", "content": "", "audio": {"id": "audio_8"}}


def test_pieces_that_are_no_base64_either_way_stay_as_they_came() -> None:
    parser = ChatParser(CHAT)
    chunks: list[Chunk] = []
    for piece in ("not base64!", "AAA="):
        chunks += parser.feed_object(_frame({"audio": {"id": "audio_9", "data": piece}}))
    chunks += parser.feed_object(_frame({}, "stop"))
    chunks += parser.end()
    [kept] = _assemble(chunks).blocks
    assert not isinstance(kept, AudioBlock)
    assert kept.raw["value"] == {"id": "audio_9", "data": "not base64!AAA="}  # type: ignore[union-attr]


def test_an_audio_attachment_to_a_model_without_audio_input_is_warned_before_sending() -> None:
    from elelem.client.preflight import ModelWarning, preflight

    voice = AudioBlock.from_bytes(WAV, filename="voice.wav")
    request = ModelRequest("gpt-5", (Message("user", (voice,), "user"),))
    assert preflight("openai", "gpt-5", request) == (
        ModelWarning(
            "modality", "openai:gpt-5 does not take audio input (it takes text, image, pdf)"
        ),
    )
    # A model whose inputs the catalog does not list is not warned about.
    assert preflight("openai", "gpt-4o-audio-preview", request) == ()
