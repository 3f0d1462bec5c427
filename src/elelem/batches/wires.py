"""The batch APIs of Anthropic, OpenAI and Gemini, as sans-IO flows.

Each provider has the same three flows (see :mod:`elelem.transport.one_shot`):
``submit`` (the encoded requests -> a :class:`BatchRecord`), ``status`` (a
record -> the same record with its state now) and ``results`` (a record ->
one :class:`Item` per request: the provider's whole response body, or the
error it gave).  A response body is then read by the shape's own whole-body
parser, exactly as a non-streamed response is.

=============  ==========================================  =================
provider       submit                                      results
=============  ==========================================  =================
Anthropic      ``POST /v1/messages/batches``               ``results_url``
               (``custom_id`` + ``params`` per request)    (JSONL)
OpenAI         ``POST /files`` (JSONL, purpose ``batch``)  ``GET /files/{output_file_id}/content``
               then ``POST /batches``                      (and ``error_file_id``)
Gemini         ``POST /v1beta/models/{m}:batchGenerate…``  inline responses of
               (inline requests, ``metadata.key``)         ``GET /v1beta/batches/{id}``
=============  ==========================================  =================

The neutral state of a batch is one of :data:`STATES`; the provider's own
word is kept in ``raw_state``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

import msgspec

from elelem import codec
from elelem.errors import MalformedStreamError, UnsupportedError
from elelem.providers import Target
from elelem.transport.one_shot import Call, Exchange
from elelem.vocabulary import Message, ProviderId
from elelem.vocabulary.json import JSONValue, decode_json
from elelem.vocabulary.registry import RecordTable
from elelem.wire import EncodedRequest, ModelRequest

STATES = ("pending", "running", "ended", "failed", "cancelled", "expired")
"""The neutral states of a batch: results can be read once it is ``ended``
(and, for what finished in time, ``expired`` or ``cancelled``)."""


class BatchRecord(msgspec.Struct, frozen=True, gc=False):
    """A submitted batch, as the log keeps it (event kind ``batch``): enough
    to ask for its status and results from any process later.

    ``model`` is the model address the requests were made for; ``custom_ids``
    name the requests in order; ``output`` is where the results are (an
    Anthropic ``results_url``, an OpenAI ``output_file_id``; Gemini's come
    with the status) and ``errors`` OpenAI's ``error_file_id``; ``counts``
    the provider's request counts; ``raw`` its last batch object.
    """

    provider: ProviderId
    model: str
    wire: str
    batch_id: str
    state: str
    raw_state: str
    custom_ids: tuple[str, ...]
    output: str | None = None
    errors: str | None = None
    counts: dict[str, int] = msgspec.field(default_factory=dict)
    raw: JSONValue = None

    @property
    def done(self) -> bool:
        """True once the provider will change nothing more."""
        return self.state in ("ended", "failed", "cancelled", "expired")


class Item(msgspec.Struct, frozen=True):
    """One request's outcome: its whole response body, or the provider's error."""

    custom_id: str
    body: bytes | None = None
    error: str | None = None
    request_id: str | None = None


def _object(body: bytes) -> dict[str, Any]:
    data = decode_json(body)
    if not isinstance(data, dict):
        raise ValueError("the answer is not a JSON object")
    return data


def _lines(body: bytes) -> list[dict[str, Any]]:
    return [_object(line) for line in body.splitlines() if line.strip()]


# The answers are read inside a Call's parse (a ValueError there is a typed
# MalformedStreamError): a field missing or of the wrong type is named, never
# a KeyError or AttributeError out of the flow.


def _dict(value: Any, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{what} is a {type(value).__name__}, not an object")
    return value


def _str(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise ValueError(f"the answer has no string {key!r}")
    return value


def _segment(value: str, safe: str = "") -> str:
    """An id the provider gave, as a part of a request path: quoted, so a
    ``#``, ``?`` or ``/`` in it cannot move the request elsewhere; one
    that is not text (a lone surrogate) is malformed."""
    try:
        return quote(value, safe=safe)
    except UnicodeEncodeError:
        raise MalformedStreamError(
            f"the batch id {value!r} is not text a request path can carry", retryable=False
        ) from None


def _opt_str(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"the answer's {key!r} is a {type(value).__name__}, not a string")
    return value


def _origin(url: str) -> tuple[str, str | None, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, parts.hostname, parts.port or {"http": 80, "https": 443}.get(scheme)


def _results_path(target: Target, url: str) -> str:
    """A provider-given results URL, refused unless it is on the endpoint's
    own origin: the request carries the API key, which must never go to a
    host the user did not configure."""
    if not urlsplit(url).scheme and not url.startswith("//"):
        return url
    given, base = _origin(url), _origin(target.endpoint.base_url)
    if given != base:
        raise MalformedStreamError(
            f"the batch's results URL is on {given[0]}://{given[1]}:{given[2]}, not on the"
            f" endpoint's {base[0]}://{base[1]}:{base[2]}: not followed (the request would"
            " carry the API key)",
            retryable=False,
        )
    return url
    if (given.scheme.lower(), given.hostname, given.port) != (
        base.scheme.lower(),
        base.hostname,
        base.port,
    ):
        raise MalformedStreamError(
            f"the batch's results URL is on {given.scheme}://{given.hostname}, not on the"
            f" endpoint's host {base.hostname}: not followed (it would carry the API key)",
            retryable=False,
        )
    return url


def _counts(value: Any) -> dict[str, int]:
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(v, int) and not isinstance(v, bool)}


def _json(value: Any) -> str:
    return codec.dumps(value).decode()


@dataclass(frozen=True)
class BatchWire:
    """One provider's batch API: its three flows."""

    name: str
    submit: Callable[[Target, Sequence[tuple[str, EncodedRequest]]], Exchange[BatchRecord]]
    status: Callable[[Target, BatchRecord], Exchange[BatchRecord]]
    results: Callable[[Target, BatchRecord], Exchange[list[Item]]]


