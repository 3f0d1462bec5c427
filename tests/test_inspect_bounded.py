"""``elelem inspect`` does work in proportion to what it reads (issue #33):
a raw stream file is read in pieces, never whole, and decoded once; a
recording's interactions share one loopback server and connection, so
nothing is started per interaction."""

from __future__ import annotations

import json
import threading
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from elelem.cli.inspect import inspect_recording
from elelem.recordings.loopback import anthropic_text_body
from elelem.recordings.rawfile import open_raw_body
from elelem.transport.framing import SSEDecoder

PADDING = 6 * 1024 * 1024


def padded_stream(path: Path) -> int:
    """An Anthropic answer ("hello") with 6 MiB of SSE comment lines after
    its first frame: a large file whose assembled result is tiny."""
    line = b": " + b"x" * 4094 + b"\n"
    first, rest = anthropic_text_body("hel", "lo").split(b"\n\n", 1)
    body = first + b"\n\n" + line * (PADDING // len(line)) + b"\n" + rest
    path.write_bytes(body)
    return len(body)


EXPECTED = [
    {"kind": "response", "interaction": 0, "provider": "anthropic",
     "response_id": "msg_scripted", "model": "claude-sonnet-4-5-20250929"},
    {"kind": "block", "interaction": 0, "block": {"type": "text", "text": "hello",
     "attributions": (), "payloads": (), "complete": True}},
    {"kind": "usage", "interaction": 0, "usage": {"input": 20, "output": 10, "cache_read": 0,
     "cache_write": 0, "reasoning": 0, "hosted": {},
     "raw": {"input_tokens": 20, "output_tokens": 10}}},
    {"kind": "finish", "interaction": 0, "reason": "stop"},
]  # fmt: skip


def test_a_raw_stream_file_is_never_held_whole(tmp_path: Path) -> None:
    path = tmp_path / "big.sse"
    size = padded_stream(path)
    tracemalloc.start()
    try:
        lines = inspect_recording(str(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert lines == EXPECTED
    # Read whole (as before), the file alone was 6 MiB held at once.
    assert peak < size // 4, (peak, size)


def test_a_raw_stream_file_is_decoded_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.sse"
    size = padded_stream(path)
    fed = [0]
    feed = SSEDecoder.feed

    def counting(self: SSEDecoder, chunk: bytes, runs: Any = False) -> Any:
        fed[0] += len(chunk)
        return feed(self, chunk, runs)

    monkeypatch.setattr(SSEDecoder, "feed", counting)
    assert inspect_recording(str(path)) == EXPECTED
    # The driver decodes the file once; telling its shape decoded it all
    # again before (2 * size), only its first frame now.
    assert size <= fed[0] < size + size // 4, (fed[0], size)


def har(entries: int) -> dict[str, Any]:
    body = anthropic_text_body("hel", "lo").decode()
    entry = {
        "request": {
            "method": "POST",
            "url": "https://api.anthropic.com/v1/messages",
            "headers": [],
            "postData": {"mimeType": "application/json", "text": '{"stream": true}'},
        },
        "response": {
            "status": 200,
            "headers": [{"name": "content-type", "value": "text/event-stream"}],
            "content": {"mimeType": "text/event-stream", "text": body},
        },
    }
    return {"log": {"version": "1.2", "entries": [entry] * entries}}


def test_interactions_share_one_server_and_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "many.har"
    path.write_text(json.dumps(har(60)), encoding="utf-8")
    started = [0]
    start = threading.Thread.start

    def counting(self: threading.Thread) -> None:
        started[0] += 1
        start(self)

    monkeypatch.setattr(threading.Thread, "start", counting)
    lines = inspect_recording(str(path))
    assert len(lines) == 60 * 4
    assert lines[-4:] == [{**line, "interaction": 59} for line in EXPECTED]
    # The server's acceptor and timer and one connection's worker: before,
    # a server of three threads was started for each interaction (180).
    assert started[0] == 3


def test_a_json_recording_is_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "two.har"
    path.write_text(json.dumps(har(2)), encoding="utf-8")
    size = path.stat().st_size
    whole = [0]
    loads = json.loads

    def counting(text: Any, **kwargs: Any) -> Any:
        whole[0] += len(text) == size
        return loads(text, **kwargs)

    monkeypatch.setattr(json, "loads", counting)
    assert len(inspect_recording(str(path))) == 8
    assert whole[0] == 1  # before: 2, once to tell the format and once to load it


def test_a_raw_ndjson_file_is_read_as_a_stream(tmp_path: Path) -> None:
    # Ollama's native NDJSON: several lines of JSON objects, none a
    # response start, is one streamed body read from the file.
    lines = [
        {"model": "llama3", "created_at": "t", "message": {"role": "assistant",
         "content": piece}, "done": False}
        for piece in ("hel", "lo")
    ] + [{"model": "llama3", "created_at": "t", "message": {"role": "assistant", "content": ""},
          "done": True, "done_reason": "stop", "prompt_eval_count": 3, "eval_count": 2}]  # fmt: skip
    path = tmp_path / "answer.ndjson"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    stream = open_raw_body(path)
    assert stream is not None and stream.format == "ndjson"
    out = inspect_recording(str(path))
    assert out[1] == {"kind": "block", "interaction": 0, "block": {"type": "text",
                      "text": "hello", "attributions": (), "payloads": (), "complete": True}}  # fmt: skip
    assert out[-1] == {"kind": "finish", "interaction": 0, "reason": "stop"}


def test_a_one_line_json_file_is_no_stream(tmp_path: Path) -> None:
    path = tmp_path / "one.json"
    path.write_text(json.dumps(har(1)) + "\n\n", encoding="utf-8")
    assert open_raw_body(path) is None  # load() reads it: a HAR
