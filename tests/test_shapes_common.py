"""The logic every shape shares (elelem.shapes.common, elelem.shapes.skeleton,
errors.parse_retry_after), checked once and then through each of the six
catalog shapes, so they cannot drift apart."""

from __future__ import annotations

import asyncio
import importlib
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

import msgspec
import pytest

from elelem.errors import (
    ContextWindowError,
    IncompleteStreamError,
    InvalidRequestError,
    MalformedStreamError,
    OverloadedError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    StreamError,
    http_date,
    parse_retry_after,
)
from elelem.shapes.common import (
    STATUS_ERRORS,
    body_excerpt,
    decode_frame,
    error_class_for_status,
    find_payload,
    hosted_activity_line,
    malformed,
    status_error_class,
)
from elelem.shapes.gemini_interactions import InteractionsParser
from elelem.stream import AssembledResponse, Assembler, Chunk, Finish, assemble
from elelem.testing.servers import LoopbackServer, Reply, Send
from elelem.transport import Driver, Endpoint, ResponseStream
from elelem.transport.driver import stamp_error
from elelem.vocabulary import (
    ActivityId,
    HostedActivity,
    Message,
    ProviderId,
    ProviderPayload,
    TextBlock,
    UnknownBlock,
)
from elelem.vocabulary.drop import UNREPLAYABLE, Drop
from elelem.wire import FrameParser, ModelRequest, Shape

P = ProviderId("test")
A = ActivityId("srv_1")
ALL_SHAPES = [
    "anthropic_messages",
    "openai_responses",
    "openai_chat",
    "gemini",
    "bedrock_converse",
    "ollama_native",
]


def _shape(name: str) -> Shape:
    """The catalog's shape value."""
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


@pytest.mark.parametrize("name", ALL_SHAPES)
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
        # Without a readable Date, against the local clock: long past, so now.
        ({"retry-after": "Wed, 21 Oct 2015 07:28:30 GMT"}, 0.0),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:30 GMT", "date": "garbage"}, 0.0),
    ],
)
def test_every_shape_reads_the_retry_hint_alike(
    name: str, headers: dict[str, str], expected: float | None
) -> None:
    # The shape classifies; the driver stamps the hint, once, for every shape.
    error = stamp_error(_shape(name).classify_error(429, headers, b""), 429, headers)
    assert type(error) is RateLimitError
    assert error.retry_after == expected


# --------------------------------------------------------------------------
# status -> error class
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL_SHAPES)
@pytest.mark.parametrize("status", sorted(STATUS_ERRORS))
def test_every_shape_maps_the_shared_statuses_alike(name: str, status: int) -> None:
    assert type(_shape(name).classify_error(status, {}, b"")) is STATUS_ERRORS[status]


@pytest.mark.parametrize(
    ("name", "status", "cls"),
    [
        ("anthropic_messages", 529, OverloadedError),
        ("anthropic_messages", 503, ServerError),
        ("gemini", 503, OverloadedError),
        ("openai_chat", 408, ServerError),
        ("openai_chat", 402, PermissionDeniedError),
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


@pytest.mark.parametrize("name", ALL_SHAPES)
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


@pytest.mark.parametrize("name", ALL_SHAPES)
def test_a_body_without_a_message_is_quoted_stripped(name: str) -> None:
    body = b"\n<html>Bad Gateway</html>\r\n"
    error = _shape(name).classify_error(502, {}, body)
    assert type(error) is ServerError
    provider = PROVIDER_WORDS[name]
    assert (error.message, error.body) == (f"{provider} 502 error: <html>Bad Gateway</html>", body)


PROVIDER_WORDS = {
    "anthropic_messages": "anthropic",
    "openai_responses": "openai",
    "openai_chat": "chat",
    "gemini": "gemini",
    "bedrock_converse": "bedrock",
    "ollama_native": "ollama",
}
"""The first word of every error message of each shape."""

RATE_LIMITED: dict[str, tuple[dict[str, str], dict[str, object], str]] = {
    "anthropic_messages": (
        {},
        {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}},
        "rate_limit_error",
    ),
    "openai_responses": (
        {},
        {"error": {"type": "requests", "code": "rate_limit_exceeded", "message": "Slow down"}},
        "rate_limit_exceeded",
    ),
    "openai_chat": (
        {},
        {"error": {"type": "rate_limit_error", "message": "Slow down"}},
        "rate_limit_error",
    ),
    "gemini": (
        {},
        {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "Slow down"}},
        "RESOURCE_EXHAUSTED",
    ),
    "bedrock_converse": (
        {"x-amzn-ErrorType": "ThrottlingException:http://internal.amazon.com/coral/"},
        {"message": "Slow down"},
        "ThrottlingException",
    ),
    "ollama_native": ({}, {"error": "Slow down"}, "error"),
}
"""Per shape: a 429 as its provider sends it (headers, body) and the error type it names."""


