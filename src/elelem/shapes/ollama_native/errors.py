"""Ollama errors -> typed :class:`~elelem.errors.StreamError`\\ s.

Ollama's native API answers every error, as an HTTP body or as an NDJSON line
in the middle of a stream, with ``{"error": "text"}``: no type, no code.  The
HTTP status picks the class (:func:`elelem.shapes.common.error_class_for_status`);
a prompt over the context window is recognised by its wording; a mid-stream
error (the model runner failed after the 200 went out) is a
:class:`~elelem.errors.ProviderStreamError`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec

from elelem.errors import ContextWindowError, ProviderStreamError, RateLimitError, StreamError
from elelem.shapes.common import body_excerpt, error_class_for_status, retry_after

_CONTEXT_RE = re.compile(
    r"context (length|window|size)|exceeds? (the )?(maximum )?context|prompt is too long",
    re.IGNORECASE,
)


def error_message(obj: object) -> str | None:
    """The text of an Ollama error object (``{"error": "text"}``; a nested
    ``{"error": {"message": …}}`` from a proxy is read too), or None."""
    if not isinstance(obj, dict):
        return None
    inner = obj.get("error")
    if isinstance(inner, str):
        return inner
    if isinstance(inner, dict) and isinstance(inner.get("message"), str):
        return str(inner["message"])
    return None


def classify_error(status: int, headers: Mapping[str, str], body: bytes) -> StreamError:
    """A typed error for an HTTP error response from Ollama.

    The class comes from the status (404 not found — an unpulled model —, 400
    invalid request, 429 rate limit with the server's ``retry-after``, 5xx
    server error, …); a 400 or 500 whose message speaks of the context
    window is a :class:`ContextWindowError`.  The body is kept, size-bounded.
    """
    try:
        parsed: Any = msgspec.json.decode(body)
    except msgspec.DecodeError:
        parsed = None
    message = error_message(parsed)
    text = message if message is not None else body_excerpt(body)
    label = f"HTTP {status}: {text}" if text else f"HTTP {status}"
    common: dict[str, Any] = {"status": status, "body": body, "provider_message": message}
    if status in (400, 500) and message is not None and _CONTEXT_RE.search(message):
        return ContextWindowError(label, **common)
    cls = error_class_for_status(status)
    if cls is RateLimitError or status >= 500:
        return cls(label, retry_after=retry_after(headers), **common)
    return cls(label, **common)


def error_from_object(obj: Mapping[str, Any], raw: bytes) -> StreamError:
    """The typed error for an ``{"error": …}`` line inside a 2xx stream."""
    message = error_message(obj) or "provider error"
    if _CONTEXT_RE.search(message):
        return ContextWindowError(message, body=raw, provider_message=message)
    return ProviderStreamError(message, body=raw, provider_message=message)


__all__ = ["classify_error", "error_from_object", "error_message"]
