"""The Anthropic error classifier: HTTP errors and stream ``error`` events -> typed errors."""

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
    RequestTooLargeError,
    ServerError,
    StreamError,
)
from elelem.shapes.common import body_excerpt, error_class_for_status, header, retry_after

ERROR_TYPES: dict[str, type[StreamError]] = {
    "invalid_request_error": InvalidRequestError,
    "authentication_error": AuthenticationError,
    "permission_error": PermissionDeniedError,
    "not_found_error": NotFoundError,
    "request_too_large": RequestTooLargeError,
    "rate_limit_error": RateLimitError,
    "overloaded_error": OverloadedError,
    "api_error": ServerError,
    "timeout_error": ServerError,
}
"""Anthropic ``error.type`` -> the typed error it raises."""

_OVERRIDES: dict[int, type[StreamError]] = {529: OverloadedError}
"""Statuses Anthropic gives its own meaning; the rest as in ``common.STATUS_ERRORS``."""

_SIGNATURE = re.compile(r"invalid\s+`?signature`?\s+in\s+`?thinking`?\s+block", re.IGNORECASE)
_LOCATION = re.compile(r"messages\.(\d+)\.content\.(\d+)")
_CONTEXT = re.compile(
    r"prompt is too long|exceeds? (the )?(model'?s? )?context|context (window|limit)",
    re.IGNORECASE,
)


def _error_fields(body: bytes) -> tuple[str | None, str | None, str | None]:
    try:
        data: Any = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return None, None, None
    if not isinstance(data, dict):
        return None, None, None
    err = data.get("error")
    request_id = data.get("request_id")
    if not isinstance(err, dict):
        return None, None, request_id if isinstance(request_id, str) else None
    etype, message = err.get("type"), err.get("message")
    return (
        etype if isinstance(etype, str) else None,
        message if isinstance(message, str) else None,
        request_id if isinstance(request_id, str) else None,
    )


def _should_retry(headers: Mapping[str, str]) -> bool | None:
    value = (header(headers, "x-should-retry") or "").strip().lower()
    return {"true": True, "false": False}.get(value)


def classify_error(status: int, headers: Mapping[str, str], body: bytes) -> StreamError:
    """Turn an Anthropic HTTP error response into a typed error.

    The provider's ``error.type`` picks the class where known, else the
    status does (529 overloaded, other 5xx server).  ``retry-after-ms`` or
    ``retry-after`` (see :func:`elelem.shapes.common.retry_after`) become
    ``retry_after``; ``x-should-retry`` overrides the class's default
    retryability.  A rejected thinking signature becomes a
    :class:`RecoverableError` whose patch names the block to strip, and a
    prompt over the context window a :class:`ContextWindowError`.
    """
    etype, message, request_id = _error_fields(body)
    request_id = request_id or header(headers, "request-id")
    cls = ERROR_TYPES.get(etype or "") or error_class_for_status(status, _OVERRIDES)
    text = message or body_excerpt(body)
    summary = f"anthropic {status} {etype or 'error'}: {text}".rstrip(": ")
    common: dict[str, Any] = {
        "status": status,
        "body": body,
        "provider_type": etype,
        "provider_message": message,
        "request_id": request_id,
        "retry_after": retry_after(headers),
    }
    if message is not None and issubclass(cls, InvalidRequestError):
        if _SIGNATURE.search(message):
            where = _LOCATION.search(message)
            target: dict[str, object] = (
                {"message": int(where.group(1)), "block": int(where.group(2))} if where else {}
            )
            patch = Patch("strip-signature", target=target, reason=message)
            return RecoverableError(summary, patches=[patch], **common)
        if _CONTEXT.search(message):
            cls = ContextWindowError
    should = _should_retry(headers)
    return cls(summary, retryable=should, **common)


def error_from_event(data: Mapping[str, Any]) -> StreamError:
    """The typed error for a mid-stream ``error`` event (HTTP status was 200)."""
    err = data.get("error")
    etype = err.get("type") if isinstance(err, Mapping) else None
    message = err.get("message") if isinstance(err, Mapping) else None
    etype = etype if isinstance(etype, str) else None
    message = message if isinstance(message, str) else None
    request_id = data.get("request_id")
    cls = ERROR_TYPES.get(etype or "", ProviderStreamError)
    return cls(
        f"anthropic stream error {etype or 'unknown'}: {message or ''}".rstrip(": "),
        body=msgspec.json.encode(data),
        provider_type=etype,
        provider_message=message,
        request_id=request_id if isinstance(request_id, str) else None,
    )


__all__ = ["ERROR_TYPES", "classify_error", "error_from_event"]