@pytest.mark.parametrize("name", ALL_SHAPES)
def test_every_shape_summarizes_an_error_in_one_format(name: str) -> None:
    headers, body, etype = RATE_LIMITED[name]
    raw = json.dumps(body).encode()
    error = _shape(name).classify_error(429, headers, raw)
    assert type(error) is RateLimitError and error.retryable is True
    assert error.message == f"{PROVIDER_WORDS[name]} 429 {etype}: Slow down"
    assert (error.status, error.body, error.provider_message) == (429, raw, "Slow down")
    assert error.provider_type == (None if etype == "error" else etype)


MESSAGE_ONLY = {
    "anthropic_messages": lambda m: {"type": "error", "error": {"message": m}},
    "openai_responses": lambda m: {"error": {"message": m}},
    "openai_chat": lambda m: {"error": {"message": m}},
    "gemini": lambda m: {"error": {"message": m}},
    "bedrock_converse": lambda m: {"message": m},
    "ollama_native": lambda m: {"error": m},
}
"""Per shape: an error body holding only a message, as its provider words it."""


@pytest.mark.parametrize("name", ALL_SHAPES)
def test_529_and_a_503_saying_overloaded_are_overloaded_everywhere(name: str) -> None:
    shape = _shape(name)
    assert type(shape.classify_error(529, {}, b"")) is OverloadedError
    body = json.dumps(MESSAGE_ONLY[name]("The server is overloaded")).encode()
    error = shape.classify_error(503, {}, body)
    assert type(error) is OverloadedError
    assert error.message == f"{PROVIDER_WORDS[name]} 503 error: The server is overloaded"
    # A 503 that says nothing of load is a server error (Google's 503 always means load).
    plain = shape.classify_error(503, {}, json.dumps(MESSAGE_ONLY[name]("down")).encode())
    assert type(plain) is (OverloadedError if name == "gemini" else ServerError)


@pytest.mark.parametrize("name", ALL_SHAPES)
def test_a_prompt_over_the_context_window_is_one_error_everywhere(name: str) -> None:
    wording = {
        "anthropic_messages": "prompt is too long: 210000 tokens > 200000 maximum",
        "openai_responses": "This model's maximum context length is 128000 tokens",
        "openai_chat": "This model's maximum context length is 8192 tokens",
        "gemini": "The input token count (1200000) exceeds the maximum number of tokens allowed",
        "bedrock_converse": "Input is too long for requested model.",
        "ollama_native": "the input length exceeds the context length",
    }[name]
    body = json.dumps(MESSAGE_ONLY[name](wording)).encode()
    headers = {"x-amzn-ErrorType": "ValidationException"} if name == "bedrock_converse" else {}
    error = _shape(name).classify_error(400, headers, body)
    assert type(error) is ContextWindowError and error.retryable is False
    assert error.provider_message == wording


@pytest.mark.parametrize("name", ALL_SHAPES)
def test_the_driver_stamps_the_request_id_once(name: str) -> None:
    headers = {"X-Request-Id": "req_header"}
    error = stamp_error(_shape(name).classify_error(500, headers, b"oops"), 500, headers)
    assert error.request_id == "req_header"
    # A request id the body states is the body's.
    body = (
        b'{"type": "error", "error": {"type": "api_error", "message": "x"}, "request_id": "req_b"}'
    )
    kept = stamp_error(
        _shape("anthropic_messages").classify_error(500, headers, body), 500, headers
    )
    assert kept.request_id == "req_b"


# --------------------------------------------------------------------------
# the skeleton's contracts, one case each, over every catalog shape
# --------------------------------------------------------------------------

Frame = tuple[str, str]


def _frame(event: str, obj: dict[str, Any]) -> Frame:
    return event, json.dumps(obj)


