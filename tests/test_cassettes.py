"""The recording loader: every corpus format, on small hand-written files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elelem.recordings.cassettes import (
    RecordingError,
    SSEFrame,
    detect_format,
    json_lines,
    load,
    sse_frames,
)

VCR = """\
interactions:
- request:
    body: null
    headers:
      content-type:
      - application/json
      x-multi:
      - a
      - b
    method: POST
    parsed_body:
      model: m
      stream: true
    uri: https://api.anthropic.com/v1/messages?beta=true
  response:
    body:
      string: "event: ping\\ndata: {\\"type\\": \\"ping\\"}\\n\\n"
    headers:
      Content-Type:
      - text/event-stream; charset=utf-8
    status:
      code: 200
      message: OK
- request:
    body: '{"model": "m", "stream": false}'
    headers: {}
    method: post
    uri: https://api.anthropic.com/v1/messages
  response:
    headers:
      content-type:
      - application/json
    parsed_body:
      error:
        message: bad
        type: invalid_request_error
      type: error
    status:
      code: 400
      message: Bad Request
version: 1
"""

WHEN_THEN = """\
when:
  path: /v1/messages
  method: POST
  json_body_str: >-
    {"model": "m", "stream": true}
then:
  status: 200
  header:
    - name: content-type
      value: text/event-stream
  body: |+
    event: message_stop
    data: {"type":"message_stop"}

---
when:
  path: /v1beta/models/g:streamGenerateContent
  method: POST
  query_param:
    - name: alt
      value: sse
  json_body_str: '{}'
then:
  status: 200
  header:
    - name: content-type
      value: application/x-ndjson
  body: |
    {"a": 1}
