"""Gemini error classifier: Google error bodies -> typed errors, exact fields."""

from __future__ import annotations

import json
from typing import Any

import pytest

from elelem.errors import (
    AuthenticationError,
    ContextWindowError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    RateLimitError,
    RecoverableError,
    ServerError,
    StreamError,
)
from elelem.shapes.gemini import SHAPE
from elelem.transport.driver import stamp_error
from elelem.vocabulary import ProviderId


def _body(code: int, status: str, message: str, details: list[Any] | None = None) -> bytes:
    error: dict[str, Any] = {"code": code, "message": message, "status": status}
    if details is not None:
        error["details"] = details
    return json.dumps({"error": error}).encode()


def test_resource_exhausted_carries_the_retry_delay() -> None:
    details = [
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "57s"},
    ]
    body = _body(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota.", details)
    error = SHAPE.classify_error(429, {"retry-after": "3"}, body)
    assert isinstance(error, RateLimitError)
    assert (error.kind, error.retryable, error.retry_after, error.status) == (
        "rate-limit",
        True,
        57.0,
        429,
    )
    assert (error.provider_type, error.provider_message) == (
        "RESOURCE_EXHAUSTED",
        "You exceeded your current quota.",
    )
    assert error.message == "gemini 429 RESOURCE_EXHAUSTED: You exceeded your current quota."
    assert error.body == body


def test_retry_after_header_when_the_body_has_no_delay() -> None:
    # The shape states no delay; the driver stamps the header's.
    headers = {"Retry-After": "7"}
    error = SHAPE.classify_error(429, headers, _body(429, "RESOURCE_EXHAUSTED", "slow"))
    assert error.retry_after is None
    assert stamp_error(error, 429, headers).retry_after == 7.0


@pytest.mark.parametrize(
    ("status", "gstatus", "cls", "retryable"),
    [
        (400, "INVALID_ARGUMENT", InvalidRequestError, False),
        (400, "FAILED_PRECONDITION", InvalidRequestError, False),
        (401, "UNAUTHENTICATED", AuthenticationError, False),
        (403, "PERMISSION_DENIED", PermissionDeniedError, False),
        (404, "NOT_FOUND", NotFoundError, False),
        (503, "UNAVAILABLE", OverloadedError, True),
        (500, "INTERNAL", ServerError, True),
        (504, "DEADLINE_EXCEEDED", ServerError, True),
    ],
)
def test_google_statuses(
    status: int, gstatus: str, cls: type[StreamError], retryable: bool
) -> None:
    error = SHAPE.classify_error(status, {}, _body(status, gstatus, "msg"))
    assert type(error) is cls
    assert (error.retryable, error.provider_type, error.status) == (retryable, gstatus, status)


def test_an_invalid_api_key_is_an_authentication_error_despite_its_400() -> None:
    details = [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "API_KEY_INVALID",
            "domain": "googleapis.com",
        }
    ]
    body = _body(
        400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", details
    )
    error = SHAPE.classify_error(400, {}, body)
    assert type(error) is AuthenticationError
    assert error.retryable is False


def test_a_prompt_over_the_context_window() -> None:
    message = (
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
    )
    error = SHAPE.classify_error(400, {}, _body(400, "INVALID_ARGUMENT", message))
    assert type(error) is ContextWindowError


def test_a_rejected_thought_signature_asks_to_strip_it() -> None:
    message = "Thought signature is not valid at contents[3].parts[1]."
    error = SHAPE.classify_error(400, {}, _body(400, "INVALID_ARGUMENT", message))
    assert isinstance(error, RecoverableError)
    (patch,) = error.patches
    assert (patch.action, dict(patch.target), patch.reason) == (
        "strip-signature",
        {"message": 3, "block": 1},
        message,
    )


def test_a_list_wrapped_body_is_read() -> None:
    body = json.dumps([{"error": {"code": 404, "message": "no model", "status": "NOT_FOUND"}}])
    error = SHAPE.classify_error(404, {}, body.encode())
    assert type(error) is NotFoundError and error.provider_message == "no model"


@pytest.mark.parametrize(
    ("status", "cls"),
    [(400, InvalidRequestError), (429, RateLimitError), (502, ServerError), (503, OverloadedError)],
)
def test_a_body_that_is_not_json_falls_back_to_the_http_status(
    status: int, cls: type[StreamError]
) -> None:
    error = SHAPE.classify_error(status, {}, b"<html>Bad Gateway</html>")
    assert type(error) is cls
    assert error.message == f"gemini {status} error: <html>Bad Gateway</html>"
    assert error.provider_type is None


def test_an_error_body_in_a_non_streaming_response_raises_its_error() -> None:
    with pytest.raises(OverloadedError, match="gemini 503 UNAVAILABLE: busy"):
        SHAPE.parse_response(_body(503, "UNAVAILABLE", "busy"), ProviderId("google"))
