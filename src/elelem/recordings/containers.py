"""The containers other projects publish recordings in.

:mod:`elelem.recordings.cassettes` dispatches here for the containers beyond
the corpus' own: Ruby VCR, R vcr and Betamax cassettes
(``http_interactions``, Ruby's ``!binary`` tag, ``base64_string`` bodies),
go-vcr's and vcrpy's other layouts (``url`` and ``code``; the old httpx
``content`` and ``status_code``; ``!!python/…`` tags read as data), JSON
``{status, headers, body}`` wrappers, ``{request, response}`` pairs
(dd-trace), nock recordings, HAR files (a browser's or a proxy's export, and
Polly.js' chunked base64 bodies) and raw AWS event-stream bodies.  Every
reader is data only: no YAML tag or pickle is ever executed, and every
input is bounded like the rest.  Every body goes through
:func:`~elelem.recordings.bodies.decode_body`: a
recorder may keep it still compressed (vcrpy's ``!!binary`` gzip), or
already decoded while the header still says ``gzip`` or ``br`` (Ruby VCR,
HAR); the bytes' own magic decides, never the header alone.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from elelem.recordings.bodies import BodyError
from elelem.vocabulary.json import JSONValue

# -- Ruby VCR / R vcr ------------------------------------------------------------


def ruby_binary(loader: Any, node: Any) -> bytes:
    """Ruby's ``!binary`` YAML tag: base64 text, the bytes it encodes."""
    text = "".join(str(loader.construct_scalar(node)).split())
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error as exc:
        raise BodyError(f"a !binary value is not base64: {exc}") from None


def vcr_body(container: object, where: str) -> bytes:
    """The bytes of a cassette body: vcrpy's ``{string}``, Ruby VCR's
    ``{encoding, string}``, R vcr's ``{base64_string}``, or a bare string."""
    if isinstance(container, dict):
        if "base64_string" in container:
            text = container["base64_string"]
            if not isinstance(text, str):
                raise BodyError(f"{where} base64_string is not text")
            try:
                return base64.b64decode("".join(text.split()), validate=True)
            except binascii.Error as exc:
                raise BodyError(f"{where} base64_string is not base64: {exc}") from None
        container = container.get("string")
    if isinstance(container, bytes):
        return container
    if isinstance(container, str):
        return container.encode("utf-8", "surrogateescape")
    if container is None:
        return b""
    raise BodyError(f"{where} body is not text")


def python_tag(loader: Any, suffix: str, node: Any) -> Any:
    """A ``!!python/…`` YAML tag (vcrpy writes header names as
    ``!!python/object/apply:multidict._multidict.istr``), read as the plain
    data it holds and never executed: a scalar as its text, a sequence as
    its items (one item, a string type's only argument, as that item), a
    mapping as its pairs."""
    del suffix  # what the tag names is never looked up, let alone called
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        items = loader.construct_sequence(node, deep=True)
        return items[0] if len(items) == 1 and isinstance(items[0], str) else items
    return loader.construct_mapping(node, deep=True)


def status_code(response: dict[str, Any], where: str) -> int:
    """The status of a recorded response in any recorder's spelling: vcrpy's
    and Ruby VCR's ``status: {code}``, R vcr's ``status: {status_code:
    '200'}``, go-vcr's ``code: 200`` (beside ``status: 200 OK``), vcrpy's
    old httpx ``status_code``, a bare number or ``"200 OK"``."""
    candidates: list[object] = [response.get("code")]
    status = response.get("status")
    if isinstance(status, dict):
        candidates += [status.get("code"), status.get("status_code")]
    else:
        candidates.append(status)
    candidates.append(response.get("status_code"))
    for value in candidates:
        if type(value) is int:
            return value
        code = value.split(" ", 1)[0] if isinstance(value, str) else ""
        # ASCII digits, three at most: '²' is a digit to str.isdigit but no
        # number to int, and int refuses a string past 4,300 digits.
        if code.isascii() and code.isdigit() and len(code) <= 3:
            return int(code)
    raise BodyError(f"{where} response has no status code")


def pair_body(container: dict[str, Any], where: str) -> tuple[bytes, bool]:
    """The body bytes of a recorded request or response, and whether they
    are the recorded bytes: ``body`` as :func:`vcr_body` reads it, vcrpy's
    old httpx ``content`` text, or a JSON value a recorder kept parsed
    (re-encoded: its structure is right, its bytes are not the original)."""
    if "body" not in container and "content" in container:
        container = {"body": container["content"]}
    body = container.get("body")
    if isinstance(body, dict) and not {"string", "base64_string"} & body.keys():
        return json.dumps(body, ensure_ascii=False).encode(), False
    if isinstance(body, list):
        return json.dumps(body, ensure_ascii=False).encode(), False
    return vcr_body(body, where), True


