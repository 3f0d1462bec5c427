"""More containers other projects publish recordings in (issue #31).

Each is written here the way its recorder writes it, from the recorder's
own documented or source-visible layout:

- go-vcr (github.com/dnaeon/go-vcr, ``recorder/cassette``): YAML
  ``version`` + ``interactions[]`` whose ``request`` has ``url``, ``method``,
  ``body`` and ``headers`` (name -> list) and whose ``response`` has a plain
  ``body``, ``headers``, ``status: "200 OK"`` and ``code: 200``;
- vcrpy's old httpx stubs (``vcr/stubs/httpx_stubs.py``): ``response``
  ``{status_code, http_version, headers, content}``;
- vcrpy YAML written from aiohttp, whose header names are multidict
  ``istr`` objects: ``!!python/object/apply:multidict._multidict.istr``;
- vcrpy's JSON serializer (``serializer="json"``): the YAML layout as JSON;
- R vcr (docs.ropensci.org/vcr, "cassette format"): ``status: {status_code:
  '200', message}``, ``base64_string`` bodies, YAML or JSON;
- Betamax (betamax.readthedocs.io, "Cassettes"): JSON ``http_interactions``
  with ``status: {code, message}`` and ``body: {encoding, string |
  base64_string}``;
- nock (github.com/nock/nock, "Recording"): ``nock.recorder.play()`` output,
  a JSON array of ``{scope, method, path, body, status, response,
  rawHeaders}``, binary bodies as hex (``responseIsBinary``);
- Polly.js (netflix.github.io/pollyjs, the HAR persister): HAR whose
  ``content.text`` is, for a chunked body, a JSON array of base64 chunks;
- dd-trace: ``{request, response}`` JSON objects, one exchange each.

Each holds the same small answer plain, gzip-compressed under a
``content-encoding: gzip`` header (where the container can hold bytes) and
plain under a header that lies; each must load to the plain body and
``elelem inspect`` must print the answer from it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from elelem.recordings.cassettes import RecordingError, load
from test_containers import (
    REQUEST,
    SSE,
    URI,
    VARIANTS,
    TextOnly,
    _b64,
    _yaml_str,
    check_container,
    write,
)

GZIP = b"\x1f\x8b"


def go_vcr(body: bytes, enc: str) -> str:
    value = f"!!binary {_b64(body)}" if body[:2] == GZIP else _yaml_str(body.decode())
    extra = f"            Content-Encoding:\n                - {enc}\n" if enc else ""
    return (
        "---\nversion: 2\ninteractions:\n    - id: 0\n      request:\n"
        "        proto: HTTP/1.1\n        proto_major: 1\n        proto_minor: 1\n"
        f"        content_length: {len(REQUEST)}\n        host: api.anthropic.com\n"
        f"        body: {_yaml_str(REQUEST)}\n        form: {{}}\n"
        "        headers:\n            Content-Type:\n                - application/json\n"
        f"        url: {URI}\n        method: POST\n"
        "      response:\n        proto: HTTP/2.0\n        content_length: -1\n"
        "        uncompressed: false\n"
        f"        body: {value}\n"
        "        headers:\n            Content-Type:\n                - text/event-stream\n"
        f"{extra}        status: 200 OK\n        code: 200\n        duration: 1.2s\n"
    )


def vcrpy_httpx(body: bytes, enc: str) -> str:
    if body[:2] == GZIP:
        raise TextOnly  # the old httpx stub kept content as decoded text
    extra = f"      - - content-encoding\n        - {enc}\n" if enc else ""
    return (
        "interactions:\n- request:\n    body: " + _yaml_str(REQUEST) + "\n"
        "    headers:\n      content-type:\n      - application/json\n"
        f"    method: POST\n    uri: {URI}\n"
        f"  response:\n    content: {_yaml_str(body.decode())}\n"
        "    headers:\n      - - content-type\n        - text/event-stream\n"
        f"{extra}    http_version: HTTP/1.1\n    status_code: 200\nversion: 1\n"
    )


def vcrpy_istr(body: bytes, enc: str) -> str:
    if body[:2] == GZIP:
        raise TextOnly
    istr = "!!python/object/apply:multidict._multidict.istr"
    extra = f"      ? {istr}\n      - Content-Encoding\n      : - {enc}\n" if enc else ""
    return (
        "interactions:\n- request:\n    body: " + _yaml_str(REQUEST) + "\n"
        f"    headers: {{}}\n    method: POST\n    uri: {URI}\n"
        f"  response:\n    body:\n      string: {_yaml_str(body.decode())}\n"
        f"    headers:\n      ? {istr}\n      - Content-Type\n      : - text/event-stream\n{extra}"
        "    status:\n      code: 200\n      message: OK\n    url: " + URI + "\nversion: 1\n"
    )


def vcrpy_json(body: bytes, enc: str) -> str:
    if body[:2] == GZIP:
        raise TextOnly  # the JSON serializer keeps text
    headers = {
        "Content-Type": ["text/event-stream"],
        **({"Content-Encoding": [enc]} if enc else {}),
    }
    response = {
        "body": {"string": body.decode()},
        "headers": headers,
        "status": {"code": 200, "message": "OK"},
    }
    request = {"body": REQUEST, "headers": {}, "method": "POST", "uri": URI}
    return json.dumps({"interactions": [{"request": request, "response": response}], "version": 1})


def r_vcr_status_code(body: bytes, enc: str) -> str:
    extra = f"      content-encoding: {enc}\n" if enc else ""
    return (
        "http_interactions:\n- request:\n    method: post\n"
        f"    uri: {URI}\n    body:\n      encoding: ''\n      string: {_yaml_str(REQUEST)}\n"
        "    headers:\n      Accept: application/json, text/xml, application/xml, */*\n"
        "  response:\n    status:\n      status_code: '200'\n      message: OK\n"
        "      explanation: Request fulfilled, document follows\n"
        f"    headers:\n      status: HTTP/1.1 200 OK\n      content-type: text/event-stream\n{extra}"
        f"    body:\n      encoding: ''\n      file: no\n      base64_string: {_b64(body)}\n"
        "  recorded_at: 2026-12-01 09:00:00 GMT\n  recorded_with: vcr/1.2.2, webmockr/0.9.0\n"
    )


def r_vcr_json(body: bytes, enc: str) -> str:
    headers = {"content-type": "text/event-stream", **({"content-encoding": enc} if enc else {})}
    return json.dumps(
        {
            "http_interactions": [
                {
                    "request": {
                        "method": "post",
                        "uri": URI,
                        "body": {"encoding": "", "string": REQUEST},
                    },
                    "response": {
                        "status": {"status_code": "200", "message": "OK"},
                        "headers": headers,
                        "body": {"encoding": "", "file": False, "base64_string": _b64(body)},
                    },
                    "recorded_at": "2026-12-01 09:00:00 GMT",
                }
            ]
        }
    )


def betamax(body: bytes, enc: str) -> str:
    headers = {
        "Content-Type": ["text/event-stream"],
        **({"Content-Encoding": [enc]} if enc else {}),
    }
    if body[:2] == GZIP:
        kept = {"encoding": None, "base64_string": _b64(body)}
    else:
        kept = {"encoding": "utf-8", "string": body.decode()}
    interaction = {
        "request": {
            "body": {"encoding": "utf-8", "string": REQUEST},
            "headers": {"Content-Type": ["application/json"]},
            "method": "POST",
            "uri": URI,
        },
        "response": {
            "body": kept,
            "headers": headers,
            "status": {"code": 200, "message": "OK"},
            "url": URI,
        },
        "recorded_at": "2026-12-01T09:00:00",
    }
    return json.dumps({"http_interactions": [interaction], "recorded_with": "betamax/0.8.1"})


def nock(body: bytes, enc: str) -> str:
    raw_headers = ["Content-Type", "text/event-stream", *(["Content-Encoding", enc] if enc else [])]
    definition: dict[str, object] = {
        "scope": "https://api.anthropic.com:443",
        "method": "POST",
        "path": "/v1/messages",
        "body": json.loads(REQUEST),
        "status": 200,
        "rawHeaders": raw_headers,
    }
    if body[:2] == GZIP:
        # An older nock's gzip body: a list of hex chunks.
        cut = len(body) // 2
        definition["response"] = [body[:cut].hex(), body[cut:].hex()]
    else:
        definition["response"] = body.decode()
        definition["responseIsBinary"] = False
    return json.dumps([definition])


def polly_har(body: bytes, enc: str) -> str:
    headers = [{"name": "content-type", "value": "text/event-stream"}]
    if enc:
        headers.append({"name": "content-encoding", "value": enc})
    if body[:2] == GZIP:
        cut = len(body) // 3
        chunks = [_b64(body[:cut]), _b64(body[cut:])]
        content = {
            "mimeType": "text/event-stream",
            "size": len(body),
            "encoding": "base64",
            "text": json.dumps(chunks),
        }
    else:
        content = {"mimeType": "text/event-stream", "size": len(body), "text": body.decode()}
    entry = {
        "_id": "0f8a", "_order": 0, "startedDateTime": "2026-12-01T09:00:00.000Z", "time": 120,
        "request": {"method": "POST", "url": URI, "httpVersion": "HTTP/1.1", "headers": [],
                    "postData": {"mimeType": "application/json", "text": REQUEST}},
        "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
                     "headers": headers, "content": content},
    }  # fmt: skip
    log = {"_recordingName": "anthropic", "creator": {"name": "Polly.JS", "version": "6.0.6"}}
    return json.dumps({"log": {**log, "version": "1.2", "entries": [entry]}})


def dd_trace(body: bytes, enc: str) -> str:
    if body[:2] == GZIP:
        raise TextOnly
    headers = {"Content-Type": "text/event-stream", **({"Content-Encoding": enc} if enc else {})}
    return json.dumps(
        {
            "request": {
                "method": "POST",
                "url": URI,
                "headers": {"Content-Type": "application/json"},
                "body": REQUEST,
            },
            "response": {
                "status": {"code": 200, "message": "OK"},
                "headers": headers,
                "body": body.decode(),
            },
        }
    )


CONTAINERS: dict[str, tuple[str, Callable[[bytes, str], str]]] = {
    "go-vcr": ("cassette.yaml", go_vcr),
    "vcrpy-httpx": ("cassette.yaml", vcrpy_httpx),
    "vcrpy-istr": ("cassette.yaml", vcrpy_istr),
    "vcrpy-json": ("cassette.json", vcrpy_json),
    "r-vcr": ("cassette.yml", r_vcr_status_code),
    "r-vcr-json": ("cassette.json", r_vcr_json),
    "betamax": ("cassette.json", betamax),
    "nock": ("recording.json", nock),
    "polly": ("recording.har", polly_har),
    "dd-trace": ("exchange.json", dd_trace),
}


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("container", sorted(CONTAINERS))
def test_every_container_reads_and_inspects(tmp_path: Path, container: str, variant: str) -> None:
    name, make = CONTAINERS[container]
    interaction = check_container(tmp_path, name, make, variant)
    assert interaction.request is not None and interaction.request.path == "/v1/messages"


def test_a_python_tag_is_read_as_data_never_run(tmp_path: Path) -> None:
    # os.system named in a tag must not run: the tag's argument is data.
    marker = tmp_path / "ran"
    cassette = (
        vcrpy_istr(SSE, "")
        .replace(
            "!!python/object/apply:multidict._multidict.istr",
            "!!python/object/apply:os.system",
        )
        .replace("- Content-Type", f"- touch {marker}")
    )
    path = write(tmp_path, "cassette.yaml", cassette)
    (interaction,) = load(path).interactions
    assert not marker.exists()
    assert interaction.response.headers[f"touch {marker}"] == "text/event-stream"


def test_a_nock_binary_response_that_is_not_hex_is_named(tmp_path: Path) -> None:
    bad = [{"scope": "https://api.anthropic.com:443", "method": "POST", "path": "/v1/messages",
            "status": 200, "response": "zz", "responseIsBinary": True}]  # fmt: skip
    path = write(tmp_path, "recording.json", json.dumps(bad))
    with pytest.raises(RecordingError, match="definition 0 binary response is not hex"):
        load(path)


def test_a_status_nobody_can_read_is_named(tmp_path: Path) -> None:
    cassette = go_vcr(SSE, "").replace("        status: 200 OK\n        code: 200\n", "")
    path = write(tmp_path, "cassette.yaml", cassette)
    with pytest.raises(RecordingError, match="interaction 0 response has no status code"):
        load(path)
