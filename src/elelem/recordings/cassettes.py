"""Load recorded provider traffic, in every corpus format, into one neutral shape.

A recording is a sequence of :class:`Interaction`\\ s, each a request (where
one was recorded) and its response.  Nothing here knows a wire shape: the
loader returns bytes, headers and parsed JSON, and the caller decides what
they mean.  Formats (see the corpus README):

``vcr``
    VCR.py YAML cassettes (``interactions[].request/response``).  A streamed
    body is kept verbatim; a JSON body the recorder re-serialized as
    ``parsed_body`` is re-encoded as compact JSON (``body_exact`` is False).
``when-then``
    Multi-document YAML, one ``when:``/``then:`` document per request.
``chunks``
    One SSE ``data:`` payload (JSON) per line, event names dropped.  A line
    whose ``type`` is ``message_start`` or ``response.created`` begins a new
    response; each response becomes an SSE body of ``data:`` frames.
``sse``
    A raw SSE response body.
``json``
    A raw non-streaming JSON response body.
``ndjson``
    A raw newline-delimited JSON body (one payload per line, kept verbatim).
``eventstream``
    A raw AWS event-stream body (binary messages, told by their prelude CRC).
``ruby-vcr``
    Ruby VCR and R vcr cassettes (``http_interactions``; Ruby's ``!binary``
    tag, ``base64_string`` bodies).
``json-wrapper``
    JSON ``{status, headers, body}`` objects (one, or a list), with an
    optional ``request``.
``har``
    HAR files (``log.entries[]``), as browsers and proxies export them
    (Polly.js' JSON arrays of base64 chunks included).
``nock``
    nock recordings: a JSON array of ``{scope, method, path, status,
    response, rawHeaders}``.
``pairs``
    ``{request, response}`` JSON objects (one, or a list), as dd-trace keeps them.
``httprr``
    Go's ``httprr`` traces: raw HTTP/1.1 requests and responses after an
    ``httprr trace v1`` line (:mod:`elelem.recordings.traces`).
``test-proxy``
    The Azure SDK test-proxy's ``{"Entries": [...], "Variables": {}}``.

``vcr`` is also go-vcr's YAML (``url``, ``code``, a plain ``body``), vcrpy's
old httpx layout (``content``, ``status_code``) and vcrpy's JSON serializer;
``ruby-vcr`` also Betamax and R vcr's JSON.  No YAML tag is ever executed:
``!!python/…`` tags (vcrpy's pickled header types) are read as the data they hold.

Bodies are decoded (gzip, deflate, br) by :func:`~elelem.recordings.containers.decode_body`:
the bytes' magic decides when the recorded header lies (a body kept decoded
under ``content-encoding: gzip``, or kept compressed as ``!!binary``); the
response's headers then describe the decoded body (no ``content-encoding``)
and :attr:`RecordedResponse.encoding` says what the recorded bytes were.

Every problem raises :class:`RecordingError` naming the file and what is
wrong; nothing is silently skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import yaml

from elelem.reading import ReadRefused, read_file
from elelem.recordings.bodies import (
    MAX_DECODED_BYTES,
    SSE_START,
    BodyError,
    DecodeBudget,
    countable,
    decode_body,
    eventstream_content_type,
    expanded_size,
    head,
    is_blank,
    is_eventstream,
)
from elelem.recordings.containers import (
    Wrapped,
    har_entries,
    is_har,
    is_json_wrapper,
    is_nock,
    is_pairs,
    json_wrapped,
    nock_entries,
    pair_body,
    parse_json,
    python_tag,
    request_parts,
    ruby_binary,
    status_code,
)
from elelem.recordings.model import (
    MAX_RECORDING_BYTES,
    Interaction,
    RecordedRequest,
    RecordedResponse,
    Recording,
    RecordingError,
    RecordingFormat,
    SSEFrame,
    unreadable,
)
from elelem.recordings.traces import (
    httprr_entries,
    is_httprr,
    is_proxy_recording,
    proxy_entries,
)
from elelem.transport.framing import SSEDecoder
from elelem.vocabulary.json import JSONValue

RESPONSE_START_TYPES: frozenset[str] = frozenset({"message_start", "response.created"})
"""Payload ``type`` values that begin a new response in a chunk file."""

try:  # the C loader is ~10x faster on the large cassettes
    _BASE_LOADER: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _BASE_LOADER = yaml.SafeLoader


class _YAML_LOADER(_BASE_LOADER):  # type: ignore[misc]
    """The safe loader, plus Ruby's ``!binary`` tag (Ruby VCR cassettes) and
    Python's ``!!python/…`` tags read as plain data, never executed."""


