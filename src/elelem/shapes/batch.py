"""What the wires share about batches: reading the answers (JSON objects and
JSONL lines, a field missing or of the wrong type a ``ValueError`` naming
it, which the carrying call reports as a malformed answer), ids quoted into
request paths, a provider-given results URL kept to the endpoint's origin,
and the steps every flow takes (a ``GET``, the create call)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlsplit

import msgspec

from elelem.errors import MalformedStreamError
from elelem.vocabulary.json import decode_json
from elelem.wire import EncodedRequest
from elelem.wire.batch import BatchFlow, BatchRecord, BatchStep, BatchTarget

# The answers are read inside a call's parse (a ValueError there is a typed
# MalformedStreamError): a field missing or of the wrong type is named, never
# a KeyError or AttributeError out of the flow.


def json_object(body: bytes) -> dict[str, Any]:
    """``body`` as a JSON object."""
    data = decode_json(body)
    if not isinstance(data, dict):
        raise ValueError("the answer is not a JSON object")
    return data


_BLANK = re.compile(rb"\s*")

RawObject = dict[str, msgspec.Raw]
"""A JSON object whose members are kept as their raw JSON, undecoded."""


def raw_lines(body: bytes) -> Iterator[RawObject]:
    """Each non-blank line of a JSONL ``body`` as a JSON object whose
    members are left raw: a results file of hundreds of megabytes is not
    split into copies of its lines, nor its answers decoded to be encoded
    again (a raw member is a view of ``body``)."""
    view, start, size = memoryview(body), 0, len(body)
    while start < size:
        end = body.find(b"\n", start)
        end = size if end < 0 else end
        if not _BLANK.fullmatch(body, start, end):
            yield raw_object(view[start:end], "the answer")
        start = end + 1


def raw_object(raw: msgspec.Raw | memoryview | bytes | None, what: str) -> RawObject:
    """``raw`` JSON as an object of raw members ({} for None or null)."""
    if raw is None:
        return {}
    try:
        found: RawObject = decode_json(raw, dict[str, msgspec.Raw])  # type: ignore[arg-type]
    except msgspec.ValidationError:
        value = decode_json(raw)  # type: ignore[arg-type]
        if value is None:
            return {}
        raise ValueError(f"{what} is a {type(value).__name__}, not an object") from None
    return found


def members(raw: RawObject, *keys: str) -> dict[str, Any]:
    """The ``keys`` of ``raw`` that it has, decoded (the others stay raw)."""
    return {key: decode_json(raw[key]) for key in keys if key in raw}


def table(value: Any, what: str) -> dict[str, Any]:
    """``value`` when it is an object ({} for None)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{what} is a {type(value).__name__}, not an object")
    return value


def text(data: dict[str, Any], key: str) -> str:
    """The string at ``key``."""
    value = data.get(key)
    if not isinstance(value, str):
        raise ValueError(f"the answer has no string {key!r}")
    return value


def optional_text(data: dict[str, Any], key: str) -> str | None:
    """The string at ``key``, or None when there is none."""
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"the answer's {key!r} is a {type(value).__name__}, not a string")
    return value


def segment(value: str, safe: str = "") -> str:
    """An id the provider gave, as a part of a request path: quoted, so a
    ``#``, ``?`` or ``/`` in it cannot move the request elsewhere; one
    that is not text (a lone surrogate) is malformed."""
    try:
        return quote(value, safe=safe)
    except UnicodeEncodeError:
        raise MalformedStreamError(
            f"the batch id {value!r} is not text a request path can carry", retryable=False
        ) from None


def _origin(url: str) -> tuple[str, str | None, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, parts.hostname, parts.port or {"http": 80, "https": 443}.get(scheme)


def results_path(target: BatchTarget, url: str) -> str:
    """A provider-given results URL, refused unless it is on the endpoint's
    own origin: the request carries the API key, which must never go to a
    host the user did not configure."""
    if not urlsplit(url).scheme and not url.startswith("//"):
        return url
    given, base = _origin(url), _origin(target.base_url)
    if given != base:
        raise MalformedStreamError(
            f"the batch's results URL is on {given[0]}://{given[1]}:{given[2]}, not on the"
            f" endpoint's {base[0]}://{base[1]}:{base[2]}: not followed (the request would"
            " carry the API key)",
            retryable=False,
        )
    return url


def batch_record(
    target: BatchTarget,
    wire: str,
    batch_id: str,
    raw_state: str,
    states: Mapping[str, str],
    ids: tuple[str, ...],
    **fields: Any,
) -> BatchRecord:
    """The record of batch ``batch_id`` on ``wire``, its provider's
    ``raw_state`` made neutral by ``states`` (an unknown one is
    ``running``: the batch is polled again), with the other ``fields``."""
    return BatchRecord(
        target.provider,
        target.address,
        wire,
        batch_id,
        states.get(raw_state, "running"),
        raw_state,
        ids,
        **fields,
    )


def counts(value: Any) -> dict[str, int]:
    """The integer counts of an object (anything else: none)."""
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(v, int) and not isinstance(v, bool)}


def as_json(value: Any) -> str:
    """``value`` as JSON text (an error kept whole)."""
    return msgspec.json.encode(value).decode()


def get(
    path: str, parse: Callable[[bytes], Any], what: str, headers: Mapping[str, str] | None = None
) -> BatchStep:
    """A ``GET`` of ``path`` whose answer ``parse`` reads."""
    return BatchStep(
        EncodedRequest(path, {}, dict(headers or {}), method="GET", stream=False), parse, what
    )


def created(
    target: BatchTarget,
    create: EncodedRequest,
    record: Callable[[BatchTarget, dict[str, Any], tuple[str, ...]], BatchRecord],
    requests: Sequence[tuple[str, EncodedRequest]],
    what: str,
) -> BatchFlow[BatchRecord]:
    """The call that creates the batch, its answer read by ``record``."""
    ids = tuple(c for c, _ in requests)
    answer: BatchRecord = yield BatchStep(
        create, lambda body: record(target, json_object(body), ids), what
    )
    return answer


def polled(
    target: BatchTarget,
    path: str,
    read: Callable[[BatchTarget, dict[str, Any], tuple[str, ...]], BatchRecord],
    record: BatchRecord,
    headers: Mapping[str, str] | None = None,
) -> BatchFlow[BatchRecord]:
    """The batch ``record`` now: a ``GET`` of ``path`` whose object ``read`` reads."""
    answer: BatchRecord = yield get(
        path,
        lambda body: read(target, json_object(body), record.custom_ids),
        "read the batch",
        headers,
    )
    return answer


__all__ = [
    "RawObject",
    "as_json",
    "batch_record",
    "counts",
    "created",
    "get",
    "json_object",
    "members",
    "optional_text",
    "polled",
    "raw_lines",
    "raw_object",
    "results_path",
    "segment",
    "table",
    "text",
]
