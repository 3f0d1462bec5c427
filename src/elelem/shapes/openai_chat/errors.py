"""Chat Completions errors -> typed :class:`StreamError`\\ s.

Error bodies differ by server: OpenAI, DeepSeek, Groq, Perplexity and
llama.cpp nest ``{"error": {"message", "type", "code"}}`` (llama.cpp and
OpenRouter put the HTTP status in ``code``); Mistral puts ``message`` and
``type`` at the top level; Ollama may send ``{"error": "text"}``.  A
mid-stream error object (``event: error`` or a ``data:`` frame holding only
``error``) carries the same fields, sometimes with ``status_code``.
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
    PermissionDeniedError,
    ProviderStreamError,
    RateLimitError,
    RequestTooLargeError,
    ServerError,
    StreamError,
)
from elelem.shapes.common import header, retry_after

# Wording servers use for a prompt that does not fit (OpenAI, DeepSeek, Groq,
# llama.cpp, vLLM, Mistral, OpenRouter).
_CONTEXT_RE = re.compile(
    r"context[ _-]?(length|window|size)|maximum context|too many tokens|prompt is too long"
    r"|exceeds? the (available )?context|reduce the length of the messages",
    re.IGNORECASE,
)
_CONTEXT_CODES = frozenset(
    {"context_length_exceeded", "exceed_context_size_error", "string_above_max_length"}
)
_QUOTA_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached"})
_SERVER_TYPES = frozenset({"server_error", "api_error", "internal_error"})
_OVERLOADED_RE = re.compile(r"overloaded|over capacity|at capacity", re.IGNORECASE)


def _fields(obj: Any) -> tuple[str | None, str | None, str | None, int | None]:
    """(type, code, message, status) from any of the known error layouts."""
    inner = obj.get("error") if isinstance(obj, dict) else None
    if isinstance(inner, str):
        return None, None, inner, None
    src: Mapping[str, Any] = (
        inner if isinstance(inner, dict) else obj if isinstance(obj, dict) else {}
    )
    kind = src.get("type")
    code = src.get("code")
    message = src.get("message")
    status = src.get("status_code")
    if isinstance(code, int) and not isinstance(code, bool):
        status = status if isinstance(status, int) else code
        code = None
    return (
        kind if isinstance(kind, str) else None,
        code if isinstance(code, str) else None,
        message if isinstance(message, str) else None,
        status if isinstance(status, int) and not isinstance(status, bool) else None,
    )


def _parse_body(body: bytes) -> Any:
    try:
        return msgspec.json.decode(body)
    except msgspec.DecodeError:
        return None


def _is_context(kind: str | None, code: str | None, message: str | None) -> bool:
    return (
        code in _CONTEXT_CODES
        or kind in _CONTEXT_CODES
        or (message is not None and _CONTEXT_RE.search(message) is not None)
    )


def _classify(
    status: int | None,
    kind: str | None,
    code: str | None,
    message: str | None,
    *,
    body: bytes | None,
    wait: float | None,
    request_id: str | None,
    mid_stream: bool,
) -> StreamError:
    text = message or kind or code or (f"HTTP {status}" if status else "provider error")
    label = f"HTTP {status}: {text}" if status else text
    common: dict[str, Any] = {
        "status": status,
        "body": body,
        "provider_type": kind or code,
        "provider_message": message,
        "request_id": request_id,
    }
    # Not common.STATUS_ERRORS on purpose: here the error type may outrank the
    # status (these servers send a mid-stream error with no status at all),
    # 402 is a permission error, 408 a server one, and another 4xx stays plain.
    if (status in (400, 413, 422) or status is None) and _is_context(kind, code, message):
        return ContextWindowError(label, **common)
    if status == 401 or kind == "authentication_error":
        return AuthenticationError(label, **common)
    if status in (402, 403) or kind == "permission_error":
        return PermissionDeniedError(label, **common)
    if status == 404 or kind == "not_found_error":
        return NotFoundError(label, **common)
    if status == 429 or kind == "rate_limit_error":
        quota = code in _QUOTA_CODES or kind in _QUOTA_CODES
        # An exhausted quota stays exhausted: retrying the same request cannot help.
        return RateLimitError(label, retry_after=wait, retryable=not quota, **common)
    if status == 413:
        return RequestTooLargeError(label, **common)
    if status in (400, 422) or kind == "invalid_request_error":
        return InvalidRequestError(label, **common)
    if (
        status == 529
        or kind == "overloaded_error"
        or (status == 503 and message is not None and _OVERLOADED_RE.search(message))
    ):
        return OverloadedError(label, retry_after=wait, **common)
    if (status is not None and (status >= 500 or status == 408)) or kind in _SERVER_TYPES:
        return ServerError(label, retry_after=wait, **common)
    if mid_stream:
        return ProviderStreamError(label, **common)
    return StreamError(label, **common)


def classify_error(status: int, headers: Mapping[str, str], body: bytes) -> StreamError:
    """Turn an HTTP error response into a typed error.

    401 authentication, 402/403 permission, 404 not found, 429 rate limit
    (``retry_after`` from the headers; an exhausted quota is not retryable),
    413 request too large, 400/422 invalid request, and a context-length
    rejection (by code or wording) :class:`ContextWindowError`; 529, or 503
    saying overloaded, :class:`OverloadedError`; other 5xx (and 408)
    :class:`ServerError`.  The body is kept, size-bounded.
    """
    kind, code, message, _ = _fields(_parse_body(body))
    request_id = header(headers, "x-request-id") or header(headers, "request-id")
    return _classify(
        status,
        kind,
        code,
        message,
        body=body,
        wait=retry_after(headers),
        request_id=request_id,
        mid_stream=False,
    )


def error_from_object(obj: Mapping[str, Any], raw: bytes) -> StreamError:
    """The typed error for an error object that arrived inside a 2xx response."""
    kind, code, message, status = _fields(obj)
    return _classify(
        status,
        kind,
        code,
        message,
        body=raw,
        wait=None,
        request_id=None,
        mid_stream=True,
    )


__all__ = ["classify_error", "error_from_object", "retry_after"]