_YAML_LOADER.add_constructor("!binary", ruby_binary)
_YAML_LOADER.add_multi_constructor("tag:yaml.org,2002:python/", python_tag)


# --------------------------------------------------------------------------
# public entry points
# --------------------------------------------------------------------------


def load(
    path: Path | str,
    *,
    max_bytes: int = MAX_RECORDING_BYTES,
    budget: DecodeBudget | None = None,
) -> Recording:
    """Read the recording at ``path``, detecting its format from name and content.

    At most ``max_bytes`` are read: a longer file is a :class:`RecordingError`
    naming the limit, and so is a YAML file whose aliases, expanded, would
    pass it (every body re-encoded from it is then bounded too).  Every
    decoded body (and the file itself, when gzipped) draws on one
    ``budget`` for the whole recording (:data:`MAX_DECODED_BYTES` unless
    given): past it, a :class:`RecordingError` naming the budget.
    """
    p = Path(path)
    budget = budget if budget is not None else DecodeBudget(MAX_DECODED_BYTES)
    try:
        raw = read_file(p, max_bytes)
    except (ReadRefused, OSError) as exc:
        raise unreadable(p, exc, max_bytes) from None
    named = p
    if raw[:2] == b"\x1f\x8b":
        # A gzip-compressed recording (session.har.gz): read what it holds.
        try:
            raw, _ = decode_body(raw, "gzip", budget)
        except BodyError as exc:
            raise RecordingError(p, str(exc)) from None
        named = p.with_suffix("") if p.suffix == ".gz" else p
    if is_blank(raw):
        raise RecordingError(p, "file is empty")
    fmt: str = "JSON"
    try:
        fmt, parsed = _detected(named, raw)
        if fmt == "chunks":
            interactions = _load_chunks(p, raw)
        elif fmt in ("sse", "json", "ndjson", "eventstream"):
            interactions = (_raw_interaction(fmt, raw),)
        elif fmt == "httprr":
            interactions = _load_wrapped(p, httprr_entries(raw), budget)
        elif fmt in ("json-wrapper", "har", "nock", "test-proxy"):
            data = parsed if parsed is not _UNPARSED else json.loads(raw)
            if fmt == "har":
                wrapped = har_entries(data)
            elif fmt == "test-proxy":
                wrapped = proxy_entries(data)
            elif fmt == "nock":
                wrapped = nock_entries(data)
            else:
                wrapped = json_wrapped(data, p)
            interactions = _load_wrapped(p, wrapped, budget)
        elif fmt in ("vcr", "ruby-vcr", "pairs") and head(raw, 1) in (b"{", b"["):
            # vcrpy's JSON serializer, Betamax and R vcr's JSON, dd-trace's pairs.
            data = parsed if parsed is not _UNPARSED else json.loads(raw)
            if fmt == "pairs":
                interactions = _load_cassette(
                    p, data if isinstance(data, list) else [data], "pairs", budget
                )
            else:
                key = "interactions" if fmt == "vcr" else "http_interactions"
                interactions = _load_cassette(p, data[key], key, budget)
        else:
            docs = _yaml_documents(p, raw)
            expanded_size(docs, max_bytes)
            if _ruby_vcr(docs):
                fmt = "ruby-vcr"
                interactions = _load_cassette(
                    p, docs[0]["http_interactions"], "http_interactions", budget
                )
            elif fmt == "vcr":
                interactions = _load_vcr(p, docs, budget)
            else:
                interactions = _load_when_then(p, docs, budget)
    except BodyError as exc:
        raise RecordingError(p, str(exc)) from None
    except RecursionError:
        raise RecordingError(p, f"this {fmt} recording is nested too deeply to read") from None
    if not interactions:
        raise RecordingError(p, f"no interactions in this {fmt} recording")
    return Recording(path=p, format=fmt, interactions=interactions)  # type: ignore[arg-type]


def detect_format(path: Path, raw: bytes) -> RecordingFormat:
    """Which corpus format ``raw`` (the bytes of ``path``) is in."""
    return _detected(path, raw)[0]


_UNPARSED: Any = object()