def _anthropic(*, unknown: bool, reason: str | None, terminal: bool) -> list[Frame]:
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 5, "output_tokens": 0},
    }
    frames = [
        _frame("message_start", {"type": "message_start", "message": message}),
        _frame(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        _frame(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "Hi"},
            },
        ),
    ]
    if unknown:
        frames.append(_frame("brand_new", {"type": "brand_new", "n": 1}))
    frames.append(_frame("content_block_stop", {"type": "content_block_stop", "index": 0}))
    delta = {} if reason is None else {"stop_reason": reason}
    frames.append(
        _frame(
            "message_delta",
            {"type": "message_delta", "delta": delta, "usage": {"output_tokens": 3}},
        )
    )
    if terminal:
        frames.append(_frame("message_stop", {"type": "message_stop"}))
    return frames


def _responses(*, unknown: bool, reason: str | None, terminal: bool) -> list[Frame]:
    item = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "in_progress",
        "content": [],
    }
    part = {"type": "output_text", "text": "", "annotations": []}
    at = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    done_item = {**item, "status": "completed", "content": [{**part, "text": "Hi"}]}
    response = {
        "id": "resp_1",
        "object": "response",
        "model": "m",
        "status": "in_progress",
        "output": [],
    }
    frames = [
        _frame("response.created", {"type": "response.created", "response": response}),
        _frame(
            "response.output_item.added",
            {"type": "response.output_item.added", "output_index": 0, "item": item},
        ),
        _frame(
            "response.content_part.added",
            {"type": "response.content_part.added", **at, "part": part},
        ),
        _frame(
            "response.output_text.delta",
            {"type": "response.output_text.delta", **at, "delta": "Hi"},
        ),
    ]
    if unknown:
        frames.append(_frame("response.brand_new", {"type": "response.brand_new", "n": 1}))
    frames.append(
        _frame(
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": 0, "item": done_item},
        )
    )
    final = {
        **response,
        "output": [done_item],
        "usage": {"input_tokens": 5, "output_tokens": 3, "total_tokens": 8},
    }
    final.pop("status")
    if reason is not None:
        final["status"] = reason
    if terminal:
        frames.append(
            _frame("response.completed", {"type": "response.completed", "response": final})
        )
    return frames


def _chat(*, unknown: bool, reason: str | None, terminal: bool) -> list[Frame]:
    head = {"id": "c1", "object": "chat.completion.chunk", "model": "m"}
    delta: dict[str, Any] = {"role": "assistant", "content": "Hi"}
    if unknown:
        delta["brand_new"] = {"n": 1}
    usage = {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}
    frames = [_frame("", {**head, "choices": [{"index": 0, "delta": delta}]})]
    if terminal:  # the finish reason is the terminal event; [DONE] the end marker
        last = {"index": 0, "delta": {}, "finish_reason": reason}
        frames.append(_frame("", {**head, "choices": [last]}))
    frames.append(_frame("", {**head, "choices": [], "usage": usage}))
    if terminal:
        frames.append(("", "[DONE]"))
    return frames


def _gemini(*, unknown: bool, reason: str | None, terminal: bool) -> list[Frame]:
    usage = {"promptTokenCount": 5, "candidatesTokenCount": 3, "totalTokenCount": 8}
    parts: list[dict[str, Any]] = [{"text": "Hi"}]
    if unknown:
        parts.append({"brandNew": {"n": 1}})
    last: dict[str, Any] = {"content": {"parts": [{"text": ""}], "role": "model"}, "index": 0}
    if reason is not None:
        last["finishReason"] = reason
    frames = [
        _frame(
            "",
            {
                "candidates": [{"content": {"parts": parts, "role": "model"}, "index": 0}],
                "usageMetadata": usage,
                "modelVersion": "m",
                "responseId": "r1",
            },
        ),
    ]
    if terminal:  # Gemini's terminal event is the chunk with the finish reason
        frames.append(
            _frame(
                "",
                {
                    "candidates": [last],
                    "usageMetadata": usage,
                    "modelVersion": "m",
                    "responseId": "r1",
                },
            )
        )
    return frames


def _bedrock(*, unknown: bool, reason: str | None, terminal: bool) -> list[Frame]:
    frames = [
        _frame("", {"messageStart": {"role": "assistant"}}),
        _frame("", {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "Hi"}}}),
    ]
    if unknown:
        frames.append(_frame("", {"brandNew": {"n": 1}}))
    frames.append(_frame("", {"contentBlockStop": {"contentBlockIndex": 0}}))
    stop = {} if reason is None else {"stopReason": reason}
    if terminal:
        frames.append(_frame("", {"messageStop": stop}))
        usage = {"inputTokens": 5, "outputTokens": 3, "totalTokens": 8}
        frames.append(_frame("", {"metadata": {"usage": usage}}))
    return frames


