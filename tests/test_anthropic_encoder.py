"""The Anthropic Messages encoder: native replay, portable encoding, hosted tools, options."""

from __future__ import annotations

import json
from typing import Any

import pytest

from elelem.shapes.anthropic_messages import SHAPE, assistant_wire, hosted_tool_definition
from elelem.stream import assemble
from elelem.vocabulary import (
    Attribution,
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
    EMPTY,
    FOREIGN_BLOCK,
    FOREIGN_PAYLOAD,
    FOREIGN_REASONING,
    UNREPLAYABLE,
    UNSUPPORTED,
    Drop,
)
from elelem.wire import ModelRequest

A = ProviderId("anthropic")
OPENAI = ProviderId("openai")

CITATION = {
    "type": "web_search_result_location",
    "cited_text": "Paris is the capital",
    "url": "https://e.com/p",
    "title": "P",
    "encrypted_index": "EpIB",
}
WIRE_CONTENT: list[dict[str, Any]] = [
    {"type": "thinking", "thinking": "I should search.", "signature": "SIG=="},
    {"type": "redacted_thinking", "data": "REDACTED=="},
    {"type": "text", "text": "Searching."},
    {
        "type": "server_tool_use",
        "id": "srvtoolu_1",
        "name": "web_search",
        "input": {"query": "paris"},
    },
    {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": [
            {
                "type": "web_search_result",
                "url": "https://e.com/p",
                "title": "P",
                "encrypted_content": "ENC",
                "page_age": None,
            }
        ],
    },
    {"type": "text", "text": "Paris.", "citations": [CITATION]},
    {
        "type": "mcp_tool_use",
        "id": "mcptoolu_1",
        "name": "echo",
        "server_name": "s",
        "input": {"m": 1},
    },
    {
        "type": "mcp_tool_result",
        "tool_use_id": "mcptoolu_1",
        "is_error": False,
        "content": [{"type": "text", "text": "1"}],
    },
    {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "lookup",
        "input": {"k": "v"},
        "caller": {"type": "direct"},
    },
]


def parsed_message() -> Message:
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": WIRE_CONTENT,
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    return assemble(SHAPE.parse_response(json.dumps(body).encode(), A), A).to_message()


def test_native_replay_rebuilds_every_block_exactly_in_order() -> None:
    wire, dropped = assistant_wire(parsed_message(), A)
    assert dropped == ()
    assert wire == {"role": "assistant", "content": WIRE_CONTENT}


def test_native_replay_survives_the_codec_round_trip() -> None:
    from elelem.codec import dumps, loads

    message = loads(dumps(parsed_message()), Message)
    wire, _ = assistant_wire(message, A)
    assert wire["content"] == WIRE_CONTENT


def test_native_replay_drops_unsigned_reasoning_and_says_so() -> None:
    message = Message(
        role="assistant",
        content=(ReasoningBlock("partial thought", complete=False), TextBlock("hi")),
        provider=A,
    )
    wire, dropped = assistant_wire(message, A)
    assert wire == {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}
    assert dropped == (
        Drop(
            "content[0]",
            "reasoning",
            UNREPLAYABLE,
            "unsigned: no thinking block without its signature",
        ),
    )


