"""Two more published containers: Go's ``httprr`` traces and the Azure SDK
test-proxy's recordings, read into the same request/response pairs as the
other containers (:data:`~elelem.recordings.containers.Wrapped`).

``httprr`` (``golang.org/x/oscar/internal/httprr``, ``rsc.io/httprr``)
    A line ``httprr trace v1``, then for each exchange a line ``N1 N2`` and
    N1 bytes of the request as Go's ``Request.WriteProxy`` writes it (the
    absolute URL on the request line) and N2 bytes of the response as
    ``Response.Write`` writes it: raw HTTP/1.1, chunked bodies included.
    Both messages are read by h11 (the HTTP/1.1 parser the transport
    stands on), so transfer codings are undone exactly as on the wire.

test-proxy (``Azure/azure-sdk-tools``, ``tools/test-proxy``, ``RecordEntry``)
    ``{"Entries": [{"RequestUri", "RequestMethod", "RequestHeaders",
    "RequestBody", "StatusCode", "ResponseHeaders", "ResponseBody"}],
    "Variables": {}}``.  A header is a string or a list of strings.  A body
    is ``null`` (none); under a text content type (``text/*``, ``…json``,
    ``…xml``, ``…-urlencoded`` or ``charset=utf-8``) a JSON object (the
    body itself), a string, or a list of strings (its lines, joined); under
    any other type base64 text, or ``[]`` for an empty body.

Both are data only, and bounded like every other container: the sizes an
``httprr`` trace declares must lie inside the file.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

import h11

from elelem.recordings.bodies import BodyError
from elelem.recordings.containers import Wrapped

HTTPRR_HEADER = b"httprr trace v1"
"""The first line of every ``httprr`` trace."""

_MAX_HEAD = 1024 * 1024
"""The most bytes of one recorded message's start line and headers."""


def is_httprr(raw: bytes) -> bool:
    """True when ``raw`` begins with the ``httprr`` header line."""
    line = raw[: len(HTTPRR_HEADER) + 2].split(b"\n", 1)[0]
    return line.rstrip(b"\r") == HTTPRR_HEADER


def httprr_entries(raw: bytes) -> list[Wrapped]:
    """Each exchange of an ``httprr`` trace (see the module docs)."""
    newline = raw.find(b"\n")
    if newline < 0 or not is_httprr(raw):
        raise BodyError("not an httprr trace (no 'httprr trace v1' line)")
    out: list[Wrapped] = []
    at = newline + 1
    while at < len(raw):
        where = f"exchange {len(out)}"
        end = raw.find(b"\n", at)
        if end < 0:
            raise BodyError(f"{where} has no size line")
        sizes = raw[at:end].rstrip(b"\r").split(b" ")
        if len(sizes) != 2 or not all(s.isdigit() and len(s) <= 12 for s in sizes):
            raise BodyError(f"{where}: {_shown(raw[at:end])} is not a line of two sizes")
        request_size, response_size = int(sizes[0]), int(sizes[1])
        start = end + 1
        if start + request_size + response_size > len(raw):
            raise BodyError(f"{where} declares more bytes than the trace holds")
        request = raw[start : start + request_size]
        response = raw[start + request_size : start + request_size + response_size]
        at = start + request_size + response_size
        out.append(_httprr_exchange(request, response, where))
    return out


def _shown(text: bytes) -> str:
    return repr(text[:40].decode("ascii", "replace"))


def _httprr_exchange(request: bytes, response: bytes, where: str) -> Wrapped:
    server = h11.Connection(h11.SERVER, max_incomplete_event_size=_MAX_HEAD)
    try:
        head, sent = _message(server, request, h11.Request)
    except (h11.RemoteProtocolError, BodyError) as exc:
        raise BodyError(f"{where}: the recorded request is not HTTP/1.1: {exc}") from None
    method = head.method.decode("ascii", "replace")
    client = h11.Connection(h11.CLIENT, max_incomplete_event_size=_MAX_HEAD)
    client.send(h11.Request(method=head.method, target=b"/", headers=[(b"host", b"recorded")]))
    client.send(h11.EndOfMessage())
    try:
        answer, body = _message(client, response, h11.Response)
    except (h11.RemoteProtocolError, BodyError) as exc:
        raise BodyError(f"{where}: the recorded response is not HTTP/1.1: {exc}") from None
    wrapped_request = {
        "method": method,
        "uri": _absolute(head, where),
        "headers": _headers(head.headers),
        "body": sent.decode("utf-8", "replace") if sent else None,
    }
    return wrapped_request, answer.status_code, _headers(answer.headers), body