def _detected(path: Path, raw: bytes) -> tuple[RecordingFormat, Any]:
    """:func:`detect_format`, and the JSON document ``raw`` parsed to tell it
    (:data:`_UNPARSED` when the format was told without parsing): a 45 MB
    HAR is parsed once, not once to detect and again to load."""
    name = path.name
    if is_eventstream(raw):
        return "eventstream", _UNPARSED
    if is_httprr(raw):  # whatever the file is called (a .json that is a trace)
        return "httprr", _UNPARSED
    start = head(raw, 200)
    if name.endswith(".chunks.txt"):
        return "chunks", _UNPARSED
    if name.endswith((".yaml", ".yml")) and start.startswith((b"{", b"[")):
        # A .yaml that is JSON (YAML's flow style is JSON's superset): read
        # as JSON where it is, so a JSON container is told by its keys.
        found = _json_container(raw)
        if found is not None and found[0] != "json":
            return found
    if name.endswith((".yaml", ".yml")):
        cassette = b"\ninteractions:" in b"\n" + start or b"\nhttp_interactions:" in b"\n" + start
        return "vcr" if cassette or not start.startswith(
            (b"when:", b"---")
        ) else "when-then", _UNPARSED
    if start.startswith(SSE_START):
        return "sse", _UNPARSED
    if start.startswith((b"{", b"[")):
        # One JSON document is a body (or a container of bodies); several
        # lines of JSON objects are a chunk dump or an NDJSON body.
        found = _json_container(raw)
        if found is not None:
            return found
        lines = [ln for ln in raw.splitlines() if ln.strip()]
        if len(lines) > 1 and all(ln.lstrip().startswith(b"{") for ln in lines):
            return "chunks" if _chunk_dump(lines) else "ndjson", _UNPARSED
        raise RecordingError(path, "truncated or malformed JSON body")
    if start.startswith((b"interactions:", b"when:", b"http_interactions:")):
        return "when-then" if start.startswith(b"when:") else "vcr", _UNPARSED
    raise RecordingError(
        path,
        "unknown recording format (not a VCR, Ruby VCR or when-then YAML cassette, a HAR "
        "file, an httprr trace, a test-proxy recording, a JSON body or wrapper, SSE, "
        "NDJSON, an AWS event stream or chunks)",
    )


def _json_container(raw: bytes) -> tuple[RecordingFormat, Any] | None:
    """The format of ``raw`` as one JSON document, and the document; None
    when it is not one."""
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if is_har(data):
        return "har", data
    if isinstance(data, dict) and isinstance(data.get("interactions"), list):
        return "vcr", data
    if isinstance(data, dict) and isinstance(data.get("http_interactions"), list):
        return "ruby-vcr", data
    if is_nock(data):
        return "nock", data
    if is_pairs(data):
        return "pairs", data
    if is_proxy_recording(data):
        return "test-proxy", data
    return "json-wrapper" if is_json_wrapper(data) else "json", data


def _chunk_dump(lines: list[bytes]) -> bool:
    """True when lines of JSON are SSE payloads of several responses dumped
    one per line (a new one begins at each response-start type)."""
    for line in lines:
        try:
            payload = json.loads(line)
        except ValueError:
            return True  # reported, with its line number, by the chunk loader
        if isinstance(payload, dict) and payload.get("type") in RESPONSE_START_TYPES:
            return True
    return False


def sse_frames(body: bytes | str) -> list[SSEFrame]:
    """Split an SSE body into frames with the transport's own WHATWG decoder
    (:class:`~elelem.transport.sse.SSEDecoder`, the one the driver runs).

    ``event:`` names the frame (``""`` when absent), ``data:`` lines join with
    ``"\\n"``, comment lines are skipped, a blank line ends a frame.  A last
    frame not ended by a blank line is incomplete and, as the rules say,
    discarded (a truncated recording then lacks its final event).  Bytes that
    are not UTF-8 raise :class:`~elelem.errors.MalformedStreamError`.
    """
    decoder = SSEDecoder(MAX_RECORDING_BYTES)
    data = body.encode("utf-8") if isinstance(body, str) else body
    events = [*decoder.feed(data), *decoder.close()]
    if decoder.failure is not None:
        raise decoder.failure
    return [SSEFrame(event[0], event[1]) for event in events]


