"""Chat Completions shape: the error classifier and the request encoder, rule by rule."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from elelem.errors import (
    AuthenticationError,
    ContextWindowError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    RateLimitError,
    RequestTooLargeError,
    ServerError,
    StreamError,
)
from elelem.shapes.openai_chat import SHAPE, Dialect, assistant_wire, encode_request
from elelem.transport.driver import stamp_error
from elelem.vocabulary import (
    ActivityId,
    Attribution,
    CallId,
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
    FOREIGN_PAYLOAD,
    FOREIGN_REASONING,
    UNREPLAYABLE,
    UNSUPPORTED,
    Drop,
)
from elelem.wire import ModelRequest

OPENAI = ProviderId("openai")

# --------------------------------------------------------------------------
# error classifier
# --------------------------------------------------------------------------


def body(**error: Any) -> bytes:
    return json.dumps({"error": error}).encode()


def classify(status: int, headers: dict[str, str], raw: bytes) -> StreamError:
    """As the driver does: the shape classifies, the driver stamps what headers say."""
    return stamp_error(SHAPE.classify_error(status, headers, raw), status, headers)


@pytest.mark.parametrize(
    ("status", "raw", "cls"),
    [
        (401, body(message="Incorrect API key", type="invalid_request_error"), AuthenticationError),
        (403, body(message="no access"), PermissionDeniedError),
        (402, body(code=402, message="Insufficient credits"), PermissionDeniedError),
        (404, body(message="model not found", code="model_not_found"), NotFoundError),
        (400, body(message="bad", type="invalid_request_error"), InvalidRequestError),
        (422, b'{"detail": "bad"}', InvalidRequestError),
        (413, body(message="Request Entity Too Large"), RequestTooLargeError),
        (400, body(message="x", code="context_length_exceeded"), ContextWindowError),
        (
            400,
            body(
                code=400,
                message="the request exceeds the available context size",
                type="exceed_context_size_error",
            ),
            ContextWindowError,
        ),
        (
            400,
            b'{"object": "error", "message": "Prompt is too long", "type": "invalid_request'
            b'_error"}',
            ContextWindowError,
        ),
        (500, body(message="oops", type="server_error"), ServerError),
        (503, body(message="The engine is currently overloaded"), OverloadedError),
        (529, b"", OverloadedError),
        (502, b"<html>bad gateway</html>", ServerError),
    ],
)
def test_http_errors_are_classified(status: int, raw: bytes, cls: type) -> None:
    err = classify(status, {"x-request-id": "req_1"}, raw)
    assert type(err) is cls
    assert (err.status, err.body, err.request_id) == (status, raw, "req_1")


def test_rate_limits_carry_retry_after_and_quota_is_not_retryable() -> None:
    hint = classify(429, {"Retry-After": "7"}, body(message="slow"))
    assert isinstance(hint, RateLimitError) and (hint.retry_after, hint.retryable) == (7.0, True)
    ms = classify(429, {"retry-after-ms": "1500", "retry-after": "9"}, b"")
    assert ms.retry_after == 1.5
    dated = classify(
        429,
        {"retry-after": "Wed, 21 Oct 2015 07:28:30 GMT", "date": "Wed, 21 Oct 2015 07:28:00 GMT"},
        b"",
    )
    assert dated.retry_after == 30.0
    quota = classify(
        429, {}, body(message="You exceeded your current quota", code="insufficient_quota")
    )
    assert isinstance(quota, RateLimitError) and quota.retryable is False
    assert quota.provider_type == "insufficient_quota"


def test_ollama_string_error_and_bounded_body() -> None:
    err = classify(404, {}, b'{"error": "model \\"x\\" not found"}')
    assert isinstance(err, NotFoundError) and err.provider_message == 'model "x" not found'
    huge = classify(500, {}, b"x" * 200_000)
    assert len(huge.body or b"") == 64 * 1024


# --------------------------------------------------------------------------
# encoder
# --------------------------------------------------------------------------


def _assistant(provider: str, *content: Any, model: str = "m") -> Message:
    return Message(
        role="assistant",
        content=tuple(content),
        source="assistant",
        provider=ProviderId(provider),
        model=model,
    )


def test_request_body_with_tools_results_and_options() -> None:
    call = ToolCallBlock(CallId("call_1"), "get", '{"q": 1}')
    request = ModelRequest(
        model="gpt-4o",
        system="Be brief.",
        messages=(
            Message.user("Hi"),
            _assistant("openai", call),
            Message(role="user", content=(ToolResultBlock(CallId("call_1"), "42"),), source="tool"),
            Message.context("it is Monday", "reminder"),
        ),
        tools=(ToolSpec("get", "Get a thing", {"type": "object"}),),
        options=GenerationOptions(
            max_tokens=100,
            temperature=0.5,
            stop=("END",),
            tool_choice="get",
            reasoning=ReasoningOptions(effort="low"),
            extra={"seed": 3},
        ),
    )
    encoded = encode_request(request, provider=OPENAI)
    assert encoded.path == "/chat/completions" and encoded.dropped == ()
    assert encoded.body == {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get", "arguments": '{"q": 1}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "42"},
            {"role": "user", "content": "<reminder>\nit is Monday\n</reminder>"},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get",
                    "description": "Get a thing",
                    "parameters": {"type": "object"},
                },
            }
        ],
        "max_completion_tokens": 100,
        "temperature": 0.5,
        "stop": ["END"],
        "tool_choice": {"type": "function", "function": {"name": "get"}},
        "reasoning_effort": "low",
        "seed": 3,
    }


@pytest.mark.parametrize(
    ("provider", "model", "expected"),
    [
        ("deepseek", "deepseek-reasoner", {"content": "A", "reasoning_content": "R"}),
        ("llamacpp", "qwen", {"content": "A", "reasoning_content": "R"}),
        ("cerebras", "gpt-oss-120b", {"content": "A", "reasoning": "R"}),
        ("cerebras", "zai-glm-4.7", {"content": "<think>\nR\n</think>\n\nA"}),
        ("groq", "openai/gpt-oss-120b", {"content": "<think>\nR\n</think>\n\nA"}),
        ("openrouter", "x-ai/grok", {"content": "A", "reasoning": "R"}),
        ("some-server", "m", {"content": "A", "reasoning": "R"}),
    ],
)
def test_native_reasoning_replay_follows_the_provider_dialect(
    provider: str, model: str, expected: dict[str, Any]
) -> None:
    field = ProviderPayload(ProviderId(provider), "reasoning-field", None, "reasoning")
    message = _assistant(provider, ReasoningBlock("R", (field,)), TextBlock("A"), model=model)
    wire, dropped = assistant_wire(message, ProviderId(provider))
    assert wire == {"role": "assistant", **expected}
    assert dropped == []


def test_openai_keeps_reasoning_server_side_and_says_so() -> None:
    message = _assistant("openai", ReasoningBlock("R"), TextBlock("A"))
    wire, dropped = assistant_wire(message, OPENAI)
    assert wire == {"role": "assistant", "content": "A"}
    assert dropped == [
        Drop("content[0]", "reasoning", UNREPLAYABLE, "openai keeps reasoning server-side")
    ]


def test_unknown_parts_force_the_parts_form_without_disguising_reasoning() -> None:
    field = ProviderPayload(ProviderId("deepseek"), "reasoning-field", None, "reasoning_content")
    part = UnknownBlock({"type": "image_url", "image_url": {"url": "u"}})
    message = _assistant("deepseek", ReasoningBlock("R", (field,)), TextBlock("A"), part)
    wire, dropped = assistant_wire(message, ProviderId("deepseek"))
    assert wire == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "A"},
            {"type": "image_url", "image_url": {"url": "u"}},
        ],
        "reasoning_content": "R",
    }
    assert dropped == []


def test_a_router_replays_natively_only_within_one_model_vendor() -> None:
    router = ProviderId("openrouter")
    details = [{"type": "reasoning.text", "text": "R", "signature": "S", "index": 0}]
    payload = ProviderPayload(router, "reasoning_details", None, details)
    message = _assistant(
        "openrouter",
        ReasoningBlock("R", (payload,)),
        TextBlock("A"),
        model="anthropic/claude-haiku-4.5",
    )
    same = ModelRequest(model="anthropic/claude-sonnet-4.5", messages=(message,))
    other = ModelRequest(model="openai/gpt-5-mini", messages=(message,))
    assert encode_request(same, provider=router).body["messages"] == [
        {"role": "assistant", "content": "A", "reasoning_details": details}
    ]
    crossed = encode_request(other, provider=router)
    assert crossed.body["messages"] == [{"role": "assistant", "content": "A"}]
    assert crossed.dropped == (
        Drop("messages[0].content[0]", "reasoning", FOREIGN_REASONING, "from openrouter"),
    )


def test_several_user_text_blocks_stay_separate_parts() -> None:
    message = Message(role="user", content=(TextBlock("a"), TextBlock("b")), source="user")
    body = encode_request(ModelRequest(model="m", messages=(message,)), provider=OPENAI).body
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    ]


def test_openrouter_replays_tool_calls_with_their_index() -> None:
    calls = [ToolCallBlock(CallId(f"c{i}"), "f", "{}") for i in range(2)]
    wire, _ = assistant_wire(_assistant("openrouter", *calls), ProviderId("openrouter"))
    assert wire == {
        "role": "assistant",
        "tool_calls": [
            {
                "id": f"c{i}",
                "index": i,
                "type": "function",
                "function": {"name": "f", "arguments": "{}"},
            }
            for i in range(2)
        ],
    }


def test_portable_encoding_keeps_text_calls_and_activity_and_reports_the_rest() -> None:
    sig = ProviderPayload(ProviderId("anthropic"), "signature", None, "s")
    search = HostedActivity(ActivityId("srv_1"), "web_search", "started", {"query": "q"})
    message = _assistant(
        "anthropic",
        ReasoningBlock("secret", (sig,)),
        search,
        search.transition("completed", summary="5 results"),
        TextBlock("Answer", (Attribution(Source("https://a.io")),)),
        ToolCallBlock(CallId("toolu_1"), "f", "{}", (sig,)),
    )
    request = ModelRequest(model="deepseek-chat", messages=(Message.user("q"), message))
    encoded = encode_request(request, provider=ProviderId("deepseek"))
    assert encoded.body["messages"][1] == {
        "role": "assistant",
        "content": '[hosted web_search {"query": "q"}: completed, 5 results]\nAnswer',
        "tool_calls": [
            {"id": "toolu_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }
    assert encoded.dropped == (
        Drop("messages[1].content[0]", "reasoning", FOREIGN_REASONING, "from anthropic"),
        Drop(
            "messages[1].content[3]",
            "citation",
            UNSUPPORTED,
            "1: Chat Completions has no input form for another provider's citations",
        ),
        Drop("messages[1].content[4]", "payload", FOREIGN_PAYLOAD, "anthropic signature"),
    )


def test_hosted_web_search_per_dialect() -> None:
    search = WebSearch(max_uses=2, user_location=UserLocation(city="Utrecht", country="NL"))
    base = ModelRequest(model="m", messages=(Message.user("q"),), hosted_tools=(search,))
    openai = encode_request(base, provider=OPENAI, stream=False)
    assert openai.body["web_search_options"] == {
        "user_location": {
            "type": "approximate",
            "approximate": {"city": "Utrecht", "country": "NL"},
        }
    }
    assert "stream_options" not in openai.body
    assert openai.dropped == (
        Drop("hosted_tools[0].max_uses", "max_uses", UNSUPPORTED, "openai takes none"),
    )
    routed = encode_request(base, provider=ProviderId("openrouter"))
    assert routed.body["tools"] == [
        {"type": "openrouter:web_search", "parameters": {"max_uses": 2}}
    ]
    # A tool the wire (or the dialect) cannot send is left out and reported.
    deepseek = encode_request(base, provider=ProviderId("deepseek"))
    assert ("tools" in deepseek.body, "web_search_options" in deepseek.body) == (False, False)
    assert deepseek.dropped == (
        Drop(
            "hosted_tools[0]",
            "web_search",
            UNSUPPORTED,
            "deepseek has no hosted web search on Chat Completions",
        ),
    )
    fetch = ModelRequest(model="m", messages=(), hosted_tools=(WebFetch(),))
    assert encode_request(fetch, provider=OPENAI).dropped == (
        Drop(
            "hosted_tools[0]", "web_fetch", UNSUPPORTED, "Chat Completions has no hosted web_fetch"
        ),
    )


def test_a_dialect_override_changes_the_encoding() -> None:
    from elelem.shapes.openai_chat import SHAPE

    shape = SHAPE.with_dialect(Dialect(reasoning_replay="omit", stream_usage=False))
    field = ProviderPayload(ProviderId("deepseek"), "reasoning-field", None, "reasoning_content")
    message = _assistant("deepseek", ReasoningBlock("R", (field,)), TextBlock("A"))
    encoded = shape.encode_request(
        ModelRequest(model="m", messages=(message,)), provider=ProviderId("deepseek")
    )
    assert encoded.body == {
        "model": "m",
        "messages": [{"role": "assistant", "content": "A"}],
        "stream": True,
    }
    assert encoded.dropped == (
        Drop(
            "messages[0].content[0]",
            "reasoning",
            UNREPLAYABLE,
            "deepseek keeps reasoning server-side",
        ),
    )
    assert msgspec.json.decode(msgspec.json.encode(encoded.body)) == encoded.body