def _get(
    target: Target,
    path: str,
    parse: Callable[[bytes], Any],
    what: str,
    headers: Mapping[str, str] | None = None,
) -> Call:
    encoded = EncodedRequest(path, {}, dict(headers or {}), method="GET", stream=False)
    return Call(target.shape, encoded, parse, what)


def _created(
    target: Target,
    create: EncodedRequest,
    record: Callable[[Target, dict[str, Any], tuple[str, ...]], BatchRecord],
    requests: Sequence[tuple[str, EncodedRequest]],
    what: str,
) -> Exchange[BatchRecord]:
    ids = tuple(c for c, _ in requests)
    answer: BatchRecord = yield Call(
        target.shape, create, lambda body: record(target, _object(body), ids), what
    )
    return answer


# -- Anthropic Message Batches ----------------------------------------------------------

_ANTHROPIC_STATES = {"in_progress": "running", "canceling": "running", "ended": "ended"}


def _anthropic_record(target: Target, data: dict[str, Any], ids: tuple[str, ...]) -> BatchRecord:
    raw_state = _str(data, "processing_status")
    return BatchRecord(
        target.provider,
        target.address,
        "anthropic",
        _str(data, "id"),
        _ANTHROPIC_STATES.get(raw_state, "running"),
        raw_state,
        ids,
        output=_opt_str(data, "results_url"),
        counts=_counts(data.get("request_counts")),
        raw=data,
    )


def _anthropic_headers(target: Target) -> dict[str, str]:
    """The headers the target's shape sends (``anthropic-version``, betas):
    a batch read is made with the same API version as its requests."""
    probe = ModelRequest(model=target.model, messages=(Message.user("."),))
    return target.shape.encode_request(probe, provider=target.provider, stream=False).headers


