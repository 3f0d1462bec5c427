"""A recording that mixes every exchange kind elelem speaks, and the six
published containers to write it in (vcrpy, Ruby VCR, go-vcr, HAR, Go's
httprr, the Azure SDK test-proxy), each written from its documented format:

- vcrpy: ``vcr/serializers`` (``interactions[].request{method, uri, body,
  headers}``, ``response{status{code, message}, headers, body{string}}``,
  bytes as ``!!binary``);
- Ruby VCR: ``lib/vcr/structs.rb`` (``http_interactions``, ``body{encoding,
  string}``, binary bodies as ``!binary`` base64, ``recorded_at``);
- go-vcr v2: ``recorder/cassette`` (``url``, ``code``, ``status: 200 OK``,
  plain string bodies, headers as lists, ``version: 2``);
- HAR 1.2 (``log.entries[]``, ``postData``, ``content.encoding: base64``);
- httprr: ``httprr trace v1`` then ``N1 N2`` and raw HTTP/1.1 messages;
- test-proxy: ``RecordEntry.Serialize`` (``Entries``, ``Variables``).

The answers are OpenAI's documented ones (Chat Completions with ``n=2`` and
a tool call, embeddings in base64, speech, a whole and a streamed
transcription, a file upload, a batch created, polled and read, speech
streamed as server-sent events) plus
Ollama's legacy ``/api/embeddings`` and one exchange nobody reads.
"""

from __future__ import annotations

import base64
import gzip
import json
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

OPENAI = "https://api.openai.com/v1"
JSON = "application/json"


@dataclass(frozen=True)
class Exchange:
    method: str
    url: str
    request: bytes
    status: int
    response: bytes
    request_type: str = JSON
    response_type: str = JSON
    response_headers: dict[str, str] = field(default_factory=dict)

    @property
    def path(self) -> str:
        return "/" + self.url.split("/", 3)[3].split("?")[0]


def floats(values: list[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()


def _json(value: object) -> bytes:
    return json.dumps(value).encode()


CHAT_N2 = {
    "id": "chatcmpl-n2",
    "object": "chat.completion",
    "created": 1733300000,
    "model": "gpt-4o-mini-2024-07-18",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}
                ],
            },
            "finish_reason": "tool_calls",
        },
        {"index": 1, "message": {"role": "assistant", "content": "It is sunny in Paris."},
         "finish_reason": "stop"},
    ],
    "usage": {"prompt_tokens": 40, "completion_tokens": 22, "total_tokens": 62},
}  # fmt: skip
CHAT_REQUEST = {
    "model": "gpt-4o-mini",
    "n": 2,
    "messages": [{"role": "user", "content": "Weather in Paris?"}],
    "tools": [{"type": "function", "function": {"name": "get_weather",
                                                "parameters": {"type": "object"}}}],
}  # fmt: skip
EMBEDDINGS = {
    "object": "list",
    "data": [
        {"object": "embedding", "index": 0, "embedding": floats([0.5, -0.25, 1.0])},
        {"object": "embedding", "index": 1, "embedding": floats([0.125, 2.0, -1.5])},
    ],
    "model": "text-embedding-3-small",
    "usage": {"prompt_tokens": 4, "total_tokens": 4},
}
AUDIO = b"ID3\x04\x00\x00\x00\x00\x00\x00\xff\xfb\x90\x00" + bytes(range(256))
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt "
BOUNDARY = "elelem-0123456789abcdef"


def multipart(fields: dict[str, str]) -> bytes:
    """A transcription upload (text fields, then a small ASCII audio file)."""
    parts = [
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'
        for k, v in fields.items()
    ]
    parts.append(
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n'
        f"Content-Type: audio/wav\r\n\r\n{WAV.decode()}\r\n--{BOUNDARY}--\r\n"
    )
    return "".join(parts).encode()


