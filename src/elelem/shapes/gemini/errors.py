"""The Gemini error classifier: Google error bodies -> typed errors.

Google APIs answer errors with ``{"error": {"code", "message", "status",
"details"}}`` (a list holding that object on some streaming endpoints).
``status`` is the canonical gRPC code name; ``details`` may hold a
``google.rpc.RetryInfo`` (``retryDelay: "57s"``) and a ``google.rpc.ErrorInfo``
whose ``reason`` refines the status (``API_KEY_INVALID`` arrives as a 400).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from elelem.errors import (
    AuthenticationError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    Patch,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    StreamError,
)
from elelem.shapes.classify import ErrorFields, ErrorTable, decode_error_body, text_field

STATUS_TYPES: dict[str, type[StreamError]] = {
    "INVALID_ARGUMENT": InvalidRequestError,
    "FAILED_PRECONDITION": InvalidRequestError,
    "OUT_OF_RANGE": InvalidRequestError,
    "UNAUTHENTICATED": AuthenticationError,
    "PERMISSION_DENIED": PermissionDeniedError,
    "NOT_FOUND": NotFoundError,
    "RESOURCE_EXHAUSTED": RateLimitError,
    "UNAVAILABLE": OverloadedError,
    "INTERNAL": ServerError,
    "UNKNOWN": ServerError,
    "DEADLINE_EXCEEDED": ServerError,
    "ABORTED": ServerError,
}
"""Google ``error.status`` -> the typed error it raises."""

_AUTH_REASONS = frozenset({"API_KEY_INVALID", "API_KEY_EXPIRED", "API_KEY_SERVICE_BLOCKED"})
_CONTEXT = re.compile(
    r"input token count.*exceeds|exceeds the maximum number of tokens|context window", re.I
)
_SIGNATURE = re.compile(r"thought[ _]?signature", re.I)
_SIGNATURE_BAD = re.compile(r"not valid|invalid|corrupt", re.I)
_WHERE = re.compile(r"contents\[(\d+)\]\.parts\[(\d+)\]")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def google_error(data: Any) -> Mapping[str, Any] | None:
    """The ``error`` object of a decoded Google error body (held in a one-item
    list on some streaming endpoints), or None if it holds none."""
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    error = data.get("error") if isinstance(data, Mapping) else None
    return error if isinstance(error, Mapping) else None


def error_object(body: bytes) -> dict[str, Any] | None:
    """The ``error`` object of a Google error body, or None if it holds none."""
    error = google_error(decode_error_body(body))
    return dict(error) if error is not None else None


def retry_delay(error: Mapping[str, Any]) -> float | None:
    """Seconds from a ``google.rpc.RetryInfo`` detail (``"57s"``, ``"0.5s"``)."""
    details = error.get("details")
    for detail in details if isinstance(details, list) else []:
        if not isinstance(detail, Mapping):
            continue
        delay = detail.get("retryDelay")
        if isinstance(delay, str):
            found = _DURATION.match(delay)
            if found:
                return float(found.group(1))
    return None


def _reasons(error: Mapping[str, Any]) -> set[str]:
    details = error.get("details")
    return {
        d["reason"]
        for d in (details if isinstance(details, list) else [])
        if isinstance(d, Mapping) and isinstance(d.get("reason"), str)
    }


def _fields(data: Any, headers: Mapping[str, str]) -> ErrorFields:
    """``{"error": {"code", "message", "status", "details"}}`` (in a one-item
    list on some streaming endpoints): ``status`` is the type, an
    authentication ErrorInfo ``reason`` refines it, ``RetryInfo`` states the delay."""
    del headers
    error = google_error(data) or {}
    code = error.get("code")
    reasons = sorted(_reasons(error) & _AUTH_REASONS)
    return ErrorFields(
        type=text_field(error, "status"),
        message=text_field(error, "message"),
        reason=reasons[0] if reasons else None,
        status=code if isinstance(code, int) and not isinstance(code, bool) else None,
        retry_after=retry_delay(error),
    )


def _stale_signature(fields: ErrorFields) -> Patch | None:
    """A rejected thought signature: strip it from the part the message names."""
    message = fields.message or ""
    if not (_SIGNATURE.search(message) and _SIGNATURE_BAD.search(message)):
        return None
    where = _WHERE.search(message)
    target: dict[str, object] = (
        {"message": int(where.group(1)), "block": int(where.group(2))} if where else {}
    )
    return Patch("strip-signature", target=target, reason=message)


ERRORS = ErrorTable(
    "gemini",
    _fields,
    types=MappingProxyType({**STATUS_TYPES, **dict.fromkeys(_AUTH_REASONS, AuthenticationError)}),
    statuses=MappingProxyType({503: OverloadedError}),
    context=_CONTEXT,
    recover=_stale_signature,
)
"""The Gemini error table: ``error.status`` picks the class where known (an
invalid-key ErrorInfo reason first: ``API_KEY_INVALID`` arrives as a 400),
else the HTTP status (503 overloaded); ``RetryInfo.retryDelay`` is the
retry hint; a rejected thought signature asks for ``strip-signature`` at
``contents[i].parts[j]``."""

classify_error = ERRORS.classify_error
error_from_event = ERRORS.error_from_event


__all__ = [
    "ERRORS",
    "STATUS_TYPES",
    "classify_error",
    "error_from_event",
    "error_object",
    "google_error",
    "retry_delay",
]