def anthropic_submit(
    target: Target, requests: Sequence[tuple[str, EncodedRequest]]
) -> Exchange[BatchRecord]:
    """Create a Message Batch of ``requests`` (``custom_id``, encoded request)."""
    entries: list[JSONValue] = []
    headers: dict[str, str] = {}
    path = "/v1/messages"
    for custom_id, encoded in requests:
        params = {k: v for k, v in encoded.body.items() if k != "stream"}
        entries.append({"custom_id": custom_id, "params": params})
        headers.update(encoded.headers)
        path = encoded.path
    create = EncodedRequest(
        path.rstrip("/") + "/batches", {"requests": entries}, headers, stream=False
    )
    return (
        yield from _created(target, create, _anthropic_record, requests, "create the message batch")
    )


def anthropic_status(target: Target, record: BatchRecord) -> Exchange[BatchRecord]:
    """The batch object now."""
    path = f"/v1/messages/batches/{_segment(record.batch_id)}"
    answer: BatchRecord = yield _get(
        target,
        path,
        lambda body: _anthropic_record(target, _object(body), record.custom_ids),
        "read the batch",
        _anthropic_headers(target),
    )
    return answer


def anthropic_results(target: Target, record: BatchRecord) -> Exchange[list[Item]]:
    """Each request's message, or its error, from the ``results_url``."""
    if record.output is None:
        raise UnsupportedError(f"batch {record.batch_id} has no results yet ({record.raw_state})")
    path = _results_path(target, record.output)
    answer: list[Item] = yield _get(
        target, path, _anthropic_items, "read the results", _anthropic_headers(target)
    )
    return answer


def _anthropic_items(body: bytes) -> list[Item]:
    items = []
    for line in _lines(body):
        custom_id = _str(line, "custom_id")
        result = _dict(line.get("result"), f"the result of {custom_id!r}")
        kind = result.get("type")
        if kind == "succeeded":
            if "message" not in result:
                raise ValueError(f"the succeeded result of {custom_id!r} has no message")
            items.append(Item(custom_id, codec.dumps(result["message"])))
        else:
            error = result.get("error")
            items.append(Item(custom_id, error=_json(error) if error else str(kind)))
    return items


# -- OpenAI Batch -----------------------------------------------------------------

_OPENAI_STATES = {
    "validating": "pending",
    "in_progress": "running",
    "finalizing": "running",
    "cancelling": "running",
    "completed": "ended",
    "failed": "failed",
    "expired": "expired",
    "cancelled": "cancelled",
}


def _openai_record(target: Target, data: dict[str, Any], ids: tuple[str, ...]) -> BatchRecord:
    raw_state = _str(data, "status")
    return BatchRecord(
        target.provider,
        target.address,
        "openai",
        _str(data, "id"),
        _OPENAI_STATES.get(raw_state, "running"),
        raw_state,
        ids,
        output=_opt_str(data, "output_file_id"),
        errors=_opt_str(data, "error_file_id"),
        counts=_counts(data.get("request_counts")),
        raw=data,
    )


def openai_submit(
    target: Target, requests: Sequence[tuple[str, EncodedRequest]]
) -> Exchange[BatchRecord]:
    """Upload the requests as a JSONL file, then create the batch over it."""
    url = "/v1/responses"
    lines = []
    for custom_id, encoded in requests:
        url = "/v1/" + encoded.path.lstrip("/")
        body = {k: v for k, v in encoded.body.items() if k not in ("stream", "stream_options")}
        lines.append(
            codec.dumps({"custom_id": custom_id, "method": "POST", "url": url, "body": body})
        )
    # Loaded here, not with the module: loading the client loads no shape
    # code (tests/test_layers.py).
    from elelem.shapes.multipart import multipart

    content, content_type = multipart(
        {"purpose": "batch"}, "file", "batch.jsonl", b"\n".join(lines) + b"\n", "application/jsonl"
    )
    upload = EncodedRequest(
        "/files", {}, {"content-type": content_type}, stream=False, content=content
    )
    file_id = yield Call(
        target.shape, upload, lambda body: _str(_object(body), "id"), "upload the batch file"
    )
    create = EncodedRequest(
        "/batches",
        {"input_file_id": file_id, "endpoint": url, "completion_window": "24h"},
        stream=False,
    )
    return (yield from _created(target, create, _openai_record, requests, "create the batch"))


