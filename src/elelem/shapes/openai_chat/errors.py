"""Chat Completions errors -> typed :class:`StreamError`\\ s.

Through the one pipeline (:mod:`elelem.shapes.classify`) with this shape's
table.  Error bodies differ by server (see
:func:`~elelem.shapes.classify.openai_fields`); a mid-stream error object
(``event: error`` or a ``data:`` frame holding only ``error``) carries the
same fields, sometimes with ``status_code``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

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
)
from elelem.shapes.classify import ErrorFields, ErrorTable, openai_fields

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


def _quota(fields: ErrorFields, headers: Mapping[str, str]) -> bool | None:
    # An exhausted quota stays exhausted: retrying the same request cannot help.
    del headers
    return False if {fields.type, fields.general} & _QUOTA_CODES else None


ERRORS = ErrorTable(
    "chat",
    openai_fields,
    types=MappingProxyType(
        {
            **dict.fromkeys(_CONTEXT_CODES, ContextWindowError),
            **dict.fromkeys(_QUOTA_CODES, RateLimitError),
            **dict.fromkeys(_SERVER_TYPES, ServerError),
            "authentication_error": AuthenticationError,
            "permission_error": PermissionDeniedError,
            "not_found_error": NotFoundError,
            "rate_limit_error": RateLimitError,
            "rate_limit_exceeded": RateLimitError,
            "invalid_request_error": InvalidRequestError,
            "overloaded_error": OverloadedError,
        }
    ),
    # 402 (payment required) is a permission error, 408 (timeout) a server one.
    statuses=MappingProxyType({402: PermissionDeniedError, 408: ServerError}),
    context=_CONTEXT_RE,
    # These servers also say it in a 413 or a mid-stream error with no type.
    context_classes=(InvalidRequestError, RequestTooLargeError, ProviderStreamError),
    retryable=_quota,
)
"""The Chat Completions error table (OpenAI-style bodies, see :func:`openai_fields`).

The code picks the class where known (a context-length or quota code), else
the status (401 authentication, 402/403 permission, 404 not found, 429 rate
limit — an exhausted quota is not retryable —, 413 too large, 400/422 invalid
request, 529 or a 503 saying overloaded :class:`OverloadedError`, other 5xx
and 408 :class:`ServerError`), else the error type; a context-length wording
is a :class:`ContextWindowError`."""

classify_error = ERRORS.classify_error
error_from_event = ERRORS.error_from_event


__all__ = ["ERRORS", "classify_error", "error_from_event"]