def test_portable_encoding_of_another_providers_message() -> None:
    foreign = Message(
        role="assistant",
        provider=OPENAI,
        content=(
            ReasoningBlock(
                "secret", payloads=(ProviderPayload(OPENAI, "encrypted_content", None, "X"),)
            ),
            HostedActivity(
                "ws_1",
                "web_search",
                "started",
                {"query": "q"},
                payload=ProviderPayload(OPENAI, "item", None, {"id": "ws_1"}),
            ),
            HostedActivity("ws_1", "web_search", "completed", {"query": "q"}, "3 results"),
            HostedActivity("ws_2", "web_fetch", "started", {"url": "u"}),
            TextBlock(
                "Answer.",
                attributions=(Attribution(Source("https://e.com", "E"), range=(0, 6)),),
                payloads=(ProviderPayload(OPENAI, "item_id", None, "msg_9"),),
            ),
            ToolCallBlock(
                "call_1",
                "lookup",
                '{"k": 1}',
                payloads=(ProviderPayload(OPENAI, "item_id", None, "fc_1"),),
            ),
            UnknownBlock({"type": "image_generation_call", "id": "ig_1"}),
        ),
    )
    wire, dropped = assistant_wire(foreign, A)
    assert wire == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": '[hosted web_search {"query": "q"}: completed, 3 results]'},
            {"type": "text", "text": '[hosted web_fetch {"url": "u"}: started]'},
            {"type": "text", "text": "Answer."},
            {"type": "tool_use", "id": "call_1", "name": "lookup", "input": {"k": 1}},
        ],
    }
    assert dropped == (
        Drop("content[0]", "reasoning", FOREIGN_REASONING, "from openai"),
        Drop("content[1]", "payload", FOREIGN_PAYLOAD, "openai item of hosted web_search"),
        Drop("content[4]", "payload", FOREIGN_PAYLOAD, "openai item_id"),
        Drop(
            "content[4]",
            "citation",
            UNSUPPORTED,
            "1: Anthropic has no input form for another provider's citations",
        ),
        Drop("content[5]", "payload", FOREIGN_PAYLOAD, "openai item_id"),
        Drop("content[6]", "image_generation_call", FOREIGN_BLOCK, "from openai"),
    )


def test_a_started_transition_alone_keeps_its_payload_report() -> None:
    foreign = Message(
        role="assistant",
        provider=OPENAI,
        content=(
            HostedActivity(
                "x",
                "code_execution",
                "started",
                None,
                payload=ProviderPayload(OPENAI, "item", None, {}),
            ),
        ),
    )
    wire, dropped = assistant_wire(foreign, A)
    assert wire["content"] == [{"type": "text", "text": "[hosted code_execution: started]"}]
    assert dropped == (
        Drop("content[0]", "payload", FOREIGN_PAYLOAD, "openai item of hosted code_execution"),
    )


def test_hosted_tool_definitions() -> None:
    assert hosted_tool_definition(WebSearch()) == {
        "type": "web_search_20250305",
        "name": "web_search",
    }
    assert hosted_tool_definition(
        WebSearch(
            max_uses=3,
            allowed_domains=("a.com",),
            user_location=UserLocation(
                city="San Francisco", country="US", timezone="America/Los_Angeles"
            ),
        )
    ) == {
        "type": "web_search_20250305",
        "name": "web_search",
        "max_uses": 3,
        "allowed_domains": ["a.com"],
        "user_location": {
            "type": "approximate",
            "city": "San Francisco",
            "country": "US",
            "timezone": "America/Los_Angeles",
        },
    }
    assert hosted_tool_definition(
        WebFetch(blocked_domains=("b.com",), citations=True, max_content_tokens=5000)
    ) == {
        "type": "web_fetch_20250910",
        "name": "web_fetch",
        "blocked_domains": ["b.com"],
        "citations": {"enabled": True},
        "max_content_tokens": 5000,
    }
    assert hosted_tool_definition(CodeExecution()) == {
        "type": "code_execution_20250825",
        "name": "code_execution",
    }
    assert hosted_tool_definition(CodeExecution(version="code_execution_20260120")) == {
        "type": "code_execution_20260120",
        "name": "code_execution",
    }


