"""The Anthropic error classifier: HTTP errors and stream ``error`` events -> typed errors."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from elelem.errors import (
    AuthenticationError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    Patch,
    PermissionDeniedError,
    RateLimitError,
    RequestTooLargeError,
    ServerError,
    StreamError,
)
from elelem.shapes.classify import ErrorFields, ErrorTable, text_field
from elelem.shapes.common import header

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

_SIGNATURE = re.compile(r"invalid\s+`?signature`?\s+in\s+`?thinking`?\s+block", re.IGNORECASE)
_LOCATION = re.compile(r"messages\.(\d+)\.content\.(\d+)")
_CONTEXT = re.compile(
    r"prompt is too long|exceeds? (the )?(model'?s? )?context|context (window|limit)",
    re.IGNORECASE,
)


def _fields(data: Any, headers: Mapping[str, str]) -> ErrorFields:
    """``{"type": "error", "error": {"type", "message"}, "request_id"}``."""
    del headers
    err = data.get("error") if isinstance(data, Mapping) else None
    return ErrorFields(
        type=text_field(err, "type"),
        message=text_field(err, "message"),
        request_id=text_field(data, "request_id"),
    )


def _stale_signature(fields: ErrorFields) -> Patch | None:
    """A rejected thinking signature: strip it from the block the message names."""
    message = fields.message or ""
    if not _SIGNATURE.search(message):
        return None
    where = _LOCATION.search(message)
    target: dict[str, object] = (
        {"message": int(where.group(1)), "block": int(where.group(2))} if where else {}
    )
    return Patch("strip-signature", target=target, reason=message)


def _should_retry(fields: ErrorFields, headers: Mapping[str, str]) -> bool | None:
    del fields
    value = (header(headers, "x-should-retry") or "").strip().lower()
    return {"true": True, "false": False}.get(value)


ERRORS = ErrorTable(
    "anthropic",
    _fields,
    types=ERROR_TYPES,
    context=_CONTEXT,
    recover=_stale_signature,
    retryable=_should_retry,
)
"""Anthropic's error table: ``error.type`` picks the class; ``x-should-retry``
overrides the class's retryability; a rejected thinking signature asks for
``strip-signature`` at ``messages.i.content.j``."""

classify_error = ERRORS.classify_error
error_from_event = ERRORS.error_from_event


__all__ = ["ERRORS", "ERROR_TYPES", "classify_error", "error_from_event"]