TRANSCRIPT_SSE = (
    b'data: {"type":"transcript.text.delta","delta":"Hello"}\n\n'
    b'data: {"type":"transcript.text.delta","delta":" there."}\n\n'
    b'data: {"type":"transcript.text.done","text":"Hello there.","usage":{"type":"tokens",'
    b'"input_tokens":14,"input_token_details":{"text_tokens":0,"audio_tokens":14},'
    b'"output_tokens":3,"total_tokens":17}}\n\n'
)


PCM = [b"\x00\x01" * 8, b"\x02\x03" * 4]
SPEECH_SSE = b"".join(
    b'data: {"type":"speech.audio.delta","audio":"%s"}\n\n' % base64.b64encode(piece)
    for piece in PCM
) + (
    b'data: {"type":"speech.audio.done","usage":{"input_tokens":14,"output_tokens":120,'
    b'"total_tokens":134}}\n\n'
)


def batch_object(status: str, **more: object) -> dict[str, object]:
    return {
        "id": "batch_abc", "object": "batch", "endpoint": "/v1/responses",
        "input_file_id": "file-in", "completion_window": "24h", "status": status,
        "request_counts": {"total": 2, "completed": 2 if status == "completed" else 0,
                           "failed": 0},
        **more,
    }  # fmt: skip