def test_full_request_with_a_paused_turn_continued_last() -> None:
    paused = parsed_message()
    request = ModelRequest(
        model="claude-sonnet-4-5",
        system="Be brief.",
        messages=(
            Message.system("Cite sources."),
            Message.user("Find Paris."),
            Message.context("It is Monday.", tag="reminder"),
            paused,
        ),
        tools=(
            ToolSpec(
                "lookup",
                "Look a key up",
                {"type": "object", "properties": {"k": {"type": "string"}}},
            ),
        ),
        hosted_tools=(WebSearch(max_uses=5), WebFetch(), CodeExecution()),
        options=GenerationOptions(
            max_tokens=2000,
            temperature=0.5,
            stop=("END",),
            reasoning=ReasoningOptions(budget_tokens=1024),
            tool_choice="auto",
            extra={"metadata": {"user_id": "u1"}},
        ),
    )
    encoded = SHAPE.encode_request(request, provider=A)
    assert encoded.path == "/v1/messages"
    assert encoded.method == "POST"
    assert encoded.stream is True
    assert encoded.dropped == ()
    assert encoded.headers == {
        "anthropic-version": "2023-06-01",
        "anthropic-beta": "web-fetch-2025-09-10,code-execution-2025-08-25",
    }
    assert encoded.body == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 2000,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Find Paris."}]},
            {
                "role": "user",
                "content": [{"type": "text", "text": "<reminder>\nIt is Monday.\n</reminder>"}],
            },
            {"role": "assistant", "content": WIRE_CONTENT},
        ],
        "system": "Be brief.\n\nCite sources.",
        "tools": [
            {
                "name": "lookup",
                "description": "Look a key up",
                "input_schema": {"type": "object", "properties": {"k": {"type": "string"}}},
            },
            {"type": "web_search_20250305", "name": "web_search", "max_uses": 5},
            {"type": "web_fetch_20250910", "name": "web_fetch"},
            {"type": "code_execution_20250825", "name": "code_execution"},
        ],
        "tool_choice": {"type": "auto"},
        "temperature": 0.5,
        "stop_sequences": ["END"],
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "stream": True,
        "metadata": {"user_id": "u1"},
    }


def test_tool_results_and_defaults() -> None:
    request = ModelRequest(
        model="m",
        messages=(
            Message.user("go"),
            Message(
                role="assistant",
                provider=A,
                content=(ToolCallBlock("toolu_1", "f", ""),),
            ),
            Message(
                role="user",
                source="tool",
                content=(
                    ToolResultBlock("toolu_1", "boom", is_error=True),
                    ToolResultBlock("toolu_2", "ok"),
                ),
            ),
        ),
        options=GenerationOptions(tool_choice="f", reasoning=ReasoningOptions(effort="high")),
    )
    encoded = SHAPE.encode_request(request, provider=A, stream=False)
    assert encoded.stream is False
    assert encoded.headers == {"anthropic-version": "2023-06-01"}
    assert encoded.body == {
        "model": "m",
        "max_tokens": 4096,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "go"}]},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": "boom",
                        "is_error": True,
                    },
                    {"type": "tool_result", "tool_use_id": "toolu_2", "content": "ok"},
                ],
            },
        ],
        "tool_choice": {"type": "tool", "name": "f"},
        "output_config": {"effort": "high"},
    }


def test_message_left_empty_is_omitted_and_reported() -> None:
    request = ModelRequest(
        model="m",
        messages=(
            Message.user("q"),
            Message(role="assistant", provider=OPENAI, content=(ReasoningBlock("only thinking"),)),
            Message.user("again"),
        ),
    )
    encoded = SHAPE.encode_request(request, provider=A)
    assert [m["role"] for m in encoded.body["messages"]] == ["user", "user"]
    assert encoded.dropped == (
        Drop("messages[1].content[0]", "reasoning", FOREIGN_REASONING, "from openai"),
        Drop("messages[1]", "message", EMPTY, "nothing left to send"),
    )


def test_required_tool_choice_maps_to_any() -> None:
    request = ModelRequest(
        model="m", messages=(Message.user("q"),), options=GenerationOptions(tool_choice="required")
    )
    assert SHAPE.encode_request(request, provider=A).body["tool_choice"] == {"type": "any"}


def test_undecodable_payloads_are_errors_not_downgrades() -> None:
    from elelem.errors import PayloadError

    bad = [
        ReasoningBlock("t", payloads=(ProviderPayload(A, "signature", None, {"not": "a string"}),)),
        HostedActivity(
            "s", "web_search", "started", payload=ProviderPayload(A, "server_tool_use", None, "x")
        ),
        TextBlock(
            "t",
            attributions=(Attribution(Source(), replay=ProviderPayload(A, "citation", None, [1])),),
        ),
        ToolCallBlock("t", "f", "{}", payloads=(ProviderPayload(A, "block_fields", None, "x"),)),
    ]
    for part in bad:
        message = Message(role="assistant", content=(part,), provider=A)
        with pytest.raises(PayloadError, match=r"content\[0\]: anthropic"):
            assistant_wire(message, A)