# -- JSON wrappers and HAR ------------------------------------------------------------

Wrapped = tuple[dict[str, Any] | None, int, dict[str, str], bytes]
"""A request (method, uri, headers, body text, json) or None, the status,
the headers and the body bytes."""


def is_json_wrapper(data: object) -> bool:
    """A ``{status, headers?, body}`` object (or a list of them) with an
    integer status: how several projects store one response as JSON."""
    items = data if isinstance(data, list) and data else [data]
    return all(isinstance(i, dict) and type(i.get("status")) is int and "body" in i for i in items)


def json_wrapped(data: object, path: Path) -> list[Wrapped]:
    """The responses of a JSON wrapper file."""
    items = data if isinstance(data, list) else [data]
    out: list[Wrapped] = []
    for n, item in enumerate(items):
        assert isinstance(item, dict)
        body = item["body"]
        if isinstance(body, str):
            raw = body.encode("utf-8")
        else:
            raw = json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = _header_map(item.get("headers"), f"response {n} headers", path)
        request = item.get("request")
        out.append((_wrapped_request(request) if isinstance(request, dict) else None,
                    item["status"], headers, raw))  # fmt: skip
    return out


def _wrapped_request(request: dict[str, Any]) -> dict[str, Any]:
    body = request.get("body")
    text = body if isinstance(body, str) or body is None else json.dumps(body)
    return {
        "method": str(request.get("method", "POST")),
        "uri": str(request.get("url") or request.get("uri") or ""),
        "headers": _header_map(request.get("headers"), "request headers", None),
        "body": text,
    }


def _header_map(raw: object, what: str, path: Path | None) -> dict[str, str]:
    """Headers as a mapping or as ``[{name, value}]`` / ``[[name, value]]``."""
    out: dict[str, str] = {}
    if raw is None:
        return out
    pairs: list[tuple[object, object]]
    if isinstance(raw, dict):
        pairs = list(raw.items())
    elif isinstance(raw, list):
        pairs = []
        for h in raw:
            if isinstance(h, dict) and "name" in h:
                pairs.append((h["name"], h.get("value", "")))
            elif isinstance(h, list) and len(h) == 2:
                pairs.append((h[0], h[1]))
            else:
                raise BodyError(f"{what}: {h!r} is not a header")
    else:
        raise BodyError(f"{what} are not a mapping or a list")
    for name, value in pairs:
        values = value if isinstance(value, list) else [value]
        key = str(name).lower()
        joined = ", ".join(str(v) for v in values)
        out[key] = f"{out[key]}, {joined}" if key in out else joined
    return out


def is_har(data: object) -> bool:
    """A HAR document: ``{"log": {"entries": [...]}}``."""
    log = data.get("log") if isinstance(data, dict) else None
    return isinstance(log, dict) and isinstance(log.get("entries"), list)


def har_entries(data: dict[str, Any]) -> list[Wrapped]:
    """Each HAR entry's request and response (``content.encoding`` base64 decoded)."""
    out: list[Wrapped] = []
    for n, entry in enumerate(data["log"]["entries"]):
        where = f"entry {n}"
        if not isinstance(entry, dict):
            raise BodyError(f"{where} is not an object")
        req, resp = entry.get("request"), entry.get("response")
        if not isinstance(req, dict) or not isinstance(resp, dict):
            raise BodyError(f"{where} has no request or response object")
        post = req.get("postData")
        request = {
            "method": str(req.get("method", "GET")),
            "uri": str(req.get("url", "")),
            "headers": _header_map(req.get("headers"), f"{where} request headers", None),
            "body": post.get("text") if isinstance(post, dict) else None,
        }
        content = resp.get("content")
        content = content if isinstance(content, dict) else {}
        text = content.get("text", "")
        if not isinstance(text, str):
            raise BodyError(f"{where} response content.text is not text")
        if content.get("encoding") == "base64":
            body = _har_base64(text, where)
        else:
            body = text.encode("utf-8")
        headers = _header_map(resp.get("headers"), f"{where} response headers", None)
        if "content-type" not in headers and isinstance(content.get("mimeType"), str):
            headers["content-type"] = content["mimeType"]
        status = resp.get("status")
        if type(status) is not int:
            raise BodyError(f"{where} response status is not a number")
        out.append((request, status, headers, body))
    return out