def result_line(custom_id: str, text: str) -> dict[str, object]:
    """One line of a batch's output file: a Responses answer, as a batch of
    ``/v1/responses`` requests (the endpoint elelem batches to) holds."""
    body = {
        "id": f"resp_{custom_id}", "object": "response", "status": "completed",
        "model": "gpt-4o-mini-2024-07-18",
        "output": [{"type": "message", "id": f"msg_{custom_id}", "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}],
        "usage": {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7},
    }  # fmt: skip
    return {
        "id": f"batch_req_{custom_id}",
        "custom_id": custom_id,
        "response": {"status_code": 200, "request_id": f"req_{custom_id}", "body": body},
        "error": None,
    }


RESULTS = b"\n".join(_json(result_line(c, t)) for c, t in [("r-1", "Four."), ("r-2", "Paris.")])
NOT_FOUND = {"error": {"message": "No batch found", "type": "invalid_request_error", "code": None}}


def exchanges() -> list[Exchange]:
    """The mixed recording, in recorded order."""
    transcribe = {"model": "whisper-1", "response_format": "json"}
    streamed = {"model": "gpt-4o-mini-transcribe", "response_format": "json", "stream": "true"}
    form = f"multipart/form-data; boundary={BOUNDARY}"
    return [
        Exchange("POST", f"{OPENAI}/chat/completions", _json(CHAT_REQUEST), 200, _json(CHAT_N2)),
        Exchange("POST", f"{OPENAI}/embeddings",
                 _json({"model": "text-embedding-3-small", "input": ["a", "b"],
                        "encoding_format": "base64"}), 200, _json(EMBEDDINGS)),
        Exchange("POST", "http://localhost:11434/api/embeddings",
                 _json({"model": "nomic-embed-text", "prompt": "a"}), 200,
                 _json({"embedding": [0.25, 0.5, 0.75, 1.0]})),
        Exchange("POST", f"{OPENAI}/audio/speech",
                 _json({"model": "tts-1", "input": "Hello there.", "voice": "alloy",
                        "response_format": "mp3"}), 200, AUDIO, response_type="audio/mpeg"),
        Exchange("POST", f"{OPENAI}/audio/transcriptions", multipart(transcribe), 200,
                 _json({"text": "Hello there.", "usage": {"type": "duration", "seconds": 2}}),
                 request_type=form),
        Exchange("POST", f"{OPENAI}/audio/transcriptions", multipart(streamed), 200,
                 TRANSCRIPT_SSE, request_type=form, response_type="text/event-stream"),
        Exchange("POST", f"{OPENAI}/files", b"", 200,
                 _json({"id": "file-in", "object": "file", "bytes": 420, "purpose": "batch",
                        "filename": "batch.jsonl"}), request_type=form),
        Exchange("POST", f"{OPENAI}/batches",
                 _json({"input_file_id": "file-in", "endpoint": "/v1/responses",
                        "completion_window": "24h"}), 200, _json(batch_object("validating"))),
        Exchange("GET", f"{OPENAI}/batches/batch_abc", b"", 200,
                 _json(batch_object("in_progress"))),
        Exchange("GET", f"{OPENAI}/batches/batch_abc", b"", 404, _json(NOT_FOUND)),
        Exchange("GET", f"{OPENAI}/batches/batch_abc", b"", 200,
                 _json(batch_object("completed", output_file_id="file-out"))),
        Exchange("GET", f"{OPENAI}/files/file-out/content", b"", 200, RESULTS,
                 response_type="application/octet-stream"),
        Exchange("GET", f"{OPENAI}/assistants?limit=2", b"", 200,
                 _json({"object": "list", "data": []})),
        Exchange("POST", f"{OPENAI}/audio/speech",
                 _json({"model": "gpt-4o-mini-tts", "input": "Hi.", "voice": "alloy",
                        "response_format": "pcm", "stream_format": "sse"}), 200,
                 SPEECH_SSE, response_type="text/event-stream"),
        Exchange("GET", f"{OPENAI}/models", b"", 200,
                 _json({"object": "list", "data": [{"id": "gpt-4o-mini", "object": "model"},
                                                   {"id": "tts-1", "object": "model"}]})),
    ]  # fmt: skip


def _text(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


# -- the six containers ------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    pass


class RubyBinary(bytes):
    """Bytes Ruby VCR writes as ``!binary`` base64."""


_Dumper.add_representer(
    RubyBinary,
    lambda dumper, data: dumper.represent_scalar(
        "!binary", base64.b64encode(bytes(data)).decode(), style="|"
    ),
)


def vcrpy(items: list[Exchange]) -> str:
    def body(data: bytes) -> object:
        text = _text(data)
        return text if text is not None else data  # bytes are written !!binary

    interactions = [
        {
            "request": {"body": body(e.request) if e.request else None,
                        "headers": {"Content-Type": [e.request_type]},
                        "method": e.method, "uri": e.url},
            "response": {"body": {"string": body(e.response)},
                         "headers": {"Content-Type": [e.response_type]},
                         "status": {"code": e.status, "message": "OK"}},
        }
        for e in items
    ]  # fmt: skip
    return yaml.dump({"interactions": interactions, "version": 1}, Dumper=_Dumper)


def ruby_vcr(items: list[Exchange]) -> str:
    def body(data: bytes) -> dict[str, object]:
        text = _text(data)
        if text is None:
            return {"encoding": "ASCII-8BIT", "string": RubyBinary(data)}
        return {"encoding": "UTF-8", "string": text}

    interactions = [
        {
            "request": {"method": e.method.lower(), "uri": e.url, "body": body(e.request),
                        "headers": {"Content-Type": [e.request_type]}},
            "response": {"status": {"code": e.status, "message": "OK"},
                         "headers": {"Content-Type": [e.response_type]},
                         "body": body(e.response), "http_version": None},
            "recorded_at": "Wed, 04 Dec 2024 10:00:00 GMT",
        }
        for e in items
    ]  # fmt: skip
    return yaml.dump(
        {"http_interactions": interactions, "recorded_with": "VCR 6.3.1"}, Dumper=_Dumper
    )


def go_vcr(items: list[Exchange]) -> str:
    def body(data: bytes) -> object:
        text = _text(data)
        return text if text is not None else data  # yaml.v2: invalid UTF-8 is !!binary

    interactions = [
        {
            "request": {"body": body(e.request), "form": {},
                        "headers": {"Content-Type": [e.request_type]},
                        "url": e.url, "method": e.method},
            "response": {"body": body(e.response),
                         "headers": {"Content-Type": [e.response_type]},
                         "status": f"{e.status} {'OK' if e.status < 400 else 'Not Found'}",
                         "code": e.status, "duration": "120ms"},
        }
        for e in items
    ]  # fmt: skip
    return yaml.dump({"version": 2, "interactions": interactions}, Dumper=_Dumper)


def har(items: list[Exchange]) -> str:
    def content(e: Exchange) -> dict[str, object]:
        text = _text(e.response)
        out: dict[str, object] = {"size": len(e.response), "mimeType": e.response_type}
        if text is None:
            out.update(text=base64.b64encode(e.response).decode(), encoding="base64")
        else:
            out["text"] = text
        return out

    entries = [
        {
            "startedDateTime": "2024-12-04T10:00:00.000Z",
            "request": {"method": e.method, "url": e.url, "httpVersion": "HTTP/1.1",
                        "headers": [{"name": "Content-Type", "value": e.request_type}],
                        **({"postData": {"mimeType": e.request_type,
                                         "text": e.request.decode()}} if e.request else {})},
            "response": {"status": e.status, "statusText": "", "httpVersion": "HTTP/1.1",
                         "headers": [{"name": "Content-Type", "value": e.response_type}],
                         "content": content(e)},
        }
        for e in items
    ]  # fmt: skip
    return json.dumps({"log": {"version": "1.2", "creator": {"name": "mix"}, "entries": entries}})


def httprr(items: list[Exchange]) -> bytes:
    out = b"httprr trace v1\n"
    for e in items:
        host = e.url.split("/")[2]
        head = [f"{e.method} {e.url} HTTP/1.1", f"Host: {host}", "User-Agent: Go-http-client/1.1"]
        if e.request:
            head += [f"Content-Length: {len(e.request)}", f"Content-Type: {e.request_type}"]
        request = ("\r\n".join(head) + "\r\n\r\n").encode() + e.request
        # A streamed answer is written chunked, as Response.Write does with
        # no length; the others with their Content-Length.
        if e.response_type == "text/event-stream":
            body = b"%x\r\n%s\r\n0\r\n\r\n" % (len(e.response), e.response)
            framing = "Transfer-Encoding: chunked"
        else:
            body, framing = e.response, f"Content-Length: {len(e.response)}"
        response = (
            f"HTTP/1.1 {e.status} X\r\nContent-Type: {e.response_type}\r\n{framing}\r\n\r\n"
        ).encode() + body
        out += b"%d %d\n" % (len(request), len(response)) + request + response
    return out


def test_proxy(items: list[Exchange]) -> str:
    def body(data: bytes, content_type: str) -> object:
        if not data:
            return []
        text = _text(data)
        if content_type.startswith(("application/json", "text/")) and text is not None:
            try:
                value = json.loads(text)
            except ValueError:
                value = None
            if isinstance(value, dict):
                return value
            return [line for line in text.splitlines(keepends=True)]
        return base64.b64encode(data).decode()

    entries = [
        {
            "RequestUri": e.url, "RequestMethod": e.method,
            "RequestHeaders": {"Content-Type": e.request_type},
            "RequestBody": body(e.request, e.request_type) if e.request else None,
            "StatusCode": e.status,
            "ResponseHeaders": {"Content-Type": e.response_type},
            "ResponseBody": body(e.response, e.response_type),
        }
        for e in items
    ]  # fmt: skip
    return json.dumps({"Entries": entries, "Variables": {}}, indent=2)


CONTAINERS: dict[str, tuple[str, Any]] = {
    "vcrpy": ("mix.yaml", vcrpy),
    "ruby-vcr": ("mix.yml", ruby_vcr),
    "go-vcr": ("mix_govcr.yaml", go_vcr),
    "har": ("mix.har", har),
    "httprr": ("mix.httprr", httprr),
    "test-proxy": ("mix.json", test_proxy),
}


def write(tmp_path: Path, container: str, *, gzipped: bool = False) -> Path:
    """The mixed recording in ``container``, written under ``tmp_path``."""
    name, writer = CONTAINERS[container]
    data = writer(exchanges())
    raw = data.encode() if isinstance(data, str) else data
    path = tmp_path / (name + (".gz" if gzipped else ""))
    path.write_bytes(gzip.compress(raw) if gzipped else raw)
    return path
