"""``SHAPE``: the OpenAI Responses shape object, and its error classifier."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec

from elelem.errors import (
    ContextWindowError,
    InvalidRequestError,
    OverloadedError,
    Patch,
    RecoverableError,
    ServerError,
    StreamError,
)
from elelem.shapes.base import EncodedRequest, Framing, ModelRequest
from elelem.shapes.common import body_excerpt, header, retry_after, status_error_class
from elelem.shapes.openai_responses import _items
from elelem.shapes.openai_responses.encoder import encode
from elelem.shapes.openai_responses.parser import ResponsesParser, parse_body
from elelem.stream import Chunk
from elelem.vocabulary import ProviderId

_CONTEXT = re.compile(r"context (window|length)|maximum context|too many tokens", re.I)
_ENCRYPTED_ITEM = re.compile(r"\b(rs_[A-Za-z0-9_-]+)")


def classify_error(status: int, headers: Mapping[str, str], body: bytes) -> StreamError:
    """An HTTP error response from the Responses endpoint as a typed error.

    The body's ``error.code``/``type`` refine the status (context window,
    quota, overload); a rejected encrypted reasoning item becomes a
    :class:`RecoverableError` asking to strip that item.
    """
    error: dict[str, Any] = {}
    try:
        parsed = msgspec.json.decode(body) if body else None
    except msgspec.DecodeError:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
        error = parsed["error"]
    code = error.get("code") if isinstance(error.get("code"), str) else None
    kind = error.get("type") if isinstance(error.get("type"), str) else None
    text = error.get("message") if isinstance(error.get("message"), str) else None
    message = text or body_excerpt(body)
    request_id = header(headers, "x-request-id")
    common: dict[str, Any] = {
        "status": status,
        "body": body,
        "provider_type": code or kind,
        "provider_message": text,
        "request_id": request_id,
    }
    summary = (
        f"OpenAI Responses HTTP {status}: {code or kind or 'error'}: {message or 'no message'}"
    )
    if code == "invalid_encrypted_content" or (
        text is not None and "encrypted content" in text.lower() and status == 400
    ):
        found = _ENCRYPTED_ITEM.search(text or "")
        target: dict[str, object] = {"item_id": found.group(1)} if found else {}
        patch = Patch("strip-reasoning", target, reason=text or "encrypted content rejected")
        return RecoverableError(summary, patches=[patch], **common)
    # The code is specific; the type is not (a bad key is an
    # "invalid_request_error" with status 401), so the status outranks it.
    cls = _items.error_class(code, None)
    if cls is None and status == 400 and text is not None and _CONTEXT.search(text):
        cls = ContextWindowError
    if cls is None and status in (503, 529) and "overload" in (text or "").lower():
        cls = OverloadedError
    if cls is None:
        cls = status_error_class(status)
    if cls is None:
        cls = ServerError if status >= 500 else _items.error_class(None, kind)
    if cls is None:
        cls = InvalidRequestError
    retryable = False if code == "insufficient_quota" else None
    return cls(summary, retry_after=retry_after(headers), retryable=retryable, **common)


def _client_tools(request: ModelRequest | None) -> frozenset[str] | None:
    if request is None:
        return None
    return frozenset(t.name for t in request.tools)


class OpenAIResponsesShape:
    """The OpenAI Responses wire shape (see the package docstring)."""

    name = "openai_responses"
    framing: Framing = "sse"

    def encode_request(
        self, request: ModelRequest, *, provider: ProviderId, stream: bool = True
    ) -> EncodedRequest:
        """The wire request: native replay of ``provider``'s items, portable for the rest."""
        return encode(request, provider, stream)

    def new_parser(
        self, provider: ProviderId, request: ModelRequest | None = None
    ) -> ResponsesParser:
        """A parser for one streamed response to ``request``."""
        return ResponsesParser(provider, _client_tools(request))

    def parse_response(
        self, body: bytes, provider: ProviderId, request: ModelRequest | None = None
    ) -> list[Chunk]:
        """Map a non-streaming JSON response body to the same chunks a stream gives."""
        return parse_body(body, provider, _client_tools(request))

    def classify_error(self, status: int, headers: Mapping[str, str], body: bytes) -> StreamError:
        """Turn an HTTP error response into a typed error."""
        return classify_error(status, headers, body)


SHAPE = OpenAIResponsesShape()
"""The module-level shape object the provider catalog loads."""

__all__ = ["SHAPE", "OpenAIResponsesShape", "classify_error"]