def _ollama(*, unknown: bool, reason: str | None, terminal: bool) -> list[Frame]:
    message: dict[str, Any] = {"role": "assistant", "content": "Hi"}
    if unknown:
        message["brand_new"] = {"n": 1}
    frames = [_frame("", {"model": "m", "created_at": "t", "message": message, "done": False})]
    last: dict[str, Any] = {
        "model": "m",
        "created_at": "t",
        "message": {"role": "assistant", "content": ""},
        "done": True,
        "prompt_eval_count": 5,
        "eval_count": 3,
    }
    if reason is not None:
        last["done_reason"] = reason
    if terminal:
        frames.append(_frame("", last))
    return frames


WIRES: dict[str, tuple[Callable[..., list[Frame]], str]] = {
    "anthropic_messages": (_anthropic, "end_turn"),
    "openai_responses": (_responses, "completed"),
    "openai_chat": (_chat, "stop"),
    "gemini": (_gemini, "STOP"),
    "bedrock_converse": (_bedrock, "end_turn"),
    "ollama_native": (_ollama, "stop"),
}
"""Per shape: a stream of one text block "Hi" (5 tokens in, 3 out), and its stop reason."""

UNKNOWN_KEPT: dict[str, dict[str, Any]] = {
    "anthropic_messages": {
        "type": "anthropic.event",
        "event": "brand_new",
        "value": {"type": "brand_new", "n": 1},
    },
    "openai_responses": {
        "type": "openai_responses.event",
        "event": "response.brand_new",
        "value": {"type": "response.brand_new", "n": 1},
    },
    "openai_chat": {"type": "openai_chat.field", "field": "brand_new", "value": {"n": 1}},
    "gemini": {"type": "brandNew", "part": {"brandNew": {"n": 1}}},
    "bedrock_converse": {"type": "bedrock.event", "event": "brandNew", "value": {"n": 1}},
    "ollama_native": {"type": "ollama.field", "field": "brand_new", "value": {"n": 1}},
}
"""The raw JSON each shape keeps for the unknown event, delta field or part."""


def _parse(name: str, frames: list[Frame]) -> tuple[list[Chunk], Sequence[Chunk]]:
    parser = _shape(name).new_parser(P)
    chunks: list[Chunk] = list(parser.open(200, {}))
    for event, data in frames:
        chunks += parser.message(event, data)
    return chunks, parser.eof()


def _texts(content: Sequence[object]) -> list[str]:
    return [p.text for p in content if isinstance(p, TextBlock)]


@pytest.mark.parametrize("name", ALL_SHAPES)
def test_every_shape_parses_the_plain_stream(name: str) -> None:
    wire, reason = WIRES[name]
    chunks, tail = _parse(name, wire(unknown=False, reason=reason, terminal=True))
    result = assemble([*chunks, *tail], P)
    assert _texts(result.content) == ["Hi"]
    assert result.finish is not None and result.finish.reason == "stop"
    assert result.usage is not None and (result.usage.input, result.usage.output) == (5, 3)


@pytest.mark.parametrize("name", ALL_SHAPES)
def test_an_unknown_event_delta_or_part_is_kept_with_its_raw_json(name: str) -> None:
    wire, reason = WIRES[name]
    chunks, tail = _parse(name, wire(unknown=True, reason=reason, terminal=True))
    result = assemble([*chunks, *tail], P)
    unknown = [p for p in result.content if isinstance(p, UnknownBlock)]
    assert [u.raw for u in unknown] == [UNKNOWN_KEPT[name]]
    assert _texts(result.content) == ["Hi"]
    assert result.finish is not None and result.finish.reason == "stop"


@pytest.mark.parametrize("name", ALL_SHAPES)
def test_eof_without_the_terminal_event_gives_no_finish_and_keeps_the_partial(name: str) -> None:
    wire, reason = WIRES[name]
    chunks, tail = _parse(name, wire(unknown=False, reason=reason, terminal=False))
    assert not any(isinstance(c, Finish) for c in [*chunks, *tail])
    assembler = Assembler(P)
    assembler.feed_all([*chunks, *tail])
    partial = assembler.partial()
    assert _texts(partial.content) == ["Hi"] and partial.complete is False


