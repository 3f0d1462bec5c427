"""The Python examples of docs/beyond-chat.md run as written, offline: every
provider they name is pointed at one loopback stand-in that answers each
endpoint as the provider documents it (embeddings, Message Batches,
generateContent, streamed audio/speech and audio/transcriptions)."""

from __future__ import annotations

import base64
import json
import re
import struct
from pathlib import Path
from typing import Any

import pytest

from elelem.testing.servers import LoopbackServer, RecordedRequest, Reply, status

DOC = Path(__file__).resolve().parent.parent / "docs" / "beyond-chat.md"
BATCH_ID = "msgbatch_01"


def _json(data: Any) -> Reply:
    return status(200, json.dumps(data).encode())


def _vector(n: int) -> str:
    return base64.b64encode(struct.pack(f"<{n}f", *([0.5] * n))).decode()


def _message(text: str) -> dict[str, Any]:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 2}}  # fmt: skip


def stand_in(request: RecordedRequest) -> Reply:
    path = request.path
    if path == "/v1/embeddings":
        inputs = json.loads(request.body)["input"]
        data = [{"index": i, "embedding": _vector(256)} for i in range(len(inputs))]
        return _json({"data": data, "usage": {"prompt_tokens": 4, "total_tokens": 4}})
    if path == "/v1/messages/batches":
        return _json({"id": BATCH_ID, "type": "message_batch", "processing_status": "in_progress",
                      "request_counts": {}, "results_url": None})  # fmt: skip
    if path == f"/v1/messages/batches/{BATCH_ID}":
        url = f"http://{request.headers['host']}/v1/messages/batches/{BATCH_ID}/results"
        return _json({"id": BATCH_ID, "type": "message_batch", "processing_status": "ended",
                      "request_counts": {"succeeded": 2}, "results_url": url})  # fmt: skip
    if path.endswith("/results"):
        lines = [
            {"custom_id": "r1", "result": {"type": "succeeded", "message": _message("Paris")}},
            {"custom_id": "it", "result": {"type": "succeeded", "message": _message("Rome")}},
        ]
        return status(200, b"\n".join(json.dumps(x).encode() for x in lines))
    if path == "/v1/audio/speech":
        pieces = [b"RIFF\x24\x00\x00\x00WAVE", b"fmt-and-data"]
        events: list[dict[str, Any]] = [{"type": "speech.audio.delta", "audio": base64.b64encode(p).decode()}
                  for p in pieces]  # fmt: skip
        usage = {"input_tokens": 14, "output_tokens": 120, "total_tokens": 134}
        events.append({"type": "speech.audio.done", "usage": usage})
        body = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)
        return status(200, body, content_type="text/event-stream")
    if path == "/v1/audio/transcriptions":
        heard: dict[str, Any] = {"type": "tokens", "input_tokens": 120, "output_tokens": 30,
                                 "total_tokens": 150,
                                 "input_token_details": {"text_tokens": 20, "audio_tokens": 100}}  # fmt: skip
        said: list[dict[str, Any]] = [
            {"type": "transcript.text.delta", "delta": d} for d in ("Hello", " there.")
        ]
        said.append({"type": "transcript.text.done", "text": "Hello there.", "usage": heard})
        body = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in said)
        return status(200, body, content_type="text/event-stream")
    if path.endswith(":generateContent"):
        return _json({"candidates": [{"content": {"role": "model", "parts": [{"text": "Hello."}]},
                                      "finishReason": "STOP"}],
                      "usageMetadata": {"promptTokenCount": 40, "candidatesTokenCount": 2}})  # fmt: skip
    return status(404, b'{"error": {"message": "not here"}}')


def examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_the_document_has_its_five_examples() -> None:
    assert len(examples()) == 5


@pytest.mark.parametrize("number", [0, 1, 2, 3, 4])
def test_the_example_runs(
    number: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    data = b"\x00\x00" * 800
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 16000, 2, 16)
    chunks = b"fmt " + struct.pack("<I", 16) + fmt + b"data" + struct.pack("<I", len(data)) + data
    (tmp_path / "voice.wav").write_bytes(
        b"RIFF" + struct.pack("<I", 4 + len(chunks)) + b"WAVE" + chunks
    )
    with LoopbackServer(stand_in) as server:
        for name, value in {
            "OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": "sk-doc",
            "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-ant-doc",
            "GOOGLE_GEMINI_BASE_URL": server.url, "GEMINI_API_KEY": "g-doc",
            "ELELEM_CONFIG": str(tmp_path / "none.toml"),
        }.items():  # fmt: skip
            monkeypatch.setenv(name, value)
        namespace: dict[str, Any] = {}
        exec(compile(examples()[number], f"beyond-chat.md example {number + 1}", "exec"), namespace)
    out = capsys.readouterr().out
    expected = [
        "2 256 $0.00000008\n",  # 4 tokens at $0.02 per million (format_dollars: plain decimals)
        "r1 Paris $0.0000225\nit Rome $0.0000225\n",  # half of $3 in, $15 out per million
        "",
        "audio/wav $0.0014\n",  # 14 tokens in at $0.60, 120 out at $12 per million
        # 20 text tokens in at $2.50, 100 audio at $6, 30 out at $10 per million: $0.00095
        "Hello there. $0.0010\n",
    ][number]
    assert out == expected
    if number == 2:
        assert namespace["reply"].text == "Hello."
    if number == 3:
        assert (tmp_path / "hello.wav").read_bytes() == b"RIFF\x24\x00\x00\x00WAVEfmt-and-data"