def openai_status(target: Target, record: BatchRecord) -> Exchange[BatchRecord]:
    """The batch object now."""
    answer: BatchRecord = yield _get(
        target,
        f"/batches/{_segment(record.batch_id)}",
        lambda body: _openai_record(target, _object(body), record.custom_ids),
        "read the batch",
    )
    return answer


def openai_results(target: Target, record: BatchRecord) -> Exchange[list[Item]]:
    """Each request's response body or error, from the output and error files."""
    if record.output is None and record.errors is None:
        raise UnsupportedError(f"batch {record.batch_id} has no results yet ({record.raw_state})")
    items: list[Item] = []
    for file_id in (record.output, record.errors):
        if file_id is not None:
            path = f"/files/{_segment(file_id)}/content"
            items += yield _get(target, path, _openai_items, "read the results")
    return items


def _openai_items(body: bytes) -> list[Item]:
    items = []
    for line in _lines(body):
        custom_id = _str(line, "custom_id")
        response = _dict(line.get("response"), f"the response of {custom_id!r}")
        request_id = _opt_str(response, "request_id")
        if line.get("error") is None and response.get("status_code") == 200:
            if "body" not in response:
                raise ValueError(f"the response of {custom_id!r} has no body")
            items.append(Item(custom_id, codec.dumps(response["body"]), request_id=request_id))
        else:
            error = line.get("error") or response.get("body")
            items.append(Item(custom_id, error=_json(error), request_id=request_id))
    return items


# -- Gemini batch mode --------------------------------------------------------------

_GEMINI_STATES = {
    "BATCH_STATE_PENDING": "pending",
    "BATCH_STATE_RUNNING": "running",
    "BATCH_STATE_SUCCEEDED": "ended",
    "BATCH_STATE_FAILED": "failed",
    "BATCH_STATE_CANCELLED": "cancelled",
    "BATCH_STATE_EXPIRED": "expired",
}


def _gemini_record(target: Target, data: dict[str, Any], ids: tuple[str, ...]) -> BatchRecord:
    meta = _dict(data.get("metadata"), "the batch's metadata")
    raw_state = str(meta.get("state", "BATCH_STATE_SUCCEEDED" if data.get("done") else ""))
    return BatchRecord(
        target.provider,
        target.address,
        "gemini",
        _str(data, "name"),
        _GEMINI_STATES.get(raw_state, "running"),
        raw_state,
        ids,
        counts=_gemini_counts(_dict(meta.get("batchStats"), "the batch's batchStats")),
        raw={k: v for k, v in data.items() if k != "response"},
    )


def _gemini_counts(stats: dict[str, Any]) -> dict[str, int]:
    # Counts come as JSON strings ("2"): ASCII digits only ('²' is a digit
    # to str.isdigit, no number to int); any other value is no count.
    counts = {}
    for key, value in stats.items():
        if isinstance(value, int) and not isinstance(value, bool):
            counts[key] = value
        elif isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 19:
            counts[key] = int(value)
    return counts


def gemini_submit(
    target: Target, requests: Sequence[tuple[str, EncodedRequest]]
) -> Exchange[BatchRecord]:
    """Create a batch of inline ``generateContent`` requests."""
    entries: list[JSONValue] = []
    path = ""
    for custom_id, encoded in requests:
        path = encoded.path.partition("?")[0]
        entries.append({"request": encoded.body, "metadata": {"key": custom_id}})
    base, colon, _method = path.rpartition(":")
    if not colon:
        raise UnsupportedError(f"a Gemini request path without a method: {path}")
    body: dict[str, JSONValue] = {
        "batch": {
            "displayName": f"elelem batch of {len(entries)}",
            "inputConfig": {"requests": {"requests": entries}},
        }
    }
    create = EncodedRequest(f"{base}:batchGenerateContent", body, stream=False)
    return (yield from _created(target, create, _gemini_record, requests, "create the batch"))


