"""The logic every shape shares (elelem.shapes.common, errors.parse_retry_after),
checked once and then through each shape, so the four cannot drift apart."""

from __future__ import annotations

import importlib
from collections.abc import Callable

import msgspec
import pytest

from elelem.errors import (
    InvalidRequestError,
    MalformedStreamError,
    OverloadedError,
    RateLimitError,
    ServerError,
    http_date,
    parse_retry_after,
)
from elelem.shapes.base import FrameParser, ModelRequest, Shape
from elelem.shapes.common import (
    STATUS_ERRORS,
    Dropped,
    body_excerpt,
    decode_frame,
    error_class_for_status,
    find_payload,
    hosted_activity_line,
    malformed,
    status_error_class,
)
from elelem.shapes.gemini.interactions import InteractionsParser
from elelem.vocabulary import (
    ActivityId,
    HostedActivity,
    Message,
    ProviderId,
    ProviderPayload,
    TextBlock,
)

P = ProviderId("test")
A = ActivityId("srv_1")
SHAPES = ["anthropic_messages", "openai_responses", "openai_chat", "gemini"]


def _shape(name: str) -> Shape:
    shape: Shape = importlib.import_module(f"elelem.shapes.{name}").SHAPE
    return shape


# --------------------------------------------------------------------------
# retry hints
# --------------------------------------------------------------------------


def test_parse_retry_after_numbers() -> None:
    assert parse_retry_after({"Retry-After": "7"}) == 7.0
    assert parse_retry_after({"retry-after": " 2.5 "}) == 2.5
    assert parse_retry_after({"RETRY-AFTER-MS": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({}) is None
    assert parse_retry_after({"retry-after": "soon"}) is None


@pytest.mark.parametrize("bad", ["-1", "nan", "inf", "-inf", "", "x"])
def test_an_unreadable_value_is_passed_over(bad: str) -> None:
    assert parse_retry_after({"retry-after": bad}) is None
    # An unreadable retry-after-ms falls back to retry-after.
    assert parse_retry_after({"retry-after-ms": bad, "retry-after": "4"}) == 4.0


def test_an_http_date_needs_now() -> None:
    date = "Wed, 21 Oct 2015 07:28:10 GMT"
    assert parse_retry_after({"retry-after": date}) is None
    assert parse_retry_after({"retry-after": date}, now=1445412480.0) == 10.0
    # A date already past means: retry now.
    assert parse_retry_after({"retry-after": date}, now=1445412500.0) == 0.0
    assert parse_retry_after({"retry-after": "not a date"}, now=1445412480.0) is None


def test_http_date_reads_a_zoneless_date_as_utc() -> None:
    assert http_date("Wed, 21 Oct 2015 07:28:10 GMT") == 1445412490.0
    assert http_date("Wed, 21 Oct 2015 07:28:10 -0000") == 1445412490.0
    assert http_date("Wed, 21 Oct 2015 07:28:10 +0100") == 1445412490.0 - 3600
    assert http_date("Wed, 21 Oct 99999 07:28:10 GMT") is None
    assert http_date("") is None


@pytest.mark.parametrize("name", SHAPES)
@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "7"}, 7.0),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after-ms": "-5", "retry-after": "9"}, 9.0),
        ({"retry-after": "-1"}, None),
        # Read against the server's own Date header: a shape has no clock.
        (
            {
                "retry-after": "Wed, 21 Oct 2015 07:28:30 GMT",
                "Date": "Wed, 21 Oct 2015 07:28:00 GMT",
            },
            30.0,
        ),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:30 GMT"}, None),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:30 GMT", "date": "garbage"}, None),
    ],
)
def test_every_shape_reads_the_retry_hint_alike(
    name: str, headers: dict[str, str], expected: float | None
) -> None:
    error = _shape(name).classify_error(429, headers, b"")
    assert type(error) is RateLimitError
    assert error.retry_after == expected


# --------------------------------------------------------------------------
# status -> error class
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", SHAPES)
@pytest.mark.parametrize("status", sorted(STATUS_ERRORS))
def test_every_shape_maps_the_shared_statuses_alike(name: str, status: int) -> None:
    assert type(_shape(name).classify_error(status, {}, b"")) is STATUS_ERRORS[status]


@pytest.mark.parametrize(
    ("name", "status", "cls"),
    [
        ("anthropic_messages", 529, OverloadedError),
        ("anthropic_messages", 503, ServerError),
        ("gemini", 503, OverloadedError),
        ("gemini", 529, ServerError),
        ("openai_responses", 529, ServerError),
        ("openai_responses", 418, InvalidRequestError),
        ("anthropic_messages", 418, InvalidRequestError),
        ("gemini", 418, InvalidRequestError),
    ],
)
def test_statuses_a_shape_reads_its_own_way(name: str, status: int, cls: type) -> None:
    assert type(_shape(name).classify_error(status, {}, b"")) is cls


def test_status_error_class_overrides_and_fallback() -> None:
    assert status_error_class(429) is RateLimitError
    assert status_error_class(529) is None
    assert status_error_class(529, {529: OverloadedError}) is OverloadedError
    assert status_error_class(400, {400: ServerError}) is ServerError
    assert error_class_for_status(502) is ServerError
    assert error_class_for_status(409) is InvalidRequestError
    assert error_class_for_status(503, {503: OverloadedError}) is OverloadedError


