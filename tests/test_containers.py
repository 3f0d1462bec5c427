"""The cassette reader on the containers other projects publish recordings in.

Every container is written here, by this test, the way its recorder writes
it: vcrpy YAML (text, ``!!binary``, ``parsed_body``), Ruby VCR and R vcr
``http_interactions`` (``!binary``, ``base64_string``), multi-document
when/then YAML, JSON ``{status, headers, body}`` wrappers, HAR, and raw SSE,
JSON, NDJSON and AWS event-stream bodies.  Each holds the same small answer
three ways: plain, gzip-compressed under a ``content-encoding: gzip``
header, and plain under a header that lies (says ``gzip``).  Each must load
to the plain body and ``elelem inspect`` must print the answer from it.
Brotli and deflate are checked the same way on the vcrpy container.
"""

from __future__ import annotations

import base64
import gzip
import json
import zlib
from collections.abc import Callable
from pathlib import Path

import brotli  # type: ignore[import-untyped]
import pytest
from click.testing import CliRunner

from elelem.cli import main
from elelem.recordings.bodies import decode_body
from elelem.recordings.cassettes import Interaction, RecordingError, load
from test_eventstream_framing import event

ANSWER = "Three hundred and thirty metres."
MODEL = "claude-sonnet-4-5-20250929"
URI = "https://api.anthropic.com/v1/messages"
REQUEST = json.dumps({"model": MODEL, "max_tokens": 64, "stream": True,
                      "messages": [{"role": "user", "content": "How tall?"}]})  # fmt: skip


def _sse(kind: str, **fields: object) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n"


SSE = (
    _sse("message_start", message={"id": "msg_c1", "type": "message", "role": "assistant",
         "model": MODEL, "content": [], "usage": {"input_tokens": 9, "output_tokens": 1}})
    + _sse("content_block_start", index=0, content_block={"type": "text", "text": ""})
    + _sse("content_block_delta", index=0, delta={"type": "text_delta", "text": ANSWER})
    + _sse("content_block_stop", index=0)
    + _sse("message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": 7})
    + _sse("message_stop")
).encode()  # fmt: skip

WHOLE = json.dumps({"id": "msg_c2", "type": "message", "role": "assistant", "model": MODEL,
                    "content": [{"type": "text", "text": ANSWER}], "stop_reason": "end_turn",
                    "usage": {"input_tokens": 9, "output_tokens": 7}}).encode()  # fmt: skip

OLLAMA = (
    json.dumps({"model": "qwen3", "message": {"role": "assistant", "content": ANSWER},
                "done": False}) + "\n"
    + json.dumps({"model": "qwen3", "message": {"role": "assistant", "content": ""},
                  "done": True, "done_reason": "stop", "prompt_eval_count": 9,
                  "eval_count": 7}) + "\n"
).encode()  # fmt: skip


