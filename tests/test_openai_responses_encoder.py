"""The OpenAI Responses request encoder and HTTP error classifier."""

from __future__ import annotations

import json

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
    RequestTooLargeError,
    ServerError,
)
from elelem.shapes.openai_responses import SHAPE
from elelem.transport.driver import stamp_error
from elelem.vocabulary import (
    ActivityId,
    Attribution,
    CallId,
    CodeExecution,
    GenerationOptions,
    HostedActivity,
    Message,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    ReasoningOptions,
    Source,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolSpec,
    UnknownBlock,
    UserLocation,
    WebFetch,
    WebSearch,
)
from elelem.vocabulary.drop import (
    FOREIGN_BLOCK,
    FOREIGN_PAYLOAD,
    FOREIGN_REASONING,
    UNSUPPORTED,
    Drop,
)
from elelem.wire import ModelRequest

OPENAI = ProviderId("openai")
ANTHROPIC = ProviderId("anthropic")


def _encode(*messages: Message, **kwargs: object) -> tuple[dict[str, object], tuple[str, ...]]:
    request = ModelRequest(model="gpt-5", messages=messages, **kwargs)  # type: ignore[arg-type]
    encoded = SHAPE.encode_request(request, provider=OPENAI)
    assert encoded.path == "responses"
    assert encoded.method == "POST" and encoded.stream is True
    return encoded.body, encoded.dropped


def _part(item_id: str, text: str) -> ProviderPayload:
    shell = {
        "id": item_id,
        "type": "message",
        "status": "completed",
        "content": [],
        "role": "assistant",
    }
    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": text}
    return ProviderPayload(OPENAI, "message-part", None, {"item": shell, "part": part})


def test_minimal_request_body() -> None:
    body, dropped = _encode(Message.user("hi"), system="Be brief.")
    assert body == {
        "model": "gpt-5",
        "instructions": "Be brief.",
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
        ],
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "stream": True,
    }
    assert dropped == ()


def test_native_text_parts_regroup_into_their_message_item() -> None:
    reasoning_item = {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "e"}
    assistant = Message(
        role="assistant",
        content=(
            ReasoningBlock("", (ProviderPayload(OPENAI, "item", None, reasoning_item),)),
            TextBlock("one", payloads=(_part("msg_1", "one"),)),
            TextBlock("two", payloads=(_part("msg_1", "two"),)),
            TextBlock("three", payloads=(_part("msg_2", "three"),)),
        ),
        provider=OPENAI,
    )
    body, dropped = _encode(Message.user("q"), assistant)
    items = body["input"]
    assert isinstance(items, list)
    assert items[1] == reasoning_item
    assert [i["id"] for i in items[2:]] == ["msg_1", "msg_2"]
    assert [p["text"] for p in items[2]["content"]] == ["one", "two"]
    assert items[2]["status"] == "completed" and items[2]["role"] == "assistant"
    assert dropped == ()


def test_portable_encoding_of_a_foreign_assistant_message() -> None:
    foreign = Message(
        role="assistant",
        content=(
            ReasoningBlock("thinking", (ProviderPayload(ANTHROPIC, "signature", None, "sig"),)),
            HostedActivity(ActivityId("srv_1"), "web_search", "started", {"query": "q"}),
            HostedActivity(
                ActivityId("srv_1"), "web_search", "completed", {"query": "q"}, "5 results"
            ),
            TextBlock(
                "It rains.",
                (Attribution(Source("https://w.example", "W")),),
                (ProviderPayload(ANTHROPIC, "x", None, 1),),
            ),
            ToolCallBlock(CallId("toolu_1"), "lookup", '{"a":1}'),
            UnknownBlock({"type": "container_upload", "file_id": "f"}),
        ),
        provider=ANTHROPIC,
    )
    result = Message(
        role="user", content=(ToolResultBlock(CallId("toolu_1"), "42"),), source="tool"
    )
    body, dropped = _encode(Message.user("q"), foreign, result)
    assert body["input"] == [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "q"}]},
        {
            "type": "message",
            "role": "assistant",
            "content": '[hosted web_search {"query": "q"}: completed, 5 results]',
        },
        {
            "type": "message",
            "role": "assistant",
            "content": "It rains.\n\nSources:\n[1] W <https://w.example>",
        },
        {"type": "function_call", "call_id": "toolu_1", "name": "lookup", "arguments": '{"a":1}'},
        {"type": "function_call_output", "call_id": "toolu_1", "output": "42"},
    ]
    assert dropped == (
        Drop("messages[1].content[0]", "reasoning", FOREIGN_REASONING, "from anthropic"),
        Drop("messages[1].content[3]", "payload", FOREIGN_PAYLOAD, "anthropic x"),
        Drop("messages[1].content[5]", "container_upload", FOREIGN_BLOCK, "from anthropic"),
    )


def test_context_messages_are_tagged_envelopes() -> None:
    body, _ = _encode(Message.context("today is Monday", tag="reminder"))
    assert body["input"] == [
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "<reminder>\ntoday is Monday\n</reminder>"}],
        }
    ]


