"""Go's httprr traces and the Azure SDK test-proxy recordings, built here
from their documented formats, plain, gzipped and mislabelled.

httprr: ``golang.org/x/oscar/internal/httprr`` (``httprr.go``): a line
``httprr trace v1``, then per exchange ``N1 N2\\n``, N1 bytes of the request
as ``http.Request.WriteProxy`` writes it and N2 bytes of the response as
``http.Response.Write`` writes it.  test-proxy: ``Azure/azure-sdk-tools``,
``tools/test-proxy/Azure.Sdk.Tools.TestProxy/Common/RecordEntry.cs``
(``Serialize``/``DeserializeBody``) and ``ContentTypeUtilities.cs``.
"""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import pytest

from elelem.recordings.cassettes import RecordingError, load

CHAT_REQUEST = json.dumps({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]})
CHAT_ANSWER = json.dumps(
    {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    }
)  # fmt: skip
SSE = b'data: {"id":"c","object":"chat.completion.chunk","choices":[]}\n\ndata: [DONE]\n\n'


def http_request(method: str, url: str, body: bytes, **headers: str) -> bytes:
    """A request as Go's ``WriteProxy`` writes it: the absolute URL on the
    request line, ``Host``, ``User-Agent``, ``Content-Length``."""
    host = url.split("/")[2]
    lines = [f"{method} {url} HTTP/1.1", f"Host: {host}", "User-Agent: Go-http-client/1.1"]
    lines += [f"{k.replace('_', '-')}: {v}" for k, v in headers.items()]
    if body:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def http_response(status: str, body: bytes, *, chunked: bool = False, **headers: str) -> bytes:
    """A response as Go's ``Response.Write`` writes it."""
    lines = [f"HTTP/1.1 {status}"] + [f"{k.replace('_', '-')}: {v}" for k, v in headers.items()]
    if chunked:
        lines.append("Transfer-Encoding: chunked")
        middle = len(body) // 2
        pieces = [body[:middle], body[middle:]]
        body = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces if p) + b"0\r\n\r\n"
    else:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def httprr(exchanges: list[tuple[bytes, bytes]]) -> bytes:
    out = b"httprr trace v1\n"
    for request, response in exchanges:
        out += b"%d %d\n" % (len(request), len(response)) + request + response
    return out


def a_trace() -> bytes:
    return httprr(
        [
            (
                http_request("POST", "https://api.openai.com/v1/chat/completions",
                             CHAT_REQUEST.encode(), Content_Type="application/json"),
                http_response("200 OK", SSE, chunked=True, Content_Type="text/event-stream"),
            ),
            (
                http_request("POST", "https://api.openai.com/v1/chat/completions",
                             CHAT_REQUEST.encode(), Content_Type="application/json"),
                http_response("200 OK", gzip.compress(CHAT_ANSWER.encode()),
                              Content_Type="application/json", Content_Encoding="gzip"),
            ),
        ]
    )  # fmt: skip


@pytest.mark.parametrize(
    ("name", "gzipped"),
    [("chat.httprr", False), ("chat.httprr.gz", True), ("chat.json", False), ("chat.yaml", True)],
)
def test_an_httprr_trace_is_read_plain_gzipped_and_mislabelled(
    tmp_path: Path, name: str, gzipped: bool
) -> None:
    path = tmp_path / name
    raw = a_trace()
    path.write_bytes(gzip.compress(raw) if gzipped else raw)
    recording = load(path)
    assert recording.format == "httprr"
    first, second = recording.interactions
    assert first.request is not None and second.request is not None
    assert (first.request.method, first.request.uri, first.request.path) == (
        "POST",
        "https://api.openai.com/v1/chat/completions",
        "/v1/chat/completions",
    )
    assert first.request.json == json.loads(CHAT_REQUEST)
    assert first.request.headers["host"] == "api.openai.com"
    # The chunked transfer coding is undone; the body is the SSE it carried.
    assert (first.response.status, first.response.body, first.response.streamed) == (
        200,
        SSE,
        True,
    )
    assert first.response.headers["transfer-encoding"] == "chunked"
    # The gzip content coding is undone by the bytes' magic, as everywhere.
    assert (second.response.body, second.response.encoding) == (CHAT_ANSWER.encode(), "gzip")
    assert "content-encoding" not in second.response.headers


