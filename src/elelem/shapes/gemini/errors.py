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
from typing import Any

import msgspec

from elelem.errors import (
    AuthenticationError,
    ContextWindowError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    Patch,
    PermissionDeniedError,
    ProviderStreamError,
    RateLimitError,
    RecoverableError,
    ServerError,
    StreamError,
)
from elelem.shapes.common import body_excerpt, error_class_for_status, retry_after

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

_OVERRIDES: dict[int, type[StreamError]] = {503: OverloadedError}
"""Statuses Google gives its own meaning; the rest as in ``common.STATUS_ERRORS``."""

_AUTH_REASONS = frozenset({"API_KEY_INVALID", "API_KEY_EXPIRED", "API_KEY_SERVICE_BLOCKED"})
_CONTEXT = re.compile(
    r"input token count.*exceeds|exceeds the maximum number of tokens|context window", re.I
)
_SIGNATURE = re.compile(r"thought[ _]?signature", re.I)
_SIGNATURE_BAD = re.compile(r"not valid|invalid|corrupt", re.I)
_WHERE = re.compile(r"contents\[(\d+)\]\.parts\[(\d+)\]")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def error_object(body: bytes) -> dict[str, Any] | None:
    """The ``error`` object of a Google error body, or None if it holds none."""
    try:
        data: Any = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return None
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        return dict(data["error"])
    return None


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


def classify_error(status: int, headers: Mapping[str, str], body: bytes) -> StreamError:
    """Turn a Gemini HTTP error response into a typed error.

    ``error.status`` picks the class where known, else the HTTP status does
    (other 5xx: server).  ``RetryInfo.retryDelay`` (else the retry headers,
    see :func:`elelem.shapes.common.retry_after`) becomes ``retry_after``.  An invalid API key (a 400 whose ErrorInfo reason
    is ``API_KEY_INVALID``) is an authentication error; a prompt over the
    context window a :class:`ContextWindowError`; a rejected thought
    signature a :class:`RecoverableError` asking to strip it.
    """
    error = error_object(body) or {}
    gstatus = error.get("status") if isinstance(error.get("status"), str) else None
    message = error.get("message") if isinstance(error.get("message"), str) else None
    cls = STATUS_TYPES.get(gstatus or "") or error_class_for_status(status, _OVERRIDES)
    if _reasons(error) & _AUTH_REASONS:
        cls = AuthenticationError
    text = message or body_excerpt(body)
    summary = f"gemini {status} {gstatus or 'error'}: {text}".rstrip(": ")
    delay = retry_delay(error)
    common: dict[str, Any] = {
        "status": status,
        "body": body,
        "provider_type": gstatus,
        "provider_message": message,
        "retry_after": delay if delay is not None else retry_after(headers),
    }
    if message is not None and cls is InvalidRequestError:
        if _SIGNATURE.search(message) and _SIGNATURE_BAD.search(message):
            where = _WHERE.search(message)
            target: dict[str, object] = (
                {"message": int(where.group(1)), "block": int(where.group(2))} if where else {}
            )
            patch = Patch("strip-signature", target=target, reason=message)
            return RecoverableError(summary, patches=[patch], **common)
        if _CONTEXT.search(message):
            cls = ContextWindowError
    return cls(summary, **common)


def error_from_chunk(data: Mapping[str, Any]) -> StreamError:
    """The typed error of an ``{"error": …}`` object sent inside a 200 stream."""
    error = data.get("error")
    error = error if isinstance(error, Mapping) else {}
    gstatus = error.get("status") if isinstance(error.get("status"), str) else None
    message = error.get("message") if isinstance(error.get("message"), str) else None
    code = error.get("code")
    cls = STATUS_TYPES.get(gstatus or "", ProviderStreamError)
    delay = retry_delay(error)
    return cls(
        f"gemini stream error {gstatus or code or 'unknown'}: {message or ''}".rstrip(": "),
        status=code if isinstance(code, int) and not isinstance(code, bool) else None,
        body=msgspec.json.encode(data),
        provider_type=gstatus,
        provider_message=message,
        retry_after=delay,
    )


__all__ = ["STATUS_TYPES", "classify_error", "error_from_chunk", "error_object", "retry_delay"]
