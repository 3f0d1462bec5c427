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

from elelem.errors import (
    AuthenticationError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    ProviderStreamError,
    RateLimitError,
    ServerError,
    StreamError,
)
from elelem.shapes.classify import ErrorFields, ErrorTable, text_field
from elelem.shapes.common import header

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


def _fields(data: Any, headers: Mapping[str, str]) -> ErrorFields:
    """An HTTP error names its exception in ``x-amzn-ErrorType`` and holds
    ``{"message"}`` (or ``Message``); a stream exception event is
    ``{"throttlingException": {"message"}}``."""
    name = (header(headers, "x-amzn-errortype") or "").split(":", 1)[0]
    body = data
    if not name and isinstance(data, Mapping) and len(data) == 1:
        ((event, inner),) = data.items()
        if isinstance(event, str) and event and isinstance(inner, Mapping):
            name, body = event[0].upper() + event[1:], inner
    message = text_field(body, "message") or text_field(body, "Message")
    return ErrorFields(type=name or None, message=message)


ERRORS = ErrorTable("bedrock", _fields, types=EXCEPTIONS, context=_CONTEXT_RE)
"""The Bedrock error table: the AWS exception picks the class where known,
else the status; a ``ValidationException`` about input length is a
context-window error."""

classify_error = ERRORS.classify_error
error_from_event = ERRORS.error_from_event


__all__ = ["ERRORS", "EXCEPTIONS", "EXCEPTION_EVENTS", "classify_error", "error_from_event"]