def test_tools_hosted_tools_and_options() -> None:
    body, dropped = _encode(
        Message.user("q"),
        tools=(ToolSpec("get", "Get a thing", {"type": "object", "properties": {}}),),
        hosted_tools=(
            WebSearch(
                max_uses=3,
                allowed_domains=("a.org",),
                blocked_domains=("b.org",),
                user_location=UserLocation(country="US", city="SF"),
            ),
            CodeExecution(),
            WebFetch(),
        ),
        options=GenerationOptions(
            max_tokens=500,
            temperature=0.5,
            top_p=0.9,
            stop=("END",),
            reasoning=ReasoningOptions(effort="low"),
            tool_choice="get",
            extra={"service_tier": "flex", "store": True},
        ),
    )
    assert body["tools"] == [
        {
            "type": "function",
            "name": "get",
            "description": "Get a thing",
            "parameters": {"type": "object", "properties": {}},
        },
        {
            "type": "web_search",
            "filters": {"allowed_domains": ["a.org"]},
            "user_location": {"type": "approximate", "city": "SF", "country": "US"},
        },
        {"type": "code_interpreter", "container": {"type": "auto"}},
    ]
    assert (body["max_output_tokens"], body["temperature"], body["top_p"]) == (500, 0.5, 0.9)
    assert body["reasoning"] == {"effort": "low", "summary": "auto"}
    assert body["tool_choice"] == {"type": "function", "name": "get"}
    assert (body["service_tier"], body["store"]) == ("flex", True)
    assert dropped == (
        Drop(
            "hosted_tools[0].max_uses",
            "max_uses",
            UNSUPPORTED,
            "Responses has no per-tool use limit",
        ),
        Drop(
            "hosted_tools[0].blocked_domains",
            "blocked_domains",
            UNSUPPORTED,
            "Responses web search has no blocklist",
        ),
        Drop(
            "hosted_tools[2]", "web_fetch", UNSUPPORTED, "OpenAI Responses has no hosted web_fetch"
        ),
        Drop("options.stop", "stop", UNSUPPORTED, "OpenAI Responses has no stop parameter"),
    )


def test_pinned_web_search_version_is_the_tool_type() -> None:
    body, _ = _encode(Message.user("q"), hosted_tools=(WebSearch(version="web_search_preview"),))
    assert body["tools"] == [{"type": "web_search_preview"}]


# -- error classifier ------------------------------------------------------------------


def _error(
    status: int,
    code: str | None,
    message: str,
    kind: str = "invalid_request_error",
    headers: dict[str, str] | None = None,
):  # type: ignore[no-untyped-def]
    body = json.dumps(
        {"error": {"message": message, "type": kind, "param": None, "code": code}}
    ).encode()
    # As the driver does: the shape classifies, the driver stamps what headers say.
    return stamp_error(SHAPE.classify_error(status, headers or {}, body), status, headers or {})


@pytest.mark.parametrize(
    ("status", "code", "cls"),
    [
        (400, None, InvalidRequestError),
        (401, "invalid_api_key", AuthenticationError),
        (403, None, PermissionDeniedError),
        (404, "model_not_found", NotFoundError),
        (413, None, RequestTooLargeError),
        (500, None, ServerError),
        (502, None, ServerError),
    ],
)
def test_status_classes(status: int, code: str | None, cls: type) -> None:
    error = _error(status, code, "boom")
    assert type(error) is cls
    assert error.status == status
    assert error.provider_message == "boom"


def test_rate_limit_carries_retry_after_and_request_id() -> None:
    error = _error(
        429,
        "rate_limit_exceeded",
        "slow",
        "requests",
        {"Retry-After-Ms": "1500", "x-request-id": "req_9"},
    )
    assert isinstance(error, RateLimitError)
    assert (error.retry_after, error.retryable, error.request_id) == (1.5, True, "req_9")
    assert _error(429, None, "slow", "requests", {"retry-after": "7"}).retry_after == 7.0


def test_quota_is_a_rate_limit_that_retrying_cannot_fix() -> None:
    error = _error(429, "insufficient_quota", "pay up", "insufficient_quota")
    assert isinstance(error, RateLimitError) and error.retryable is False


def test_context_window() -> None:
    assert isinstance(_error(400, "context_length_exceeded", "too long"), ContextWindowError)
    text = "Your input exceeds the context window of this model."
    assert isinstance(_error(400, None, text), ContextWindowError)


def test_overloaded_503() -> None:
    error = _error(503, None, "The engine is currently overloaded", "server_error")
    assert isinstance(error, OverloadedError) and error.retryable is True
    assert type(_error(503, None, "unavailable", "server_error")) is ServerError


def test_rejected_encrypted_reasoning_is_recoverable_with_a_strip_patch() -> None:
    message = "The encrypted content for item rs_0abc could not be verified."
    error = _error(400, "invalid_encrypted_content", message)
    assert isinstance(error, RecoverableError)
    (patch,) = error.patches
    assert (patch.action, dict(patch.target)) == ("strip-reasoning", {"item_id": "rs_0abc"})


def test_non_json_error_body_is_kept() -> None:
    error = SHAPE.classify_error(502, {}, b"<html>Bad gateway</html>")
    assert isinstance(error, ServerError)
    assert error.body == b"<html>Bad gateway</html>"
    assert error.provider_type is None
