"""The one error-classification pipeline; each shape gives it a table (docs/architecture.md §2.4).

A provider's error reaches elelem two ways: an HTTP error response (status,
headers, body) and an error object inside a 2xx stream.  Both go through
:func:`classify_http` / :func:`classify_event` with the shape's
:class:`ErrorTable`, which says only what differs between providers:

- where the error's fields live (:attr:`ErrorTable.fields`: type, code,
  message, request id, a stated status or retry delay, a refining reason);
- which provider error type names which typed error (:attr:`ErrorTable.types`);
- statuses the provider gives its own meaning (:attr:`ErrorTable.statuses`);
- the wording of a prompt over the context window (:attr:`ErrorTable.context`);
- the stale-signature rule: a rejected signature (or encrypted item) becomes a
  :class:`~elelem.errors.RecoverableError` with the :class:`~elelem.errors.Patch`
  :attr:`ErrorTable.recover` builds;
- a provider's say on retrying (:attr:`ErrorTable.retryable`).

The rules every shape shares are here, once.  The class is picked by, in
order: the refining reason, the specific type (code), the status
(:data:`~elelem.shapes.common.STATUS_ERRORS`, 529 overloaded everywhere, a 503
that says it is overloaded, any other 5xx a server error), the general type,
else invalid request; for an in-stream error, else
:class:`~elelem.errors.ProviderStreamError`.  An invalid request whose message
matches the context pattern is a :class:`~elelem.errors.ContextWindowError`.
The message is always ``"<provider> <status> <error type>: <message>"``
(``stream`` for the status of an in-stream error, ``error`` for a type the
body does not name, the start of the body for a missing message).

``retry-after`` headers and the response's request id are *not* read here:
the driver stamps them once on every error (a delay or id the body itself
states is the table's, and kept).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import msgspec

from elelem.errors import (
    ContextWindowError,
    InvalidRequestError,
    OverloadedError,
    Patch,
    ProviderStreamError,
    RecoverableError,
    ServerError,
    StreamError,
)
from elelem.shapes.common import body_excerpt, status_error_class
from elelem.vocabulary.json import decode_json

_OVERLOADED = re.compile(r"overloaded|over capacity|at capacity", re.IGNORECASE)


@dataclass(frozen=True)
class ErrorFields:
    """What one error body says, wherever the provider puts it.

    ``type`` is the provider's specific error type or code (it outranks the
    status); ``general`` a broad type that ranks below it (OpenAI's
    ``invalid_request_error`` comes with a 401 for a bad key); ``reason`` a
    detail that refines both (Google's ``API_KEY_INVALID``).  ``status`` and
    ``retry_after`` are what the body itself states.
    """

    type: str | None = None
    message: str | None = None
    general: str | None = None
    reason: str | None = None
    request_id: str | None = None
    status: int | None = None
    retry_after: float | None = None

    @property
    def label(self) -> str | None:
        """The error type a message names: the specific one, else the general one."""
        return self.type or self.general


def _no_patch(fields: ErrorFields) -> Patch | None:
    del fields
    return None


def _no_say(fields: ErrorFields, headers: Mapping[str, str]) -> bool | None:
    del fields, headers
    return None


@dataclass(frozen=True)
class ErrorTable:
    """What one provider's errors look like (see the module docstring)."""

    provider: str
    """The first word of every message (``anthropic``, ``gemini``, ``bedrock``)."""

    fields: Callable[[Any, Mapping[str, str]], ErrorFields]
    """The fields of a decoded body (None if it was no JSON) given the response headers."""

    types: Mapping[str, type[StreamError]] = field(default_factory=dict)
    """Provider error type, code or reason -> the typed error it raises."""

    statuses: Mapping[int, type[StreamError]] = field(default_factory=dict)
    """HTTP statuses this provider gives its own meaning."""

    context: re.Pattern[str] | None = None
    """How this provider words a prompt over the context window."""

    context_classes: tuple[type[StreamError], ...] = (InvalidRequestError,)
    """The classes a context-window message refines (Ollama says it in a 500)."""

    recover: Callable[[ErrorFields], Patch | None] = _no_patch
    """The repair an invalid request asks for (a stale signature to strip), or None."""

    recover_classes: tuple[type[StreamError], ...] = (InvalidRequestError,)
    """The classes :attr:`recover` is asked about (Gemini Interactions says a
    lost ``previous_interaction_id`` with a 404 ``not_found``)."""

    retryable: Callable[[ErrorFields, Mapping[str, str]], bool | None] = _no_say
    """The provider's say on retrying (a header, an exhausted quota), None for the class default."""

    def classify_error(self, status: int, headers: Mapping[str, str], body: bytes) -> StreamError:
        """This provider's typed error for an HTTP error response (:func:`classify_http`)."""
        return classify_http(self, status, headers, body)

    def error_from_event(self, obj: Any, body: bytes | None = None) -> StreamError:
        """This provider's typed error for an error object inside a 2xx stream
        (:func:`classify_event`)."""
        return classify_event(self, obj, body)


def decode_error_body(body: bytes) -> Any:
    """The JSON value of an error body, or None when it is not JSON."""
    try:
        return decode_json(body) if body else None
    except msgspec.DecodeError:
        return None


def classify_http(
    table: ErrorTable, status: int, headers: Mapping[str, str], body: bytes
) -> StreamError:
    """The typed error for an HTTP error response (body kept, size-bounded)."""
    fields = table.fields(decode_error_body(body), headers)
    cls = _by_type(table, fields.reason, fields.type) or _by_status(table, status, fields)
    if cls is None and status >= 500:
        cls = ServerError
    if cls is None:
        cls = _by_type(table, fields.general) or InvalidRequestError
    return _build(table, cls, fields, status, body, headers)


def classify_event(table: ErrorTable, obj: Any, body: bytes | None = None) -> StreamError:
    """The typed error for an error object inside a 2xx stream (``body`` its
    frame, else ``obj`` as JSON)."""
    fields = table.fields(obj, {})
    cls = _by_type(table, fields.reason, fields.type)
    if cls is None and fields.status is not None:
        cls = _by_status(table, fields.status, fields)
    cls = cls or _by_type(table, fields.general) or ProviderStreamError
    raw = body if body is not None else msgspec.json.encode(obj)
    return _build(table, cls, fields, fields.status, raw, {})


def _by_type(table: ErrorTable, *names: str | None) -> type[StreamError] | None:
    for name in names:
        if name and name in table.types:
            return table.types[name]
    return None


def _by_status(table: ErrorTable, status: int, fields: ErrorFields) -> type[StreamError] | None:
    cls = status_error_class(status, {**SHARED_STATUSES, **table.statuses})
    if cls is None and status == 503 and fields.message and _OVERLOADED.search(fields.message):
        return OverloadedError
    return cls


SHARED_STATUSES: Mapping[int, type[StreamError]] = MappingProxyType({529: OverloadedError})
"""Statuses beyond :data:`~elelem.shapes.common.STATUS_ERRORS` every shape reads alike."""


def _build(
    table: ErrorTable,
    cls: type[StreamError],
    fields: ErrorFields,
    status: int | None,
    body: bytes,
    headers: Mapping[str, str],
) -> StreamError:
    text = fields.message or body_excerpt(body)
    where = "stream" if status is None else str(status)
    # A gateway's code may be the status again (LiteLLM: "code": "429") or
    # the string "None": said once, never as "429 429".
    label = fields.label if fields.label not in (None, "", where, "None") else "error"
    summary = f"{table.provider} {where} {label}: {text}".rstrip(": ")
    common: dict[str, Any] = {
        "status": status,
        "body": body,
        "provider_type": fields.label,
        "provider_message": fields.message,
        "request_id": fields.request_id,
        "retry_after": fields.retry_after,
    }
    error: StreamError
    patch = (
        table.recover(fields)
        if fields.message is not None and issubclass(cls, table.recover_classes)
        else None
    )
    if patch is not None:
        error = RecoverableError(summary, patches=[patch], **common)
    else:
        if (
            fields.message is not None
            and table.context is not None
            and cls in table.context_classes
            and table.context.search(fields.message)
        ):
            cls = ContextWindowError
        error = cls(summary, retryable=table.retryable(fields, headers), **common)
    error.named = table.provider
    return error


def openai_fields(data: Any, headers: Mapping[str, str]) -> ErrorFields:
    """Where OpenAI-style servers put an error's fields (Chat Completions and
    Responses servers alike).

    ``{"error": {"message", "type", "code"}}`` (llama.cpp and OpenRouter put
    the HTTP status in ``code``, some add ``status_code``); Mistral puts
    ``message`` and ``type`` at the top level; Ollama may send
    ``{"error": "text"}``.  ``code`` is the specific type, ``type`` the
    general one (``"error"`` says nothing).
    """
    del headers
    inner = data.get("error") if isinstance(data, Mapping) else None
    if isinstance(inner, str):
        return ErrorFields(message=inner)
    src = inner if isinstance(inner, Mapping) else data if isinstance(data, Mapping) else {}
    code, status = src.get("code"), src.get("status_code")
    if isinstance(code, int) and not isinstance(code, bool):
        status = status if isinstance(status, int) else code
        code = None
    general = text_field(src, "type")
    return ErrorFields(
        type=code if isinstance(code, str) and code else None,
        message=text_field(src, "message"),
        general=None if general == "error" else general,
        status=status if isinstance(status, int) and not isinstance(status, bool) else None,
    )


def text_field(obj: Any, name: str) -> str | None:
    """``obj[name]`` when ``obj`` is an object and the value a string, else None."""
    value = obj.get(name) if isinstance(obj, Mapping) else None
    return value if isinstance(value, str) else None


__all__ = [
    "SHARED_STATUSES",
    "ErrorFields",
    "ErrorTable",
    "classify_event",
    "classify_http",
    "decode_error_body",
    "openai_fields",
    "text_field",
]