def _message(conn: h11.Connection, data: bytes, kind: type) -> tuple[Any, bytes]:
    """The head of one message of ``kind`` in ``data`` and its body, its
    transfer coding undone (a body that runs to the end of the data ends
    there, as a response read until the connection closes does)."""
    conn.receive_data(data)
    conn.receive_data(b"")
    head: Any = None
    body = bytearray()
    while True:
        event = conn.next_event()
        if isinstance(event, h11.InformationalResponse):
            continue  # a 100 Continue before the answer
        if isinstance(event, kind):
            head = event
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            break
        else:
            raise BodyError("it ends before its body does")
    if head is None:
        raise BodyError("it has no start line")
    return head, bytes(body)


def _absolute(head: Any, where: str) -> str:
    """The request's URL: ``WriteProxy`` writes it whole on the request line;
    an origin-form target is put under its ``Host``."""
    target = head.target.decode("utf-8", "replace")
    if "://" in target:
        return str(target)
    host = dict(head.headers).get(b"host")
    if host is None:
        raise BodyError(f"{where}: the recorded request names no host")
    return f"https://{host.decode('ascii', 'replace')}{target}"


def _headers(pairs: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in pairs:
        key = name.decode("ascii").lower()
        text = value.decode("latin-1")
        out[key] = f"{out[key]}, {text}" if key in out else text
    return out


# -- the Azure SDK test-proxy ------------------------------------------------------


def is_proxy_recording(data: object) -> bool:
    """A test-proxy recording: ``{"Entries": [...]}`` whose entries name
    their request URI (``Variables`` beside them, or not)."""
    entries = data.get("Entries") if isinstance(data, dict) else None
    return isinstance(entries, list) and all(
        isinstance(e, dict) and "RequestUri" in e for e in entries
    )


def proxy_entries(data: dict[str, Any]) -> list[Wrapped]:
    """Each entry of a test-proxy recording (see the module docs)."""
    out: list[Wrapped] = []
    for n, entry in enumerate(data["Entries"]):
        where = f"entry {n}"
        request_headers = _proxy_headers(entry.get("RequestHeaders"), f"{where} request headers")
        response_headers = _proxy_headers(entry.get("ResponseHeaders"), f"{where} response headers")
        uri, method = entry.get("RequestUri"), entry.get("RequestMethod", "GET")
        if not isinstance(uri, str) or not isinstance(method, str):
            raise BodyError(f"{where} RequestUri or RequestMethod is not text")
        status = entry.get("StatusCode")
        if type(status) is not int:
            raise BodyError(f"{where} StatusCode is not a number")
        sent = _proxy_body(entry.get("RequestBody"), request_headers, f"{where} RequestBody")
        request = {
            "method": method,
            "uri": uri,
            "headers": request_headers,
            "body": sent.decode("utf-8", "replace") if sent is not None else None,
        }
        body = _proxy_body(entry.get("ResponseBody"), response_headers, f"{where} ResponseBody")
        out.append((request, status, response_headers, body or b""))
    return out


def _proxy_headers(raw: object, what: str) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise BodyError(f"{what} are not an object")
    out: dict[str, str] = {}
    for name, value in raw.items():
        values = value if isinstance(value, list) else [value]
        if not all(isinstance(v, str) for v in values):
            raise BodyError(f"{what}: {name!r} is not text or a list of text")
        out[str(name).lower()] = ", ".join(values)
    return out


_TEXT_SUFFIXES = ("json", "xml", "-urlencoded")


def _is_text(content_type: str) -> bool:
    """The test-proxy's own rule for a body kept as text (its
    ``ContentTypeUtilities.TryGetTextEncoding``)."""
    lowered = content_type.lower()
    charset = lowered.partition("; charset=")[2]
    return (
        charset.startswith("utf-8")
        or lowered.startswith(("text/", "application/json", "application/x-www-form-urlencoded"))
        or lowered.endswith(_TEXT_SUFFIXES)
    )


def _proxy_body(value: object, headers: dict[str, str], where: str) -> bytes | None:
    if value is None:
        return None
    if _is_text(headers.get("content-type", "")):
        if isinstance(value, list):
            if not all(isinstance(line, str) for line in value):
                raise BodyError(f"{where} is a list that is not of text")
            return "".join(value).encode("utf-8")
        if isinstance(value, str):
            return value.encode("utf-8")
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    if isinstance(value, list):
        if value:
            raise BodyError(f"{where} of a binary content type is a non-empty list")
        return b""
    if not isinstance(value, str):
        raise BodyError(f"{where} of a binary content type is not base64 text")
    try:
        return base64.b64decode(value, validate=True)
    except binascii.Error as exc:
        raise BodyError(f"{where} is not base64: {exc}") from None


__all__ = [
    "HTTPRR_HEADER",
    "httprr_entries",
    "is_httprr",
    "is_proxy_recording",
    "proxy_entries",
]
