"""OpenAI Responses errors -> typed :class:`~elelem.errors.StreamError`\\ s.

Through the one pipeline (:mod:`elelem.shapes.classify`) with this shape's
table: ``error.code`` is specific and picks the class where known; the
``error.type`` is not (a bad key is an ``invalid_request_error`` with status
401), so the status outranks it.  A rejected encrypted reasoning item
becomes a :class:`~elelem.errors.RecoverableError` asking to strip that item;
an exhausted quota is not retryable.  Error events and failed responses
inside a stream carry the same object.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

from elelem.errors import (
    ContextWindowError,
    InvalidRequestError,
    OverloadedError,
    Patch,
    RateLimitError,
    ServerError,
)
from elelem.shapes.classify import ErrorFields, ErrorTable, openai_fields
from elelem.shapes.provider_state import ANY_STATE, FULL_REPLAY, lost_state

_CONTEXT = re.compile(r"context (window|length)|maximum context|too many tokens", re.I)
_ENCRYPTED_ITEM = re.compile(r"\b(rs_[A-Za-z0-9_-]+)")
_PREVIOUS = re.compile(r"previous[_ ]response|conversation with id .* not found", re.I)


def _stale_item(fields: ErrorFields) -> Patch | None:
    """A rejected encrypted reasoning item: strip the item the message names."""
    text = fields.message or ""
    if fields.type != "invalid_encrypted_content" and "encrypted content" not in text.lower():
        return None
    found = _ENCRYPTED_ITEM.search(text)
    target: dict[str, object] = {"item_id": found.group(1)} if found else {}
    return Patch("strip-reasoning", target, reason=text or "encrypted content rejected")


def _lost_state(fields: ErrorFields) -> Patch | None:
    """The provider no longer holds the response or conversation the request
    continued (``previous_response_not_found``: expired, deleted, made with
    another key or never stored): replay the whole history instead."""
    text = fields.message or ""
    if fields.type != "previous_response_not_found" and not _PREVIOUS.search(text):
        return None
    return Patch(FULL_REPLAY, {"id": lost_state(text) or ANY_STATE}, reason=text)


def _recover(fields: ErrorFields) -> Patch | None:
    return _stale_item(fields) or _lost_state(fields)


def _quota(fields: ErrorFields, headers: Mapping[str, str]) -> bool | None:
    del headers
    return False if fields.type == "insufficient_quota" else None


ERRORS = ErrorTable(
    "openai",
    openai_fields,
    types=MappingProxyType(
        {
            "rate_limit_exceeded": RateLimitError,
            "insufficient_quota": RateLimitError,
            "server_error": ServerError,
            "internal_error": ServerError,
            "server_overloaded": OverloadedError,
            "overloaded": OverloadedError,
            "context_length_exceeded": ContextWindowError,
            "invalid_prompt": InvalidRequestError,
            "invalid_request_error": InvalidRequestError,
        }
    ),
    context=_CONTEXT,
    recover=_recover,
    retryable=_quota,
)
"""The OpenAI Responses error table."""

classify_error = ERRORS.classify_error
error_from_event = ERRORS.error_from_event


__all__ = ["ERRORS", "classify_error", "error_from_event"]
