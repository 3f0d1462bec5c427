"""Bedrock Converse errors -> typed :class:`~elelem.errors.StreamError`\\ s.

An HTTP error names its exception in the ``x-amzn-ErrorType`` header
(``ThrottlingException:http://…``) and carries ``{"message": "…"}``; a
stream reports one as an exception event (``throttlingException``,
``modelStreamErrorException`` …) whose body holds ``message``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import msgspec

from elelem.errors import (
    AuthenticationError,
    ContextWindowError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    ProviderStreamError,
    RateLimitError,
    ServerError,
    StreamError,
)
from elelem.shapes.common import body_excerpt, error_class_for_status, header, retry_after

EXCEPTIONS: Mapping[str, type[StreamError]] = MappingProxyType(
    {
        "ValidationException": InvalidRequestError,
        "AccessDeniedException": PermissionDeniedError,
        "UnrecognizedClientException": AuthenticationError,
        "ResourceNotFoundException": NotFoundError,
        "ThrottlingException": RateLimitError,
        "ServiceQuotaExceededException": RateLimitError,
        "InternalServerException": ServerError,
        "ServiceUnavailableException": OverloadedError,
        "ModelTimeoutException": ServerError,
        "ModelNotReadyException": OverloadedError,
        "ModelErrorException": ProviderStreamError,
        "ModelStreamErrorException": ProviderStreamError,
    }
)
"""AWS exception name -> the typed error it raises."""

EXCEPTION_EVENTS = frozenset(name[0].lower() + name[1:] for name in EXCEPTIONS)
"""The stream's exception event names (``throttlingException`` …)."""

_CONTEXT_RE = re.compile(
    r"input is too long|too many (input )?tokens|context (length|window)", re.I
)


def _exception(name: str, message: str | None) -> type[StreamError] | None:
    cls = EXCEPTIONS.get(name[0].upper() + name[1:]) if name else None
    if cls is InvalidRequestError and message is not None and _CONTEXT_RE.search(message):
        return ContextWindowError
    return cls


def error_from_event(name: str, body: Mapping[str, Any]) -> StreamError:
    """The typed error for a stream exception event ``name`` with ``body``."""
    message = body.get("message") if isinstance(body.get("message"), str) else None
    cls = _exception(name, message) or ProviderStreamError
    raw = msgspec.json.encode({name: dict(body)})
    return cls(
        f"{name}: {message or 'no message'}", body=raw, provider_type=name, provider_message=message
    )


def classify_error(status: int, headers: Mapping[str, str], body: bytes) -> StreamError:
    """A typed error for an HTTP error response: the ``x-amzn-ErrorType``
    exception where known, else the status; the body kept, size-bounded."""
    try:
        parsed: Any = msgspec.json.decode(body)
    except msgspec.DecodeError:
        parsed = None
    message = None
    if isinstance(parsed, dict):
        found = parsed.get("message", parsed.get("Message"))
        message = found if isinstance(found, str) else None
    name = (header(headers, "x-amzn-errortype") or "").split(":", 1)[0]
    cls = _exception(name, message) or error_class_for_status(status)
    text = message if message is not None else body_excerpt(body)
    label = f"HTTP {status}: {text}" if text else f"HTTP {status}"
    wait = retry_after(headers)
    return cls(
        label,
        status=status,
        body=body,
        provider_type=name or None,
        provider_message=message,
        request_id=header(headers, "x-amzn-requestid"),
        retry_after=wait,
    )


__all__ = ["EXCEPTIONS", "EXCEPTION_EVENTS", "classify_error", "error_from_event"]