@pytest.mark.parametrize(
    ("trace", "problem"),
    [
        (b"httprr trace v1\n12 x\n", "exchange 0: '12 x' is not a line of two sizes"),
        (b"httprr trace v1\n10 900\nGET / HTTP", "exchange 0 declares more bytes than the trace holds"),
        (b"httprr trace v1\n5 0\nhello", "exchange 0: the recorded request is not HTTP/1.1: "),
    ],
)  # fmt: skip
def test_a_corrupt_httprr_trace_is_a_typed_error(
    tmp_path: Path, trace: bytes, problem: str
) -> None:
    path = tmp_path / "bad.httprr"
    path.write_bytes(trace)
    with pytest.raises(RecordingError) as caught:
        load(path)
    assert caught.value.problem.startswith(problem)


MP3 = b"ID3\x04\x00\x00\x00\x00\x00\x00\xff\xfb\x90\x00"


def proxy_recording() -> dict[str, object]:
    """Entries as ``RecordEntry.Serialize`` writes them: a JSON object body,
    a text body kept as its lines, a binary body in base64, an empty one."""
    chat = json.loads(CHAT_ANSWER)
    return {
        "Entries": [
            {
                "RequestUri": "https://res.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21",
                "RequestMethod": "POST",
                "RequestHeaders": {"Content-Type": "application/json", "Accept": ["application/json"]},
                "RequestBody": json.loads(CHAT_REQUEST),
                "StatusCode": 200,
                "ResponseHeaders": {"Content-Type": "application/json; charset=utf-8"},
                "ResponseBody": chat,
            },
            {
                "RequestUri": "https://res.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21",
                "RequestMethod": "POST",
                "RequestHeaders": {"Content-Type": "application/json"},
                "RequestBody": json.loads(CHAT_REQUEST),
                "StatusCode": 200,
                "ResponseHeaders": {"Content-Type": "text/event-stream"},
                "ResponseBody": [line + "\n" for line in SSE.decode().split("\n")[:-1]],
            },
            {
                "RequestUri": "https://res.openai.azure.com/openai/deployments/tts/audio/speech?api-version=2025-03-01-preview",
                "RequestMethod": "POST",
                "RequestHeaders": {"Content-Type": "application/json"},
                "RequestBody": {"model": "tts-1", "input": "hi", "voice": "alloy"},
                "StatusCode": 200,
                "ResponseHeaders": {"Content-Type": "audio/mpeg"},
                "ResponseBody": base64.b64encode(MP3).decode(),
            },
            {
                "RequestUri": "https://res.openai.azure.com/openai/files/f-1?api-version=2024-10-21",
                "RequestMethod": "DELETE",
                "RequestHeaders": {},
                "RequestBody": None,
                "StatusCode": 204,
                "ResponseHeaders": {"Content-Length": "0"},
                "ResponseBody": [],
            },
        ],
        "Variables": {"RandomSeed": "1"},
    }  # fmt: skip


@pytest.mark.parametrize(
    ("name", "gzipped"),
    [("Test.json", False), ("Test.json.gz", True), ("Test.yaml", False), ("Test.yml", True)],
)
def test_a_test_proxy_recording_is_read_plain_gzipped_and_mislabelled(
    tmp_path: Path, name: str, gzipped: bool
) -> None:
    raw = json.dumps(proxy_recording(), indent=2).encode()
    path = tmp_path / name
    path.write_bytes(gzip.compress(raw) if gzipped else raw)
    recording = load(path)
    assert recording.format == "test-proxy"
    chat, streamed, speech, deleted = recording.interactions
    assert chat.request is not None and chat.request.json == json.loads(CHAT_REQUEST)
    assert chat.request.path == "/openai/deployments/gpt-4o/chat/completions"
    assert chat.request.query == "api-version=2024-10-21"
    assert json.loads(chat.response.body) == json.loads(CHAT_ANSWER)
    assert (streamed.response.body, streamed.response.streamed) == (SSE, True)
    assert (speech.response.body, speech.response.content_type) == (MP3, "audio/mpeg")
    assert (deleted.response.status, deleted.response.body) == (204, b"")
    assert deleted.request is not None and deleted.request.method == "DELETE"


def test_a_test_proxy_body_that_is_not_base64_is_named(tmp_path: Path) -> None:
    data = proxy_recording()
    entries = data["Entries"]
    assert isinstance(entries, list)
    entries[2]["ResponseBody"] = "not base64!"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(RecordingError) as caught:
        load(path)
    assert caught.value.problem.startswith("entry 2 ResponseBody is not base64")