def json_lines(text: bytes | str) -> list[JSONValue]:
    """Parse NDJSON (one JSON value per non-blank line), naming the bad line on error."""
    data = text.decode() if isinstance(text, bytes) else text
    out: list[JSONValue] = []
    for n, line in enumerate(data.splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except ValueError as exc:
                raise ValueError(f"line {n} is not JSON: {exc}") from None
    return out


# --------------------------------------------------------------------------
# formats
# --------------------------------------------------------------------------


def _sse_headers() -> dict[str, str]:
    return {"content-type": "text/event-stream"}


RAW_TYPES: dict[str, str] = {
    "sse": "text/event-stream",
    "json": "application/json",
    "ndjson": "application/x-ndjson",
    "eventstream": eventstream_content_type(),
}
"""The content type a raw body file of each format is served with."""


def _raw_interaction(fmt: str, raw: bytes) -> Interaction:
    response = RecordedResponse(
        status=200, headers={"content-type": RAW_TYPES[fmt]}, body=raw, streamed=fmt != "json"
    )
    return Interaction(index=0, request=None, response=response)


def _response(
    status: int,
    headers: dict[str, str],
    body: bytes,
    budget: DecodeBudget,
    *,
    exact: bool = True,
) -> RecordedResponse:
    """A response with its body decoded (drawing on the recording's
    ``budget``) and its headers saying so."""
    body, encoding = decode_body(body, headers.get("content-encoding", ""), budget)
    if "content-encoding" in headers:
        # The body is now what the encoding (true or claimed) covered.
        headers = {
            k: v for k, v in headers.items() if k not in ("content-encoding", "content-length")
        }
    ctype = headers.get("content-type", "")
    if not ctype and is_eventstream(body):
        headers["content-type"] = ctype = eventstream_content_type()
    return RecordedResponse(
        status=status,
        headers=headers,
        body=body,
        streamed=_streamed(ctype, body),
        body_exact=exact,
        encoding=encoding,
    )


def _load_wrapped(
    path: Path, wrapped: list[Wrapped], budget: DecodeBudget
) -> tuple[Interaction, ...]:
    countable(wrapped)
    out = []
    for i, (req, status, headers, body) in enumerate(wrapped):
        request = None
        if req is not None:
            method, req_path, query = request_parts(req)
            request = RecordedRequest(
                method=method,
                path=req_path,
                query=query,
                uri=req["uri"] or None,
                headers=req["headers"],
                body=req["body"],
                json=parse_json(req["body"]),
            )
        try:
            response = _response(status, headers, body, budget)
        except BodyError as exc:
            raise RecordingError(path, f"interaction {i}: {exc}") from None
        out.append(Interaction(index=i, request=request, response=response))
    return tuple(out)


def _ruby_vcr(docs: list[Any]) -> bool:
    return len(docs) == 1 and isinstance(docs[0], dict) and "http_interactions" in docs[0]


def _load_chunks(path: Path, raw: bytes) -> tuple[Interaction, ...]:
    groups: list[list[bytes]] = []
    for n, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            payload = json.loads(line)
        except ValueError as exc:
            raise RecordingError(path, f"line {n} is not a JSON payload ({exc})") from None
        starts = isinstance(payload, dict) and payload.get("type") in RESPONSE_START_TYPES
        if not groups or (starts and groups[-1]):
            groups.append([])
        groups[-1].append(line.strip())
    countable(groups)
    out = []
    for i, group in enumerate(groups):
        body = b"".join(b"data: " + line + b"\n\n" for line in group)
        response = RecordedResponse(
            status=200, headers=_sse_headers(), body=body, streamed=True, body_exact=False
        )
        out.append(Interaction(index=i, request=None, response=response))
    return tuple(out)


def _yaml_documents(path: Path, raw: bytes) -> list[Any]:
    try:
        return [d for d in yaml.load_all(raw, Loader=_YAML_LOADER) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise RecordingError(path, f"malformed YAML{where}: {problem}") from None


def _need(path: Path, value: object, typ: type, what: str) -> Any:
    if not isinstance(value, typ):
        raise RecordingError(path, f"{what} is missing or not a {typ.__name__}")
    return value


def _streamed(content_type: str, body: bytes) -> bool:
    if "event-stream" in content_type or "ndjson" in content_type or "eventstream" in content_type:
        return True
    return head(body, 6).startswith((b"event:", b"data:"))


def _load_vcr(path: Path, docs: list[Any], budget: DecodeBudget) -> tuple[Interaction, ...]:
    if len(docs) != 1 or not isinstance(docs[0], dict) or "interactions" not in docs[0]:
        raise RecordingError(path, "not a VCR cassette (no top-level 'interactions')")
    return _load_cassette(path, docs[0]["interactions"], "interactions", budget)


def _load_cassette(
    path: Path, raw_items: object, key: str, budget: DecodeBudget
) -> tuple[Interaction, ...]:
    """vcrpy's ``interactions`` and Ruby VCR / R vcr's ``http_interactions``:
    the same request/response pairs, bodies as vcrpy's ``string`` (text or
    ``!!binary``) or ``parsed_body``, Ruby's ``{encoding, string}`` (text or
    ``!binary``), or R's ``base64_string``."""
    items: list[Any] = _need(path, raw_items, list, f"'{key}'")
    out = []
    for i, where, req, resp in _pairs(path, items, "interaction", "request", "response"):
        # vcrpy, Ruby VCR and Betamax say uri; go-vcr and dd-trace say url.
        uri = _need(path, req.get("uri") or req.get("url"), str, f"{where} request uri")
        parts = urlsplit(uri)
        try:
            code = status_code(resp, where)
            sent = pair_body(req, f"{where} request")[0] if req.get("body") is not None else b""
            if "parsed_body" in resp:
                body = json.dumps(resp["parsed_body"], ensure_ascii=False).encode()
                exact = False
            else:
                body, exact = pair_body(resp, f"{where} response")
            headers = _vcr_headers(resp.get("headers"))
            response = _response(code, headers, body, budget, exact=exact)
        except BodyError as exc:
            raise RecordingError(path, f"{where}: {exc}") from None
        body_text = sent.decode("utf-8", "replace") if req.get("body") is not None else None
        parsed = req.get("parsed_body")
        request = RecordedRequest(
            method=str(req.get("method", "GET")).upper(),
            path=parts.path,
            query=parts.query,
            uri=uri,
            headers=_vcr_headers(req.get("headers")),
            body=body_text,
            json=parsed if parsed is not None else parse_json(body_text),
        )
        out.append(Interaction(index=i, request=request, response=response))
    return tuple(out)


def _vcr_headers(raw: object) -> dict[str, str]:
    if isinstance(raw, list):
        # vcrpy's old httpx layout and R vcr keep [[name, value], …].
        raw = {str(h[0]): h[1] for h in raw if isinstance(h, list) and len(h) == 2}
    if not isinstance(raw, dict):
        return {}
    out: dict[str, str] = {}
    for name, value in raw.items():
        values = value if isinstance(value, list) else [value]
        out[str(name).lower()] = ", ".join(str(v) for v in values)
    return out


def _pairs(
    path: Path, items: list[Any], noun: str, asked: str, answered: str
) -> Iterator[tuple[int, str, dict[str, Any], dict[str, Any]]]:
    """Each item of a recording's list as its index, where it is
    (``interaction 3``) and its two objects, the asking and the answering."""
    countable(items)
    for i, item in enumerate(items):
        where = f"{noun} {i}"
        item = _need(path, item, dict, where)
        ask = _need(path, item.get(asked), dict, f"{where} '{asked}'")
        yield i, where, ask, _need(path, item.get(answered), dict, f"{where} '{answered}'")


def _load_when_then(path: Path, docs: list[Any], budget: DecodeBudget) -> tuple[Interaction, ...]:
    out = []
    for i, where, when, then in _pairs(path, docs, "document", "when", "then"):
        req_path = _need(path, when.get("path"), str, f"{where} when.path")
        params = [
            (str(p.get("name")), str(p.get("value")))
            for p in when.get("query_param") or []
            if isinstance(p, dict)
        ]
        body_text = when.get("json_body_str")
        body_json = parse_json(body_text) if isinstance(body_text, str) else None
        if isinstance(body_text, str) and body_text.strip() and body_json is None:
            raise RecordingError(path, f"{where} json_body_str is not JSON")
        request = RecordedRequest(
            method=str(when.get("method", "GET")).upper(),
            path=req_path,
            query=urlencode(params),
            uri=None,
            headers={},
            body=body_text if isinstance(body_text, str) else None,
            json=body_json,
        )
        headers = {
            str(h.get("name")).lower(): str(h.get("value"))
            for h in then.get("header") or []
            if isinstance(h, dict)
        }
        status = _need(path, then.get("status", 200), int, f"{where} then.status")
        text = then.get("body", "")
        body = text.encode() if isinstance(text, str) else b""
        try:
            response = _response(status, headers, body, budget)
        except BodyError as exc:
            raise RecordingError(path, f"{where}: {exc}") from None
        out.append(Interaction(index=i, request=request, response=response))
    return tuple(out)


__all__ = [
    "MAX_RECORDING_BYTES",
    "RAW_TYPES",
    "RESPONSE_START_TYPES",
    "Interaction",
    "RecordedRequest",
    "RecordedResponse",
    "Recording",
    "RecordingError",
    "RecordingFormat",
    "SSEFrame",
    "detect_format",
    "json_lines",
    "load",
    "sse_frames",
]