@pytest.mark.parametrize("name", ALL_SHAPES)
def test_eof_without_the_terminal_event_is_the_drivers_retryable_error(name: str) -> None:
    wire, reason = WIRES[name]
    frames = wire(unknown=False, reason=reason, terminal=False)
    shape = _shape(name)
    if name == "ollama_native":
        body = "".join(data + "\n" for _, data in frames).encode()
        content_type = "application/x-ndjson"
    else:
        body = "".join(f"data: {data}\n\n" for _, data in frames).encode()
        content_type = "text/event-stream"
    reply = Reply(200, {"content-type": content_type}, (Send(body),))

    async def main() -> tuple[StreamError, AssembledResponse]:
        with LoopbackServer([reply]) as server:
            driver = Driver()
            endpoint = Endpoint(P, server.url, api_key="sk-loopback-1")
            stream = ResponseStream(
                driver, endpoint, shape, ModelRequest("m", ()), timeouts=driver.timeouts
            )
            try:
                async with stream:
                    await stream.final()
            except StreamError as exc:
                return exc, stream.partial()
            finally:
                await driver.aclose()
        raise AssertionError("the stream finished")

    error, partial = asyncio.run(main())
    assert type(error) is IncompleteStreamError and error.retryable is True
    assert error.message == f"the stream ended after {len(body)} bytes without a terminal event"
    assert _texts(partial.content) == ["Hi"]


@pytest.mark.parametrize("name", ALL_SHAPES)
def test_an_end_marker_without_a_finish_reason_finishes_unknown_keeping_all(name: str) -> None:
    wire, _ = WIRES[name]
    frames = wire(unknown=False, reason=None, terminal=True)
    if name == "gemini":
        # Gemini's end marker is the finish reason itself: its whole body ends there.
        body = json.dumps([json.loads(data) for _, data in frames]).encode()
        chunks = _shape(name).parse_response(body, P)
    else:
        head, tail = _parse(name, frames)
        chunks = [*head, *tail]
    result = assemble(chunks, P)
    assert result.finish is not None
    assert (result.finish.reason, result.finish.raw) == ("unknown", None)
    assert _texts(result.content) == ["Hi"]
    assert result.usage is not None and (result.usage.input, result.usage.output) == (5, 3)


@pytest.mark.parametrize("name", ALL_SHAPES)
@pytest.mark.parametrize("body", [b"<html>Bad Gateway</html>", b'{"cut": ', b"\xff\xfe"])
def test_a_whole_body_that_is_not_json_is_one_retryable_error(name: str, body: bytes) -> None:
    with pytest.raises(MalformedStreamError) as info:
        _shape(name).parse_response(body, P)
    assert info.value.retryable is True and info.value.body == body
    assert re.fullmatch(r"\S.* response body is not (JSON: .*|valid UTF-8 .*)", info.value.message)


@pytest.mark.parametrize("name", ALL_SHAPES)
def test_a_whole_body_that_is_json_but_no_object_is_not_retryable(name: str) -> None:
    with pytest.raises(MalformedStreamError) as info:
        _shape(name).parse_response(b'"text"', P)
    assert info.value.retryable is False
    assert info.value.message.endswith("is not a JSON object")


@pytest.mark.parametrize("name", ALL_SHAPES)
def test_a_frame_after_the_finish_is_malformed(name: str) -> None:
    wire, reason = WIRES[name]
    frames = wire(unknown=False, reason=reason, terminal=True)
    parser = _shape(name).new_parser(P)
    chunks = [c for event, data in frames for c in parser.message(event, data)]
    chunks += parser.eof()
    assert isinstance(chunks[-1], Finish)
    with pytest.raises(MalformedStreamError) as info:
        parser.message(*frames[-1])
    assert info.value.retryable is False
    assert info.value.message.endswith(
        f"frame {len(frames) + 1} arrived after the response finished"
    )


def test_an_unknown_anthropic_event_is_kept_but_not_replayed_as_content() -> None:
    wire, reason = WIRES["anthropic_messages"]
    chunks, tail = _parse("anthropic_messages", wire(unknown=True, reason=reason, terminal=True))
    result = assemble([*chunks, *tail], P)
    message = Message("assistant", result.content, provider=P, model="m")
    request = ModelRequest("m", (Message.user("q"), message, Message.user("more")))
    encoded = _shape("anthropic_messages").encode_request(request, provider=P)
    assert encoded.body["messages"][1]["content"] == [{"type": "text", "text": "Hi"}]  # type: ignore[index]
    assert encoded.dropped == (
        Drop(
            "messages[1].content[0]",
            "anthropic.event",
            UNREPLAYABLE,
            "'brand_new': a stream event, not content",
        ),
    )