# --------------------------------------------------------------------------
# frame decoding
# --------------------------------------------------------------------------


def test_decode_frame_gives_the_object() -> None:
    assert decode_frame('{"type": "ping", "n": [1]}', "x") == {"type": "ping", "n": [1]}


def test_a_frame_that_is_not_json_is_malformed_and_retryable() -> None:
    with pytest.raises(MalformedStreamError) as info:
        decode_frame('{"type": oops', "anthropic delta")
    assert info.value.message.startswith("anthropic delta data is not JSON: ")
    assert info.value.retryable is True and info.value.body == b'{"type": oops'


def test_a_frame_that_is_json_but_no_object_is_not_retryable() -> None:
    with pytest.raises(MalformedStreamError) as info:
        decode_frame("[1, 2]", "gemini frame")
    assert info.value.message == "gemini frame data is not a JSON object"
    assert info.value.retryable is False and info.value.body == b"[1,2]"


def test_malformed_keeps_its_data_as_json() -> None:
    error = malformed("bad", {"a": 1})
    assert (error.message, error.body, error.retryable) == ("bad", b'{"a":1}', False)
    assert malformed("bare").body is None


@pytest.mark.parametrize(
    ("parser", "what"),
    [
        (lambda: _shape("anthropic_messages").new_parser(P), "anthropic message_start"),
        (lambda: _shape("gemini").new_parser(P), "gemini message_start"),
        (lambda: InteractionsParser(P), "gemini interactions message_start"),
    ],
)
def test_parsers_name_the_event_of_a_bad_frame(
    parser: Callable[[], FrameParser], what: str
) -> None:
    with pytest.raises(MalformedStreamError) as info:
        parser().message("message_start", "[1]")
    assert info.value.message == f"{what} data is not a JSON object"
    with pytest.raises(MalformedStreamError) as info:
        parser().message("", "{")
    assert info.value.message.startswith(f"{what.rsplit(' ', 1)[0]} frame data is not JSON: ")


# --------------------------------------------------------------------------
# encoders
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("activity", "line"),
    [
        (
            HostedActivity(A, "web_search", "completed", {"query": "café"}, "5 results"),
            '[hosted web_search {"query": "café"}: completed, 5 results]',
        ),
        (
            HostedActivity(A, "web_fetch", "started", {"url": "u"}),
            '[hosted web_fetch {"url": "u"}: started]',
        ),
        (
            HostedActivity(A, "code_execution", "failed", None, "exit 1"),
            "[hosted code_execution: failed, exit 1]",
        ),
    ],
)
def test_hosted_activity_line(activity: HostedActivity, line: str) -> None:
    assert hosted_activity_line(activity) == line


@pytest.mark.parametrize("name", SHAPES)
def test_every_shape_sends_a_foreign_hosted_activity_as_the_same_line(name: str) -> None:
    done = HostedActivity(A, "web_search", "completed", {"query": "q"}, "5 results")
    foreign = Message(
        role="assistant", content=(done, TextBlock("Answer")), provider=ProviderId("elsewhere")
    )
    request = ModelRequest("m", (Message.user("q"), foreign, Message.user("more")))
    body = _shape(name).encode_request(request, provider=P).body
    line = '[hosted web_search {"query": "q"}: completed, 5 results]'
    # The line as it stands inside the JSON body (quotes escaped), once.
    assert msgspec.json.encode(body).count(msgspec.json.encode(line)[1:-1]) == 1


def test_dropped_collects_where_and_what() -> None:
    dropped = Dropped()
    dropped.add("message 1 part 0", "reasoning from elsewhere")
    dropped.add("message 2", "a citation")
    assert dropped.items == ["message 1 part 0: reasoning from elsewhere", "message 2: a citation"]


def test_find_payload_matches_provider_and_format() -> None:
    first = ProviderPayload(P, "signature", None, "s1")
    payloads = (
        ProviderPayload(ProviderId("other"), "signature", None, "x"),
        ProviderPayload(P, "item", None, {}),
        first,
        ProviderPayload(P, "signature", None, "s2"),
    )
    assert find_payload(payloads, P, "signature") is first
    assert find_payload(payloads, P, "missing") is None
    assert find_payload((), P, "signature") is None


def test_body_excerpt() -> None:
    assert body_excerpt(b"  <html>Bad Gateway</html>\n") == "<html>Bad Gateway</html>"
    assert body_excerpt(b"\xff" + b"x" * 300) == "\ufffd" + "x" * 199
    assert body_excerpt(b"") == ""


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("anthropic_messages", "anthropic 502 error: <html>Bad Gateway</html>"),
        ("gemini", "gemini 502 error: <html>Bad Gateway</html>"),
        ("openai_responses", "OpenAI Responses HTTP 502: error: <html>Bad Gateway</html>"),
    ],
)
def test_a_body_without_a_message_is_quoted_stripped(name: str, message: str) -> None:
    body = b"\n<html>Bad Gateway</html>\r\n"
    error = _shape(name).classify_error(502, {}, body)
    assert type(error) is ServerError
    assert (error.message, error.body) == (message, body)
