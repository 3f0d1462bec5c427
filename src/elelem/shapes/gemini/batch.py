"""Gemini's batch mode, sans-IO: ``POST
/v1beta/models/{m}:batchGenerateContent`` of inline requests (each keyed by
``metadata.key``), ``GET /v1beta/batches/{id}`` for the operation, whose
finished form holds the inline responses in request order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from elelem.errors import UnsupportedError
from elelem.shapes.batch import (
    as_json,
    batch_record,
    created,
    get,
    json_object,
    polled,
    segment,
    table,
    text,
)
from elelem.vocabulary.json import JSONValue
from elelem.wire import EncodedRequest
from elelem.wire.batch import BatchFlow, BatchRecord, BatchTarget, BatchWire, Item

_STATES = {
    "BATCH_STATE_PENDING": "pending",
    "BATCH_STATE_RUNNING": "running",
    "BATCH_STATE_SUCCEEDED": "ended",
    "BATCH_STATE_FAILED": "failed",
    "BATCH_STATE_CANCELLED": "cancelled",
    "BATCH_STATE_EXPIRED": "expired",
}


def _record(target: BatchTarget, data: dict[str, Any], ids: tuple[str, ...]) -> BatchRecord:
    meta = table(data.get("metadata"), "the batch's metadata")
    raw_state = str(meta.get("state", "BATCH_STATE_SUCCEEDED" if data.get("done") else ""))
    return batch_record(
        target,
        "gemini",
        text(data, "name"),
        raw_state,
        _STATES,
        ids,
        counts=_counts(table(meta.get("batchStats"), "the batch's batchStats")),
        raw={k: v for k, v in data.items() if k != "response"},
    )


def _counts(stats: dict[str, Any]) -> dict[str, int]:
    # Counts come as JSON strings ("2"): ASCII digits only ('²' is a digit
    # to str.isdigit, no number to int); any other value is no count.
    found = {}
    for key, value in stats.items():
        if isinstance(value, int) and not isinstance(value, bool):
            found[key] = value
        elif isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 19:
            found[key] = int(value)
    return found


def submit(
    target: BatchTarget, requests: Sequence[tuple[str, EncodedRequest]]
) -> BatchFlow[BatchRecord]:
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
    return (yield from created(target, create, _record, requests, "create the batch"))


def _path(record: BatchRecord) -> str:
    # Gemini's batch id is a resource name: ``batches/123``.
    return f"/v1beta/{segment(record.batch_id, safe='/')}"


def status(target: BatchTarget, record: BatchRecord) -> BatchFlow[BatchRecord]:
    """The batch operation now."""
    return (yield from polled(target, _path(record), _record, record))


def _inlined(data: dict[str, Any]) -> list[dict[str, Any]]:
    # The output is the operation's response, or the batch's own output.
    for holder in (
        data.get("response"),
        table(data.get("metadata"), "the batch's metadata").get("output"),
    ):
        if isinstance(holder, dict) and isinstance(holder.get("inlinedResponses"), dict):
            found = holder["inlinedResponses"].get("inlinedResponses")
            if isinstance(found, list):
                return found
    raise ValueError("no inlinedResponses in the finished batch")


def results(target: BatchTarget, record: BatchRecord) -> BatchFlow[list[Item]]:
    """Each request's response or error, from the finished batch (in request order)."""
    answer: list[Item] = yield get(
        _path(record),
        lambda body: _items(json_object(body), record.custom_ids),
        "read the batch results",
    )
    return answer


def _items(data: dict[str, Any], custom_ids: tuple[str, ...]) -> list[Item]:
    items = []
    for position, entry in enumerate(_inlined(data)):
        entry = table(entry, f"inlined response {position}")
        key = table(entry.get("metadata"), f"the metadata of response {position}").get("key")
        if key is None:
            # Unkeyed: the request in its place, else one the batch never had
            # (named by its place, so the caller can say so).
            key = custom_ids[position] if position < len(custom_ids) else f"#{position + 1}"
        if not isinstance(key, str):
            raise ValueError(f"the key of response {position} is a {type(key).__name__}, not text")
        if "response" in entry:
            items.append(Item(key, msgspec.json.encode(entry["response"])))
        elif "error" in entry:
            items.append(Item(key, error=as_json(entry["error"])))
        else:
            items.append(Item(key, error=f"neither a response nor an error: {as_json(entry)}"))
    return items


BATCH = BatchWire("gemini", submit, status, results)
"""Gemini's batch API."""

__all__ = ["BATCH", "results", "status", "submit"]
