"""Gemini Interactions errors -> typed :class:`~elelem.errors.StreamError`\\ s.

One table for HTTP errors and a stream's error events.  The Interactions
API documents its own error codes (ai.google.dev/gemini-api/docs/api-errors:
``{"error": {"code": "not_found", "message": …}}``, ``code`` one of
``invalid_request``, ``not_found``, ``permission_denied``,
``rate_limit_exceeded``, …); a Google front end may still answer with the
``generateContent`` form (``{"error": {"code": 404, "status": "NOT_FOUND",
"message"}}``), read as Gemini's.  Either names the class where known, else
the HTTP status does.

An interaction the request continued (``previous_interaction_id``) that the
provider no longer holds (expired past its retention, deleted, made with
another key) is a 404 ``not_found``: a
:class:`~elelem.errors.RecoverableError` asking for a
:data:`~elelem.errors.FULL_REPLAY`, the one policy of
:mod:`elelem.shapes.provider_state` (as a Responses
``previous_response_not_found``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from elelem.errors import NotFoundError, Patch, StreamError
from elelem.shapes.classify import ErrorFields, ErrorTable, text_field
from elelem.shapes.gemini.errors import ERRORS as GEMINI_ERRORS
from elelem.shapes.gemini.errors import STATUS_TYPES, google_error
from elelem.shapes.provider_state import ANY_STATE, FULL_REPLAY

CODE_STATUSES: Mapping[str, str] = MappingProxyType(
    {
        "invalid_request": "INVALID_ARGUMENT",
        "failed_precondition": "FAILED_PRECONDITION",
        "out_of_range": "OUT_OF_RANGE",
        "parameter_unknown": "INVALID_ARGUMENT",
        "authentication": "UNAUTHENTICATED",
        "permission_denied": "PERMISSION_DENIED",
        "not_found": "NOT_FOUND",
        "model_not_found": "NOT_FOUND",
        "rate_limit_exceeded": "RESOURCE_EXHAUSTED",
        "quota_exceeded": "RESOURCE_EXHAUSTED",
        "api_error": "INTERNAL",
        "unavailable": "UNAVAILABLE",
    }
)
"""The Interactions API's documented error codes -> the Google canonical
status each stands for (the same HTTP status on the error page)."""

CODE_TYPES: Mapping[str, type[StreamError]] = MappingProxyType(
    {code: STATUS_TYPES[status] for code, status in CODE_STATUSES.items()}
)
"""The Interactions API's documented error codes -> the typed error each
raises: its status's, from Gemini's one table of Google's error classes."""

# Google's own form says a lost interaction as NOT_FOUND naming it.
_NAMES_INTERACTION = re.compile(r"interaction", re.I)


def _fields(data: Any, headers: Mapping[str, str]) -> ErrorFields:
    """Gemini's fields, the Interactions ``code`` (a string) as the type
    where Google's ``status`` is absent."""
    fields = GEMINI_ERRORS.fields(data, headers)
    if fields.type is not None:
        return fields
    return dataclasses.replace(fields, type=text_field(google_error(data), "code"))


def _lost_interaction(fields: ErrorFields) -> Patch | None:
    """The interaction the request continued is gone: replay the whole history."""
    text = fields.message or ""
    named = fields.type == "NOT_FOUND" and _NAMES_INTERACTION.search(text)
    if fields.type != "not_found" and not named:
        return None
    return Patch(FULL_REPLAY, {"id": ANY_STATE}, reason=text)


ERRORS = ErrorTable(
    "gemini interactions",
    _fields,
    types=MappingProxyType({**GEMINI_ERRORS.types, **CODE_TYPES}),
    statuses=GEMINI_ERRORS.statuses,
    context=GEMINI_ERRORS.context,
    recover=_lost_interaction,
    recover_classes=(NotFoundError,),
    retryable=lambda fields, headers: False if fields.type == "quota_exceeded" else None,
)
"""The Gemini Interactions error table (see the module docstring)."""

classify_error = ERRORS.classify_error
error_from_event = ERRORS.error_from_event


__all__ = ["CODE_STATUSES", "CODE_TYPES", "ERRORS", "classify_error", "error_from_event"]
