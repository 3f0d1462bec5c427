"""The batch APIs of Anthropic, OpenAI and Gemini, as sans-IO flows.

Each provider has the same three flows (see :mod:`elelem.flow`):
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

import msgspec

from elelem import codec
from elelem.errors import UnsupportedError
from elelem.flow import Call, Flow, multipart
from elelem.providers import Target
from elelem.vocabulary import Message, ProviderId
from elelem.vocabulary.json import JSONValue
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
    data = msgspec.json.decode(body)
    if not isinstance(data, dict):
        raise ValueError("the answer is not a JSON object")
    return data


def _lines(body: bytes) -> list[dict[str, Any]]:
    return [_object(line) for line in body.splitlines() if line.strip()]


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
    submit: Callable[[Target, Sequence[tuple[str, EncodedRequest]]], Flow[BatchRecord]]
    status: Callable[[Target, BatchRecord], Flow[BatchRecord]]
    results: Callable[[Target, BatchRecord], Flow[list[Item]]]


def _get(
    target: Target,
    path: str,
    parse: Callable[[bytes], Any],
    what: str,
    headers: Mapping[str, str] | None = None,
) -> Call:
    encoded = EncodedRequest(path, {}, dict(headers or {}), method="GET", stream=False)
    return Call(target.shape, encoded, parse, what)


# -- Anthropic Message Batches ----------------------------------------------------------

_ANTHROPIC_STATES = {"in_progress": "running", "canceling": "running", "ended": "ended"}


def _anthropic_record(target: Target, data: dict[str, Any], ids: tuple[str, ...]) -> BatchRecord:
    raw_state = str(data["processing_status"])
    return BatchRecord(
        target.provider,
        target.address,
        "anthropic",
        str(data["id"]),
        _ANTHROPIC_STATES.get(raw_state, "running"),
        raw_state,
        ids,
        output=data.get("results_url"),
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
) -> Flow[BatchRecord]:
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
    data = yield Call(target.shape, create, _object, "create the message batch")
    return _anthropic_record(target, data, tuple(c for c, _ in requests))


def anthropic_status(target: Target, record: BatchRecord) -> Flow[BatchRecord]:
    """The batch object now."""
    path = f"/v1/messages/batches/{record.batch_id}"
    data = yield _get(target, path, _object, "read the batch", _anthropic_headers(target))
    return _anthropic_record(target, data, record.custom_ids)


def anthropic_results(target: Target, record: BatchRecord) -> Flow[list[Item]]:
    """Each request's message, or its error, from the ``results_url``."""
    if record.output is None:
        raise UnsupportedError(f"batch {record.batch_id} has no results yet ({record.raw_state})")
    lines = yield _get(
        target, record.output, _lines, "read the results", _anthropic_headers(target)
    )
    items = []
    for line in lines:
        result = line.get("result") or {}
        kind = result.get("type")
        if kind == "succeeded":
            items.append(Item(str(line["custom_id"]), codec.dumps(result["message"])))
        else:
            error = result.get("error")
            items.append(Item(str(line["custom_id"]), error=_json(error) if error else str(kind)))
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
    raw_state = str(data["status"])
    return BatchRecord(
        target.provider,
        target.address,
        "openai",
        str(data["id"]),
        _OPENAI_STATES.get(raw_state, "running"),
        raw_state,
        ids,
        output=data.get("output_file_id"),
        errors=data.get("error_file_id"),
        counts=_counts(data.get("request_counts")),
        raw=data,
    )


def openai_submit(
    target: Target, requests: Sequence[tuple[str, EncodedRequest]]
) -> Flow[BatchRecord]:
    """Upload the requests as a JSONL file, then create the batch over it."""
    url = "/v1/responses"
    lines = []
    for custom_id, encoded in requests:
        url = "/v1/" + encoded.path.lstrip("/")
        body = {k: v for k, v in encoded.body.items() if k not in ("stream", "stream_options")}
        lines.append(
            codec.dumps({"custom_id": custom_id, "method": "POST", "url": url, "body": body})
        )
    content, content_type = multipart(
        {"purpose": "batch"}, "file", "batch.jsonl", b"\n".join(lines) + b"\n", "application/jsonl"
    )
    upload = EncodedRequest(
        "/files", {}, {"content-type": content_type}, stream=False, content=content
    )
    uploaded = yield Call(target.shape, upload, _object, "upload the batch file")
    create = EncodedRequest(
        "/batches",
        {"input_file_id": uploaded["id"], "endpoint": url, "completion_window": "24h"},
        stream=False,
    )
    data = yield Call(target.shape, create, _object, "create the batch")
    return _openai_record(target, data, tuple(c for c, _ in requests))


