"""OpenAI's Batch API, sans-IO: the requests uploaded as a JSONL file
(``POST /files``, purpose ``batch``), then ``POST /batches`` over it;
``GET /batches/{id}``; the results from ``GET /files/{output_file_id}/content``
and the failures from its ``error_file_id``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from elelem.errors import UnsupportedError
from elelem.shapes.batch import (
    as_json,
    batch_record,
    counts,
    created,
    get,
    json_object,
    members,
    optional_text,
    polled,
    raw_lines,
    raw_object,
    segment,
    text,
)
from elelem.shapes.multipart import multipart
from elelem.wire import EncodedRequest
from elelem.wire.batch import BatchFlow, BatchRecord, BatchStep, BatchTarget, BatchWire, Item

_STATES = {
    "validating": "pending",
    "in_progress": "running",
    "finalizing": "running",
    "cancelling": "running",
    "completed": "ended",
    "failed": "failed",
    "expired": "expired",
    "cancelled": "cancelled",
}


def _record(target: BatchTarget, data: dict[str, Any], ids: tuple[str, ...]) -> BatchRecord:
    return batch_record(
        target,
        "openai",
        text(data, "id"),
        text(data, "status"),
        _STATES,
        ids,
        output=optional_text(data, "output_file_id"),
        errors=optional_text(data, "error_file_id"),
        counts=counts(data.get("request_counts")),
        raw=data,
    )


def submit(
    target: BatchTarget, requests: Sequence[tuple[str, EncodedRequest]]
) -> BatchFlow[BatchRecord]:
    """Upload the requests as a JSONL file, then create the batch over it."""
    url = "/v1/responses"
    lines = []
    for custom_id, encoded in requests:
        url = "/v1/" + encoded.path.lstrip("/")
        body = {k: v for k, v in encoded.body.items() if k not in ("stream", "stream_options")}
        lines.append(
            msgspec.json.encode(
                {"custom_id": custom_id, "method": "POST", "url": url, "body": body}
            )
        )
    content, content_type = multipart(
        {"purpose": "batch"}, "file", "batch.jsonl", b"\n".join(lines) + b"\n", "application/jsonl"
    )
    upload = EncodedRequest(
        "/files", {}, {"content-type": content_type}, stream=False, content=content
    )
    file_id = yield BatchStep(
        upload, lambda body: text(json_object(body), "id"), "upload the batch file"
    )
    create = EncodedRequest(
        "/batches",
        {"input_file_id": file_id, "endpoint": url, "completion_window": "24h"},
        stream=False,
    )
    return (yield from created(target, create, _record, requests, "create the batch"))


def status(target: BatchTarget, record: BatchRecord) -> BatchFlow[BatchRecord]:
    """The batch object now."""
    return (yield from polled(target, f"/batches/{segment(record.batch_id)}", _record, record))


def results(target: BatchTarget, record: BatchRecord) -> BatchFlow[list[Item]]:
    """Each request's response body or error, from the output and error files."""
    if record.output is None and record.errors is None:
        raise UnsupportedError(f"batch {record.batch_id} has no results yet ({record.raw_state})")
    items: list[Item] = []
    for file_id in (record.output, record.errors):
        if file_id is not None:
            items += yield get(f"/files/{segment(file_id)}/content", _items, "read the results")
    return items


# A batch is made for one endpoint (``/v1/responses``, ``/v1/chat/completions``);
# each result body says which by its ``object``, read by that endpoint's shape.
_BODY_SHAPES = {"response": "openai_responses", "chat.completion": "openai_chat"}


class _Object(msgspec.Struct):
    object: Any = None


def _shape_of(body: msgspec.Raw) -> str | None:
    try:
        kind = msgspec.json.decode(body, type=_Object).object
    except msgspec.ValidationError:
        return None  # not an object: its parse says what is wrong
    return _BODY_SHAPES.get(kind) if isinstance(kind, str) else None


def _items(body: bytes) -> list[Item]:
    items = []
    for raw in raw_lines(body):
        line = members(raw, "custom_id", "error")
        custom_id = text(line, "custom_id")
        response_raw = raw_object(raw.get("response"), f"the response of {custom_id!r}")
        response = members(response_raw, "status_code", "request_id")
        request_id = optional_text(response, "request_id")
        if line.get("error") is None and response.get("status_code") == 200:
            answer = response_raw.get("body")
            if answer is None:
                raise ValueError(f"the response of {custom_id!r} has no body")
            # The body as it came (a view of the file, copied once): never
            # decoded here to be encoded again for the shape's parser.
            items.append(
                Item(custom_id, bytes(answer), request_id=request_id, shape=_shape_of(answer))
            )
        else:
            error = line.get("error") or members(response_raw, "body").get("body")
            items.append(Item(custom_id, error=as_json(error), request_id=request_id))
    return items


BATCH = BatchWire("openai", submit, status, results)
"""OpenAI's batch API."""

__all__ = ["BATCH", "results", "status", "submit"]
