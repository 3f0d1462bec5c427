"""Gemini Interactions errors: a stream's error events have their own table;
HTTP errors carry the same Google error bodies as ``generateContent``'s
(:func:`classify_error` is Gemini's).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from elelem.errors import (
    StreamError,
)
from elelem.shapes.classify import ErrorFields, ErrorTable, classify_event, text_field
from elelem.shapes.gemini.errors import STATUS_TYPES, classify_error


def _event_fields(data: Any, headers: Mapping[str, str]) -> ErrorFields:
    """An interactions error event: ``{"error": {"code": "INVALID_ARGUMENT", "message"}}``."""
    del headers
    error = data.get("error") if isinstance(data, Mapping) else None
    return ErrorFields(type=text_field(error, "code"), message=text_field(error, "message"))


ERRORS = ErrorTable("gemini interactions", _event_fields, types=STATUS_TYPES)
"""The table of an interactions stream's error events (HTTP errors are Gemini's)."""


def error_from_event(data: Mapping[str, Any]) -> StreamError:
    """The typed error an ``error`` event of the stream carries."""
    return classify_event(ERRORS, data)


__all__ = ["ERRORS", "classify_error", "error_from_event"]
