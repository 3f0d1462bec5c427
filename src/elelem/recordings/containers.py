"""The containers other projects publish recordings in, and their bodies' encodings.

:mod:`elelem.recordings.cassettes` dispatches here for the containers beyond
the corpus' own: Ruby VCR and R vcr cassettes (``http_interactions``, Ruby's
``!binary`` tag, ``base64_string`` bodies), JSON ``{status, headers, body}``
wrappers, HAR files (a browser's or a proxy's export) and raw AWS
event-stream bodies.  Every body goes through :func:`decode_body`: a
recorder may keep it still compressed (vcrpy's ``!!binary`` gzip), or
already decoded while the header still says ``gzip`` or ``br`` (Ruby VCR,
HAR); the bytes' own magic decides, never the header alone.
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from elelem.errors import ElelemError
from elelem.vocabulary.json import JSONValue

MAX_DECODED_BYTES = 64 * 1024 * 1024
"""The most a recorded body may decode to (a small gzip can expand without bound)."""

_GZIP = b"\x1f\x8b"
_EVENTSTREAM_TYPE = "application/vnd.amazon.eventstream"


class BodyError(ElelemError, ValueError):
    """A body that says it is encoded and cannot be decoded (the message says why)."""


def decode_body(body: bytes, declared: str) -> tuple[bytes, str]:
    """``body`` decoded, and the content-coding it really had (``""``: none).

    ``declared`` is the recorded ``content-encoding`` header.  gzip and zlib
    (``deflate``) are told by their magic bytes, whatever the header says;
    a header that names an encoding the bytes do not have is taken for a
    recorder that stored the body decoded.  Brotli has no magic: a body the
    header calls ``br`` that does not decode as Brotli but is already text
    (JSON or an event stream) is taken as decoded, anything else is a
    :class:`BodyError`.  Raw deflate (no zlib header) is tried only when
    the header says ``deflate``.
    """
    said = {token.strip().lower() for token in declared.split(",") if token.strip()}
    if body[:2] == _GZIP:
        return _inflate(body, 16 + zlib.MAX_WBITS, "gzip"), "gzip"
    if _zlib_header(body):
        return _inflate(body, zlib.MAX_WBITS, "deflate"), "deflate"
    if "br" in said:
        try:
            return _unbrotli(body), "br"
        except BodyError:
            if _looks_decoded(body):
                return body, ""
            raise
    if "deflate" in said and not _looks_decoded(body):
        return _inflate(body, -zlib.MAX_WBITS, "deflate"), "deflate"
    return body, ""


def _zlib_header(body: bytes) -> bool:
    # RFC 1950: CM = 8 (deflate), a window of at most 32K, and FCHECK.
    return (
        len(body) >= 2
        and body[0] & 0x0F == 8
        and body[0] >> 4 <= 7
        and (body[0] << 8 | body[1]) % 31 == 0
    )


def _looks_decoded(body: bytes) -> bool:
    head = body.lstrip()[:1]
    return head in (b"{", b"[", b"e", b"d", b":", b"i", b"r") or not body.strip()


def _inflate(body: bytes, wbits: int, name: str) -> bytes:
    out = bytearray()
    data = body
    try:
        while data:
            inflater = zlib.decompressobj(wbits)
            out += inflater.decompress(data, MAX_DECODED_BYTES + 1 - len(out))
            if len(out) > MAX_DECODED_BYTES or inflater.unconsumed_tail:
                raise BodyError(f"the {name} body decodes to more than {MAX_DECODED_BYTES} bytes")
            if not inflater.eof:
                raise BodyError(f"the {name} body is cut off")
            # gzip allows several members one after another.
            data = inflater.unused_data if wbits > zlib.MAX_WBITS else b""
    except zlib.error as exc:
        raise BodyError(f"the {name} body does not decode: {exc}") from None
    return bytes(out)


def _unbrotli(body: bytes) -> bytes:
    import brotli  # type: ignore[import-untyped]  # httpx2's brotli extra

    try:
        inflater = brotli.Decompressor()
        out: bytes = inflater.process(body, output_buffer_limit=MAX_DECODED_BYTES + 1)
    except brotli.error as exc:
        raise BodyError(f"the br body does not decode: {exc}") from None
    if len(out) > MAX_DECODED_BYTES:
        raise BodyError(f"the br body decodes to more than {MAX_DECODED_BYTES} bytes")
    if not bool(inflater.is_finished()):
        raise BodyError("the br body is cut off")
    return out


def is_eventstream(raw: bytes) -> bool:
    """True when ``raw`` begins with an AWS event-stream message prelude
    (total length, headers length, and their CRC32)."""
    if len(raw) < 16:
        return False
    total, headers, crc = struct.unpack_from(">III", raw)
    return bool(zlib.crc32(raw[:8]) == crc and total >= 16 and headers < total)


def eventstream_content_type() -> str:
    """The media type of a binary event-stream body."""
    return _EVENTSTREAM_TYPE


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
            try:
                body = base64.b64decode("".join(text.split()), validate=True)
            except binascii.Error as exc:
                raise BodyError(f"{where} response content is not base64: {exc}") from None
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
    "MAX_DECODED_BYTES",
    "BodyError",
    "Wrapped",
    "decode_body",
    "eventstream_content_type",
    "har_entries",
    "is_eventstream",
    "is_har",
    "is_json_wrapper",
    "json_wrapped",
    "parse_json",
    "request_parts",
    "ruby_binary",
    "vcr_body",
]
