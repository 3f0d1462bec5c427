"""Ollama errors -> typed :class:`~elelem.errors.StreamError`\\ s.

Ollama's native API answers every error, as an HTTP body or as an NDJSON line
in the middle of a stream, with ``{"error": "text"}``: no type, no code.  The
HTTP status picks the class (through the one pipeline, :mod:`elelem.shapes.classify`);
a prompt over the context window is recognised by its wording; a mid-stream
error (the model runner failed after the 200 went out) is a
:class:`~elelem.errors.ProviderStreamError`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from elelem.errors import InvalidRequestError, ProviderStreamError, ServerError
from elelem.shapes.classify import ErrorFields, ErrorTable

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


def _fields(data: Any, headers: Mapping[str, str]) -> ErrorFields:
    del headers
    return ErrorFields(message=error_message(data))


ERRORS = ErrorTable(
    "ollama",
    _fields,
    context=_CONTEXT_RE,
    # Ollama reports a prompt over the context window in a 400, a 500 or mid-stream.
    context_classes=(InvalidRequestError, ServerError, ProviderStreamError),
)
"""The Ollama error table: no type, no code; the status picks the class (404
not found — an unpulled model —, 400 invalid request, 429 rate limit, 5xx
server error, …); a 400 or 500 whose message speaks of the context window is
a :class:`~elelem.errors.ContextWindowError`."""

classify_error = ERRORS.classify_error
error_from_event = ERRORS.error_from_event


__all__ = ["ERRORS", "classify_error", "error_from_event", "error_message"]