def _gemini_path(record: BatchRecord) -> str:
    # Gemini's batch id is a resource name: ``batches/123``.
    return f"/v1beta/{_segment(record.batch_id, safe='/')}"


def gemini_status(target: Target, record: BatchRecord) -> Exchange[BatchRecord]:
    """The batch operation now."""
    answer: BatchRecord = yield _get(
        target,
        _gemini_path(record),
        lambda body: _gemini_record(target, _object(body), record.custom_ids),
        "read the batch",
    )
    return answer


def _inlined(data: dict[str, Any]) -> list[dict[str, Any]]:
    # The output is the operation's response, or the batch's own output.
    for holder in (
        data.get("response"),
        _dict(data.get("metadata"), "the batch's metadata").get("output"),
    ):
        if isinstance(holder, dict) and isinstance(holder.get("inlinedResponses"), dict):
            found = holder["inlinedResponses"].get("inlinedResponses")
            if isinstance(found, list):
                return found
    raise ValueError("no inlinedResponses in the finished batch")


def gemini_results(target: Target, record: BatchRecord) -> Exchange[list[Item]]:
    """Each request's response or error, from the finished batch (in request order)."""
    answer: list[Item] = yield _get(
        target,
        _gemini_path(record),
        lambda body: _gemini_items(_object(body), record.custom_ids),
        "read the batch results",
    )
    return answer


def _gemini_items(data: dict[str, Any], custom_ids: tuple[str, ...]) -> list[Item]:
    items = []
    for position, entry in enumerate(_inlined(data)):
        entry = _dict(entry, f"inlined response {position}")
        key = _dict(entry.get("metadata"), f"the metadata of response {position}").get("key")
        if key is None:
            # Unkeyed: the request in its place, else one the batch never had
            # (named by its place, so the caller can say so).
            key = custom_ids[position] if position < len(custom_ids) else f"#{position + 1}"
        if not isinstance(key, str):
            raise ValueError(f"the key of response {position} is a {type(key).__name__}, not text")
        if "response" in entry:
            items.append(Item(key, codec.dumps(entry["response"])))
        elif "error" in entry:
            items.append(Item(key, error=_json(entry["error"])))
        else:
            items.append(Item(key, error=f"neither a response nor an error: {_json(entry)}"))
    return items


WIRES: dict[str, BatchWire] = {
    "anthropic_messages": BatchWire(
        "anthropic", anthropic_submit, anthropic_status, anthropic_results
    ),
    "openai_responses": BatchWire("openai", openai_submit, openai_status, openai_results),
    "openai_chat": BatchWire("openai", openai_submit, openai_status, openai_results),
    "gemini": BatchWire("gemini", gemini_submit, gemini_status, gemini_results),
}
"""The batch API of each chat shape that has one."""

BATCH_PROVIDERS: Mapping[str, str] = RecordTable(lambda r: r.kinds.get("batch"))
"""The providers whose batch API elelem speaks (each record's
``kinds["batch"]``; an OpenAI-compatible server rarely has one, and Chat
Completions batches go to OpenAI itself)."""


def wire_of(target: Target) -> BatchWire:
    """The batch API of ``target``, or :class:`~elelem.errors.UnsupportedError`."""
    wire = WIRES.get(target.spec.shape)
    if wire is None or BATCH_PROVIDERS.get(target.provider) != wire.name:
        raise UnsupportedError(f"provider {target.provider} has no batch API elelem speaks")
    return wire


__all__ = [
    "BATCH_PROVIDERS",
    "STATES",
    "WIRES",
    "BatchRecord",
    "BatchWire",
    "Item",
    "wire_of",
]