def bedrock_eventstream() -> bytes:
    """A Bedrock Converse answer in AWS's binary event-stream framing."""
    events = [
        ("messageStart", {"role": "assistant"}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": ANSWER}}),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("messageStop", {"stopReason": "end_turn"}),
        ("metadata", {"usage": {"inputTokens": 9, "outputTokens": 7, "totalTokens": 16},
                      "metrics": {"latencyMs": 100}}),
    ]  # fmt: skip
    return b"".join(event(name, json.dumps(payload)) for name, payload in events)


VARIANTS = ("plain", "gzip", "lying")


def encoded(body: bytes, variant: str) -> tuple[bytes, str]:
    """The recorded bytes and ``content-encoding`` header of ``variant``."""
    if variant == "gzip":
        return gzip.compress(body), "gzip"
    return body, ("gzip" if variant == "lying" else "")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _yaml_str(text: str) -> str:
    return json.dumps(text)  # a JSON string is a YAML double-quoted scalar


class TextOnly(Exception):
    """The container holds text bodies only: its gzip variant is the whole
    file compressed (``recording.yaml.gz``), as such files are published."""


def vcrpy(body: bytes, enc: str) -> str:
    headers = "      Content-Type:\n      - text/event-stream\n"
    if enc:
        headers += f"      Content-Encoding:\n      - {enc}\n"
    binary = (enc and body[:2] == b"\x1f\x8b") or enc in ("br", "deflate")
    value = f"!!binary |\n          {_b64(body)}" if binary else _yaml_str(body.decode())
    return (
        "interactions:\n- request:\n    body: " + _yaml_str(REQUEST) + "\n"
        "    headers:\n      content-type:\n      - application/json\n"
        f"    method: POST\n    uri: {URI}\n"
        f"  response:\n    body:\n      string: {value}\n    headers:\n{headers}"
        "    status:\n      code: 200\n      message: OK\nversion: 1\n"
    )


def ruby_vcr(body: bytes, enc: str) -> str:
    headers = "      Content-Type:\n      - text/event-stream\n"
    if enc:
        headers += f"      Content-Encoding:\n      - {enc}\n"
    if body[:2] == b"\x1f\x8b":
        value = f"encoding: ASCII-8BIT\n        string: !binary |-\n          {_b64(body)}"
    else:
        value = f"encoding: UTF-8\n        string: {_yaml_str(body.decode())}"
    return (
        "---\nhttp_interactions:\n- request:\n    method: post\n"
        f"    uri: {URI}\n    body:\n      encoding: UTF-8\n      string: {_yaml_str(REQUEST)}\n"
        "    headers:\n      Content-Type:\n      - application/json\n"
        "  response:\n    status:\n      code: 200\n      message: OK\n"
        f"    headers:\n{headers}    body:\n        {value}\n"
        "  recorded_at: Tue, 01 Dec 2026 09:00:00 GMT\nrecorded_with: VCR 6.2.0\n"
    )


def r_vcr(body: bytes, enc: str) -> str:
    headers = "      content-type: text/event-stream\n"
    if enc:
        headers += f"      content-encoding: {enc}\n"
    return (
        "http_interactions:\n- request:\n    method: post\n"
        f"    uri: {URI}\n    body:\n      encoding: ''\n      string: {_yaml_str(REQUEST)}\n"
        "    headers: []\n  response:\n    status:\n      status_code: '200'\n      code: 200\n"
        f"    headers:\n{headers}    body:\n      encoding: ''\n"
        f"      file: no\n      base64_string: {_b64(body)}\n"
        "  recorded_at: 2026-12-01 09:00:00 GMT\n  recorded_with: vcr/1.2.2, webmockr/0.9.0\n"
    )


def when_then(body: bytes, enc: str) -> str:
    if body[:2] == b"\x1f\x8b":
        raise TextOnly  # when/then YAML keeps bodies as text
    header = f"  - name: content-encoding\n    value: {enc}\n" if enc else ""
    return (
        "when:\n  path: /v1/messages\n  method: POST\n"
        f"  json_body_str: {_yaml_str(REQUEST)}\n"
        "then:\n  status: 200\n  header:\n  - name: content-type\n    value: text/event-stream\n"
        f"{header}  body: {_yaml_str(body.decode())}\n---\n"
    )


def json_wrapper(body: bytes, enc: str) -> bytes:
    if body[:2] == b"\x1f\x8b":
        raise TextOnly  # a JSON wrapper keeps its body as text
    headers = {"content-type": "text/event-stream", **({"content-encoding": enc} if enc else {})}
    return json.dumps({"status": 200, "headers": headers, "body": body.decode()}).encode()


def har(body: bytes, enc: str) -> bytes:
    headers = [{"name": "content-type", "value": "text/event-stream"}]
    if enc:
        headers.append({"name": "content-encoding", "value": enc})
    gz = body[:2] == b"\x1f\x8b"
    content = {"mimeType": "text/event-stream", "size": len(body),
               "text": _b64(body) if gz else body.decode(), **({"encoding": "base64"} if gz else {})}  # fmt: skip
    entry = {
        "request": {"method": "POST", "url": URI, "headers": [],
                    "postData": {"mimeType": "application/json", "text": REQUEST}},
        "response": {"status": 200, "statusText": "OK", "headers": headers, "content": content},
    }  # fmt: skip
    return json.dumps({"log": {"version": "1.2", "entries": [entry]}}).encode()


CONTAINERS: dict[str, tuple[str, Callable[[bytes, str], str | bytes]]] = {
    "vcrpy": ("cassette.yaml", vcrpy),
    "ruby-vcr": ("cassette.yml", ruby_vcr),
    "r-vcr": ("cassette.yml", r_vcr),
    "when-then": ("recording.yaml", when_then),
    "json-wrapper": ("response.json", json_wrapper),
    "har": ("session.har", har),
}


def write(tmp_path: Path, name: str, data: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def inspected_text(path: Path) -> str:
    result = CliRunner().invoke(main, ["inspect", "--json", str(path)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.output.splitlines()]
    return "".join(b["block"]["text"] for b in lines if b["kind"] == "block")


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("container", sorted(CONTAINERS))
def test_every_container_reads_plain_gzip_and_under_a_lying_header(
    tmp_path: Path, container: str, variant: str
) -> None:
    name, make = CONTAINERS[container]
    check_container(tmp_path, name, make, variant)


def check_container(
    tmp_path: Path, name: str, make: Callable[[bytes, str], str | bytes], variant: str
) -> Interaction:
    """The answer written in a container by ``make`` as ``variant`` loads
    to the plain body and inspects to the answer; its one interaction."""
    body, enc = encoded(SSE, variant)
    expected = "gzip" if variant == "gzip" else ""
    try:
        path = write(tmp_path, name, make(body, enc))
    except TextOnly:
        data = make(SSE, "")
        path = write(
            tmp_path, name + ".gz", gzip.compress(data.encode() if isinstance(data, str) else data)
        )
        expected = ""
    (interaction,) = load(path).interactions
    response = interaction.response
    assert (response.body, response.streamed, response.status) == (SSE, True, 200)
    assert response.encoding == expected
    assert "content-encoding" not in response.headers  # the body is decoded now
    assert inspected_text(path) == ANSWER
    return interaction


@pytest.mark.parametrize("enc", ["br", "deflate"])
@pytest.mark.parametrize("lying", [False, True], ids=["encoded", "lying"])
def test_brotli_and_deflate_bodies_decode_and_a_lying_header_is_seen(
    tmp_path: Path, enc: str, lying: bool
) -> None:
    body = SSE if lying else (brotli.compress(SSE) if enc == "br" else zlib.compress(SSE))
    path = write(tmp_path, "cassette.yaml", vcrpy(body, enc))
    response = load(path).interactions[0].response
    assert (response.body, response.encoding) == (SSE, "" if lying else enc)
    assert inspected_text(path) == ANSWER


RAW = {
    "sse": ("body.txt", SSE),
    "json": ("body.json", WHOLE),
    "ndjson": ("body.ndjson", OLLAMA),
    "eventstream": ("body.bin", bedrock_eventstream()),
}


@pytest.mark.parametrize("kind", sorted(RAW))
def test_raw_bodies_of_every_framing(tmp_path: Path, kind: str) -> None:
    name, body = RAW[kind]
    path = write(tmp_path, name, body)
    recording = load(path)
    assert recording.format == kind
    assert recording.interactions[0].response.body == body
    assert inspected_text(path) == ANSWER


def test_an_event_stream_body_inside_a_cassette(tmp_path: Path) -> None:
    body = bedrock_eventstream()
    text = (
        vcrpy(gzip.compress(body), "gzip")
        .replace(
            "uri: " + URI,
            "uri: https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse-stream",
        )
        .replace("text/event-stream", "application/vnd.amazon.eventstream")
    )
    path = write(tmp_path, "bedrock.yaml", text)
    response = load(path).interactions[0].response
    assert (response.body, response.streamed, response.encoding) == (body, True, "gzip")
    assert inspected_text(path) == ANSWER


def test_vcrpy_parsed_body_is_read(tmp_path: Path) -> None:
    text = (
        vcrpy(SSE, "")
        .replace(
            "    body:\n      string: " + _yaml_str(SSE.decode()),
            "    parsed_body: " + WHOLE.decode(),
        )
        .replace("text/event-stream", "application/json")
    )
    path = write(tmp_path, "cassette.yaml", text)
    response = load(path).interactions[0].response
    assert (json.loads(response.body), response.body_exact) == (json.loads(WHOLE), False)
    assert inspected_text(path) == ANSWER


@pytest.mark.parametrize(
    ("name", "data", "problem"),
    [
        ("cassette.yaml", vcrpy(b"\x1f\x8b\x08\x00broken", "gzip"),
         "interaction 0: the gzip body"),
        ("cassette.yml", ruby_vcr(b"plain", "").replace('"plain"', "!binary |-\n          @@@"),
         "a !binary value is not base64"),
        ("session.har", b'{"log": {"entries": [{"request": {}, "response": {"status": "x"}}]}}',
         "entry 0 response status is not a number"),
        ("body.bin", b"\x00\x01binary that is no recording", "unknown recording format"),
    ],
)  # fmt: skip
def test_an_unreadable_file_is_one_line_naming_it_and_exit_2(
    tmp_path: Path, name: str, data: str | bytes, problem: str
) -> None:
    path = write(tmp_path, name, data)
    with pytest.raises(RecordingError) as info:
        load(path)
    assert str(info.value).startswith(f"{path}: ") and problem in str(info.value)
    result = CliRunner().invoke(main, ["inspect", "--json", str(path)])
    assert result.exit_code == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"elelem: {path}: ") and problem in line


def test_decode_body_trusts_magic_bytes_over_the_header() -> None:
    assert decode_body(gzip.compress(b"{}"), "") == (b"{}", "gzip")
    assert decode_body(b"{}", "gzip") == (b"{}", "")
    assert decode_body(b"data: x\n\n", "br") == (b"data: x\n\n", "")
    assert decode_body(zlib.compress(b"[1]"), "identity") == (b"[1]", "deflate")
    assert decode_body(gzip.compress(b"a") + gzip.compress(b"b"), "gzip") == (b"ab", "gzip")