"""


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def test_vcr_cassette(tmp_path: Path) -> None:
    rec = load(write(tmp_path, "c.yaml", VCR))
    assert rec.format == "vcr"
    assert len(rec.interactions) == 2
    first, second = rec.interactions
    assert first.index == 0
    assert first.request is not None
    assert first.request.method == "POST"
    assert first.request.path == "/v1/messages"
    assert first.request.query == "beta=true"
    assert first.request.uri == "https://api.anthropic.com/v1/messages?beta=true"
    assert first.request.headers == {"content-type": "application/json", "x-multi": "a, b"}
    assert first.request.json == {"model": "m", "stream": True}
    assert first.request.body is None
    assert first.response.status == 200
    assert first.response.headers == {"content-type": "text/event-stream; charset=utf-8"}
    assert first.response.content_type == "text/event-stream"
    assert first.response.body == b'event: ping\ndata: {"type": "ping"}\n\n'
    assert first.response.streamed is True
    assert first.response.body_exact is True
    assert second.request is not None
    assert second.request.method == "POST"
    assert second.request.body == '{"model": "m", "stream": false}'
    assert second.request.json == {"model": "m", "stream": False}
    assert second.response.status == 400
    assert second.response.streamed is False
    assert second.response.body_exact is False
    assert second.response.json() == {
        "error": {"message": "bad", "type": "invalid_request_error"},
        "type": "error",
    }


def test_when_then_documents(tmp_path: Path) -> None:
    rec = load(write(tmp_path, "w.yml", WHEN_THEN))
    assert rec.format == "when-then"
    first, second = rec.interactions
    assert first.request is not None and second.request is not None
    assert first.request.path == "/v1/messages"
    assert first.request.query == ""
    assert first.request.json == {"model": "m", "stream": True}
    assert first.response.body == b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    assert first.response.streamed is True
    assert second.request.path == "/v1beta/models/g:streamGenerateContent"
    assert second.request.query == "alt=sse"
    assert second.response.headers == {"content-type": "application/x-ndjson"}
    assert second.response.streamed is True
    assert second.response.body == b'{"a": 1}\n'


def test_chunk_file_splits_at_each_response_start(tmp_path: Path) -> None:
    lines = [
        {"type": "message_start", "message": {"id": "a"}},
        {"type": "message_stop"},
        {"type": "message_start", "message": {"id": "b"}},
        {"type": "ping"},
        {"type": "message_stop"},
    ]
    text = "\n".join(json.dumps(x, separators=(",", ":")) for x in lines) + "\n\n"
    rec = load(write(tmp_path, "x.chunks.txt", text))
    assert rec.format == "chunks"
    assert [i.index for i in rec.interactions] == [0, 1]
    assert all(i.request is None for i in rec.interactions)
    first = rec.interactions[0].response
    assert first.streamed is True
    assert first.body_exact is False
    assert first.body == (
        b'data: {"type":"message_start","message":{"id":"a"}}\n\ndata: {"type":"message_stop"}\n\n'
    )
    frames = sse_frames(rec.interactions[1].response.body)
    assert [json.loads(f.data)["type"] for f in frames] == ["message_start", "ping", "message_stop"]
    assert {f.event for f in frames} == {""}


def test_chunk_file_with_openai_responses_starts(tmp_path: Path) -> None:
    text = (
        '{"type":"response.created"}\n{"type":"response.completed"}\n{"type":"response.created"}\n'
    )
    rec = load(write(tmp_path, "y.chunks.txt", text))
    assert len(rec.interactions) == 2


def test_chunk_file_with_a_bad_line_names_it(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.chunks.txt", '{"type":"ping"}\n{"type": "pi\n')
    with pytest.raises(RecordingError) as info:
        load(path)
    assert str(info.value).startswith(f"{path}: line 2 is not a JSON payload")


def test_raw_sse_body(tmp_path: Path) -> None:
    body = b'event: a\ndata: {"x":1}\n\ndata: two\ndata: lines\n\n: comment\n\n'
    rec = load(write(tmp_path, ".inline-snapshot.bin", body))
    assert rec.format == "sse"
    (only,) = rec.interactions
    assert only.request is None
    assert only.response.body == body
    assert only.response.streamed is True
    assert sse_frames(body) == [SSEFrame("a", '{"x":1}'), SSEFrame("", "two\nlines")]


def test_raw_json_body(tmp_path: Path) -> None:
    rec = load(write(tmp_path, "r.json", '{\n  "id": "msg_1"\n}\n'))
    assert rec.format == "json"
    (only,) = rec.interactions
    assert only.response.streamed is False
    assert only.response.json() == {"id": "msg_1"}


def test_sse_frames_rules() -> None:
    # CRLF line ends, a space after the colon is optional, an unterminated last frame is dropped.
    body = "event:x\r\ndata:1\r\n\r\nevent: y\ndata: 2\n\nevent: z\ndata: 3"
    assert sse_frames(body) == [SSEFrame("x", "1"), SSEFrame("y", "2")]


def test_json_lines_names_bad_line() -> None:
    assert json_lines(b'{"a":1}\n\n[2]\n') == [{"a": 1}, [2]]
    with pytest.raises(ValueError, match="line 2 is not JSON"):
        json_lines('{"a":1}\n{')


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("empty.json", "  \n", "file is empty"),
        ("t.json", '{"id": "msg_', "truncated or malformed JSON body"),
        ("u.txt", "hello world", "unknown recording format"),
        ("v.yaml", "interactions:\n- request: [\n", "malformed YAML at line"),
        ("w.yaml", "foo: 1\n", "not a VCR cassette"),
        ("x.yml", "when:\n  method: POST\nthen: {}\n", "document 0 when.path is missing"),
    ],
)
def test_bad_files_name_file_and_problem(
    tmp_path: Path, name: str, text: str, problem: str
) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(RecordingError) as info:
        load(path)
    assert str(info.value).startswith(f"{path}: {problem}")
    assert info.value.path == str(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(RecordingError, match="cannot read"):
        load(tmp_path / "nope.yaml")


def test_detect_format_from_content() -> None:
    assert detect_format(Path("a"), b"data: {}\n\n") == "sse"
    assert detect_format(Path("a"), b'{"a": 1}') == "json"
    assert detect_format(Path("a"), b'{"a": 1}\n{"b": 2}\n') == "ndjson"
    dump = b'{"type": "message_start"}\n{"type": "message_stop"}\n'
    assert detect_format(Path("a"), dump) == "chunks"
    assert detect_format(Path("a.yml"), b"when:\n") == "when-then"
    assert detect_format(Path("a.yaml"), b"interactions: []\n") == "vcr"


def test_every_corpus_file_loads(corpus: Path) -> None:
    rows = [ln.split("\t") for ln in (corpus / "INDEX.tsv").read_text().splitlines()[1:]]
    formats: dict[str, int] = {}
    for row in rows:
        rec = load(corpus / row[0])
        assert rec.interactions, row[0]
        formats[rec.format] = formats.get(rec.format, 0) + 1
    assert sum(formats.values()) == len(rows)
    assert set(formats) == {"vcr", "when-then", "chunks", "sse", "json"}
