"""The Anthropic error classifier on recorded and constructed error responses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elelem.errors import (
    AuthenticationError,
    ContextWindowError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    Patch,
    PermissionDeniedError,
    RateLimitError,
    RecoverableError,
    RequestTooLargeError,
    ServerError,
    StreamError,
)
from elelem.recordings.cassettes import load
from elelem.shapes.anthropic_messages import SHAPE
from elelem.transport.driver import stamp_error

XHIGH = (
    "pydantic__pydantic-ai/"
    "tests__models__cassettes__test_anthropic__test_anthropic_explicit_effort_xhigh_unsupported_model_errors.yaml"
)


def classify(status: int, headers: dict[str, str], raw: bytes) -> StreamError:
    """As the driver does: the shape classifies, the driver stamps what headers say."""
    return stamp_error(SHAPE.classify_error(status, headers, raw), status, headers)


def body(etype: str, message: str, request_id: str | None = "req_1") -> bytes:
    obj: dict[str, object] = {"type": "error", "error": {"type": etype, "message": message}}
    if request_id is not None:
        obj["request_id"] = request_id
    return json.dumps(obj).encode()


def test_recorded_invalid_request(corpus: Path) -> None:
    interaction = load(corpus / XHIGH).interactions[0]
    response = interaction.response
    err = classify(response.status, response.headers, response.body)
    assert type(err) is InvalidRequestError
    assert err.status == 400
    assert err.provider_type == "invalid_request_error"
    assert err.provider_message == (
        "This model does not support effort level 'xhigh'. Supported levels: high, low, max, medium."
    )
    assert err.request_id == "req_011Ca7jT9AHpgXgdv8igm4z9"
    assert err.retryable is False
    assert err.body == response.body
    assert str(err) == (
        "anthropic 400 invalid_request_error: This model does not support effort level 'xhigh'. "
        "Supported levels: high, low, max, medium."
    )


@pytest.mark.parametrize(
    ("status", "etype", "cls", "retryable"),
    [
        (401, "authentication_error", AuthenticationError, False),
        (403, "permission_error", PermissionDeniedError, False),
        (404, "not_found_error", NotFoundError, False),
        (413, "request_too_large", RequestTooLargeError, False),
        (429, "rate_limit_error", RateLimitError, True),
        (500, "api_error", ServerError, True),
        (529, "overloaded_error", OverloadedError, True),
        (400, "invalid_request_error", InvalidRequestError, False),
    ],
)
def test_status_and_type(status: int, etype: str, cls: type[StreamError], retryable: bool) -> None:
    err = classify(status, {"request-id": "req_h"}, body(etype, "msg", None))
    assert type(err) is cls
    assert (err.status, err.provider_type, err.provider_message) == (status, etype, "msg")
    assert err.retryable is retryable
    assert err.request_id == "req_h"


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, InvalidRequestError),
        (401, AuthenticationError),
        (404, NotFoundError),
        (429, RateLimitError),
        (502, ServerError),
        (503, ServerError),
        (529, OverloadedError),
        (418, InvalidRequestError),
    ],
)
def test_status_alone_when_the_body_is_not_json(status: int, cls: type[StreamError]) -> None:
    err = classify(status, {}, b"<html>Bad Gateway</html>")
    assert type(err) is cls
    assert err.provider_type is None
    assert str(err) == f"anthropic {status} error: <html>Bad Gateway</html>"


def test_rate_limit_retry_after_seconds_and_ms() -> None:
    err = classify(429, {"Retry-After": "7"}, body("rate_limit_error", "slow down"))
    assert type(err) is RateLimitError
    assert (err.retry_after, err.retryable) == (7.0, True)
    err = classify(
        429, {"retry-after-ms": "1500", "retry-after": "2"}, body("rate_limit_error", "x")
    )
    assert err.retry_after == 1.5
    # An HTTP-date is read against the response's own Date header.
    dated = {
        "retry-after": "Wed, 21 Oct 2026 07:28:10 GMT",
        "Date": "Wed, 21 Oct 2026 07:28:00 GMT",
    }
    err = classify(429, dated, body("rate_limit_error", "x"))
    assert err.retry_after == 10.0


def test_x_should_retry_overrides_the_default() -> None:
    err = classify(500, {"x-should-retry": "false"}, body("api_error", "x"))
    assert (type(err), err.retryable) == (ServerError, False)
    err = classify(409, {"x-should-retry": "true"}, b"{}")
    assert err.retryable is True


def test_invalid_thinking_signature_is_recoverable_with_a_patch() -> None:
    message = "messages.1.content.0: Invalid `signature` in `thinking` block"
    err = classify(400, {}, body("invalid_request_error", message, "req_s"))
    assert type(err) is RecoverableError
    assert err.patches == (
        Patch("strip-signature", target={"message": 1, "block": 0}, reason=message),
    )
    assert (err.status, err.provider_type, err.request_id, err.retryable) == (
        400,
        "invalid_request_error",
        "req_s",
        True,
    )


def test_signature_rejection_without_a_location_still_patches() -> None:
    err = classify(400, {}, body("invalid_request_error", "Invalid signature in thinking block"))
    assert isinstance(err, RecoverableError)
    assert err.patches[0].action == "strip-signature"
    assert dict(err.patches[0].target) == {}


@pytest.mark.parametrize(
    "message",
    [
        "prompt is too long: 208310 tokens > 200000 maximum",
        "input length and `max_tokens` exceed context limit: 195000 + 8192 > 200000",
    ],
)
def test_context_window(message: str) -> None:
    err = classify(400, {}, body("invalid_request_error", message))
    assert type(err) is ContextWindowError
    assert isinstance(err, InvalidRequestError)
    assert err.provider_message == message


def test_body_is_size_bounded() -> None:
    big = body("api_error", "x" * 200_000)
    err = classify(500, {}, big)
    assert err.body is not None
    assert len(err.body) == 64 * 1024