def openai_status(target: Target, record: BatchRecord) -> Flow[BatchRecord]:
    """The batch object now."""
    data = yield _get(target, f"/batches/{record.batch_id}", _object, "read the batch")
    return _openai_record(target, data, record.custom_ids)


def openai_results(target: Target, record: BatchRecord) -> Flow[list[Item]]:
    """Each request's response body or error, from the output and error files."""
    if record.output is None and record.errors is None:
        raise UnsupportedError(f"batch {record.batch_id} has no results yet ({record.raw_state})")
    lines: list[dict[str, Any]] = []
    for file_id in (record.output, record.errors):
        if file_id is not None:
            lines += yield _get(target, f"/files/{file_id}/content", _lines, "read the results")
    items = []
    for line in lines:
        response = line.get("response") or {}
        custom_id = str(line["custom_id"])
        request_id = response.get("request_id")
        if line.get("error") is None and response.get("status_code") == 200:
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
    meta = data.get("metadata") or {}
    raw_state = str(meta.get("state", "BATCH_STATE_SUCCEEDED" if data.get("done") else ""))
    return BatchRecord(
        target.provider,
        target.address,
        "gemini",
        str(data["name"]),
        _GEMINI_STATES.get(raw_state, "running"),
        raw_state,
        ids,
        counts={
            k: int(v)
            for k, v in (meta.get("batchStats") or {}).items()
            if isinstance(v, (int, str)) and str(v).isdigit()
        },
        raw={k: v for k, v in data.items() if k != "response"},
    )


def gemini_submit(
    target: Target, requests: Sequence[tuple[str, EncodedRequest]]
) -> Flow[BatchRecord]:
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
    data = yield Call(target.shape, create, _object, "create the batch")
    return _gemini_record(target, data, tuple(c for c, _ in requests))


def _gemini_path(record: BatchRecord) -> str:
    return f"/v1beta/{record.batch_id}"


def gemini_status(target: Target, record: BatchRecord) -> Flow[BatchRecord]:
    """The batch operation now."""
    data = yield _get(target, _gemini_path(record), _object, "read the batch")
    return _gemini_record(target, data, record.custom_ids)


def _inlined(data: dict[str, Any]) -> list[dict[str, Any]]:
    # The output is the operation's response, or the batch's own output.
    for holder in (data.get("response"), (data.get("metadata") or {}).get("output")):
        if isinstance(holder, dict) and isinstance(holder.get("inlinedResponses"), dict):
            found = holder["inlinedResponses"].get("inlinedResponses")
            if isinstance(found, list):
                return found
    raise ValueError("no inlinedResponses in the finished batch")


def gemini_results(target: Target, record: BatchRecord) -> Flow[list[Item]]:
    """Each request's response or error, from the finished batch (in request order)."""
    data = yield _get(target, _gemini_path(record), _object, "read the batch results")
    items = []
    for position, entry in enumerate(_inlined(data)):
        key = (entry.get("metadata") or {}).get("key")
        if key is None and position < len(record.custom_ids):
            key = record.custom_ids[position]
        if "response" in entry:
            items.append(Item(str(key), codec.dumps(entry["response"])))
        else:
            items.append(Item(str(key), error=_json(entry.get("error"))))
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

BATCH_PROVIDERS = frozenset({"anthropic", "openai", "google"})
"""The providers whose batch API elelem speaks (an OpenAI-compatible server
rarely has one; Chat Completions batches go to OpenAI itself)."""


def wire_of(target: Target) -> BatchWire:
    """The batch API of ``target``, or :class:`~elelem.errors.UnsupportedError`."""
    wire = WIRES.get(target.spec.shape)
    if wire is None or target.provider not in BATCH_PROVIDERS:
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