def _har_base64(text: str, where: str) -> bytes:
    """A HAR ``content.text`` in base64; Polly.js keeps a chunked body as a
    JSON array of base64 chunks (of a gzip body, say), joined here."""
    chunks: object = [text]
    if text.lstrip().startswith("["):
        try:
            chunks = json.loads(text)
        except ValueError:
            raise BodyError(f"{where} response content is not base64 or a list of it") from None
    if not isinstance(chunks, list) or not all(isinstance(c, str) for c in chunks):
        raise BodyError(f"{where} response content is not a list of base64 chunks")
    try:
        return b"".join(base64.b64decode("".join(c.split()), validate=True) for c in chunks)
    except binascii.Error as exc:
        raise BodyError(f"{where} response content is not base64: {exc}") from None


# -- nock and {request, response} pairs ---------------------------------------------


def is_nock(data: object) -> bool:
    """A nock recording: a JSON array of ``{scope, method, path, status, response}``."""
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(i, dict) and "scope" in i and "method" in i for i in data)
    )


def nock_entries(data: list[dict[str, Any]]) -> list[Wrapped]:
    """Each nock definition's request and response.  ``response`` is the body
    as text, a JSON value nock parsed (re-encoded), or (``responseIsBinary``,
    or an older nock's list of chunks) hex; ``rawHeaders`` a flat list of
    names and values, or a mapping."""
    out: list[Wrapped] = []
    for n, entry in enumerate(data):
        where = f"definition {n}"
        scope, path = entry.get("scope"), entry.get("path", "")
        if not isinstance(scope, str) or not isinstance(path, str):
            raise BodyError(f"{where} has no scope and path text")
        sent = entry.get("body")
        request: dict[str, Any] = {
            "method": str(entry.get("method", "GET")),
            "uri": scope.rstrip("/") + path,
            "headers": {},
            "body": sent if isinstance(sent, str) or sent is None else json.dumps(sent),
        }
        raw = entry.get("rawHeaders")
        if isinstance(raw, list) and all(isinstance(h, str) for h in raw):
            raw = [raw[i : i + 2] for i in range(0, len(raw) - 1, 2)]
        headers = _header_map(raw if raw is not None else entry.get("headers"), where, None)
        status = entry.get("status", 200)
        if type(status) is not int:
            raise BodyError(f"{where} status is not a number")
        out.append((request, status, headers, _nock_body(entry, where)))
    return out


def _nock_body(entry: dict[str, Any], where: str) -> bytes:
    body = entry.get("response", "")
    hexed = entry.get("responseIsBinary") is True or (
        isinstance(body, list) and bool(body) and all(_is_hex(c) for c in body)
    )
    if hexed:
        chunks = body if isinstance(body, list) else [body]
        try:
            return b"".join(bytes.fromhex(str(c)) for c in chunks)
        except ValueError:
            raise BodyError(f"{where} binary response is not hex") from None
    if isinstance(body, str):
        return body.encode("utf-8")
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


def _is_hex(chunk: object) -> bool:
    return (
        isinstance(chunk, str)
        and len(chunk) % 2 == 0
        and bool(chunk)
        and all(c in "0123456789abcdefABCDEF" for c in chunk)
    )


def is_pairs(data: object) -> bool:
    """``{request, response}`` objects (one, or a list), as dd-trace's and
    other recorders keep one exchange per object."""
    items = data if isinstance(data, list) and data else [data]
    return all(
        isinstance(i, dict)
        and isinstance(i.get("request"), dict)
        and isinstance(i.get("response"), dict)
        for i in items
    )


def request_parts(request: dict[str, Any]) -> tuple[str, str, str]:
    """``(method, path, query)`` of a wrapped request's URI."""
    parts = urlsplit(request["uri"])
    return request["method"].upper(), parts.path, parts.query


def parse_json(text: str | None) -> JSONValue:
    """``text`` parsed as JSON, None when it is absent or not JSON."""
    if text is None or not text.strip():
        return None
    try:
        value: JSONValue = json.loads(text)
    except ValueError:
        return None
    return value


Loader = Callable[[Path, bytes], Any]

__all__ = [
    "Wrapped",
    "har_entries",
    "is_har",
    "is_json_wrapper",
    "is_nock",
    "is_pairs",
    "json_wrapped",
    "nock_entries",
    "pair_body",
    "parse_json",
    "python_tag",
    "request_parts",
    "ruby_binary",
    "status_code",
    "vcr_body",
]
