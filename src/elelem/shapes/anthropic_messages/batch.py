"""Anthropic's Message Batches, sans-IO: ``POST /v1/messages/batches``
(``custom_id`` and ``params`` per request), ``GET
/v1/messages/batches/{id}``, and the results as JSONL from the batch's
``results_url`` (on the endpoint's own origin only), each read with the
target's API version and betas."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from elelem.errors import UnsupportedError
from elelem.shapes.batch import (
    as_json,
    batch_record,
    counts,
    created,
    get,
    members,
    optional_text,
    polled,
    raw_lines,
    raw_object,
    results_path,
    segment,
    text,
)
from elelem.vocabulary.json import JSONValue
from elelem.wire import EncodedRequest
from elelem.wire.batch import BatchFlow, BatchRecord, BatchTarget, BatchWire, Item

_STATES = {"in_progress": "running", "canceling": "running", "ended": "ended"}


def _record(target: BatchTarget, data: dict[str, Any], ids: tuple[str, ...]) -> BatchRecord:
    return batch_record(
        target,
        "anthropic",
        text(data, "id"),
        text(data, "processing_status"),
        _STATES,
        ids,
        output=optional_text(data, "results_url"),
        counts=counts(data.get("request_counts")),
        raw=data,
    )


def submit(
    target: BatchTarget, requests: Sequence[tuple[str, EncodedRequest]]
) -> BatchFlow[BatchRecord]:
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
    return (yield from created(target, create, _record, requests, "create the message batch"))


def status(target: BatchTarget, record: BatchRecord) -> BatchFlow[BatchRecord]:
    """The batch object now."""
    path = f"/v1/messages/batches/{segment(record.batch_id)}"
    return (yield from polled(target, path, _record, record, target.headers))


def results(target: BatchTarget, record: BatchRecord) -> BatchFlow[list[Item]]:
    """Each request's message, or its error, from the ``results_url``."""
    if record.output is None:
        raise UnsupportedError(f"batch {record.batch_id} has no results yet ({record.raw_state})")
    path = results_path(target, record.output)
    answer: list[Item] = yield get(path, _items, "read the results", target.headers)
    return answer


def _items(body: bytes) -> list[Item]:
    items = []
    for raw in raw_lines(body):
        custom_id = text(members(raw, "custom_id"), "custom_id")
        result_raw = raw_object(raw.get("result"), f"the result of {custom_id!r}")
        result = members(result_raw, "type", "error")
        kind = result.get("type")
        if kind == "succeeded":
            message = result_raw.get("message")
            if message is None:
                raise ValueError(f"the succeeded result of {custom_id!r} has no message")
            items.append(Item(custom_id, bytes(message)))  # as it came, never re-encoded
        else:
            error = result.get("error")
            items.append(Item(custom_id, error=as_json(error) if error else str(kind)))
    return items


BATCH = BatchWire("anthropic", submit, status, results)
"""Anthropic's batch API."""

__all__ = ["BATCH", "results", "status", "submit"]
