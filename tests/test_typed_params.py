"""Request bodies checked against the providers' own typed params (#42).

Each request elelem encodes is checked against the official SDK's types
for that endpoint (the dev extra brings ``openai``, ``anthropic`` and ``google-genai``):
only keys the types name, every required key, values of the annotated
types, all the way down (``typed_params.mismatches`` for the OpenAI SDK's
``TypedDict`` params; google-genai's pydantic models, which forbid unknown
fields, for Gemini).  Each fixture names the documentation page of the
request it builds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from anthropic.types.message_create_params import MessageCreateParamsStreaming
from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsStreaming
from pydantic import BaseModel

from elelem.shapes.registry import shape_named
from elelem.stream import Assembler
from elelem.vocabulary import (
    DocumentBlock,
    GenerationOptions,
    ImageBlock,
    Message,
    ProviderId,
    ProviderPayload,
    ReasoningOptions,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
)
from elelem.vocabulary.ids import CallId
from elelem.wire import ModelRequest
from typed_params import mismatches

OPENAI, GOOGLE = ProviderId("openai"), ProviderId("google")
ANTHROPIC = ProviderId("anthropic")
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
WEATHER = ToolSpec(
    "get_weather",
    "The weather of a city",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
OPTIONS = GenerationOptions(
    temperature=0.2, top_p=0.9, max_tokens=200, reasoning=ReasoningOptions(effort="low")
)


def _answer(shape: str, provider: ProviderId, body: dict[str, Any]) -> Message:
    assembler = Assembler(provider)
    assembler.feed_all(shape_named(shape).parse_response(json.dumps(body).encode(), provider, None))
    return assembler.result().to_message()


def _responses_tool_turn() -> ModelRequest:
    # platform.openai.com/docs/guides/function-calling: the answer's
    # reasoning and function_call items go back, then the call's output.
    answer = _answer(
        "openai_responses",
        OPENAI,
        {
            "id": "resp_1",
            "object": "response",
            "status": "completed",
            "model": "gpt-5",
            "output": [
                {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
                {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "call_1",
                    "name": "get_weather",
                    "arguments": '{"city":"Paris"}',
                    "status": "completed",
                },
            ],
            "usage": {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3},
        },
    )
    result = ToolResultBlock(CallId("call_1"), "18 C", name="get_weather")
    return ModelRequest(
        "gpt-5",
        (Message.user("Weather in Paris?"), answer, Message("user", (result,))),
        tools=(WEATHER,),
        options=OPTIONS,
    )


def _media_turn(model: str) -> ModelRequest:
    return ModelRequest(
        model,
        (
            Message(
                "user",
                (
                    TextBlock("What is in these?"),
                    ImageBlock.from_bytes(PNG),
                    DocumentBlock.from_bytes(PDF, filename="a.pdf"),
                ),
            ),
        ),
        system="Answer in one line.",
    )


def _continued() -> ModelRequest:
    # platform.openai.com/docs/guides/conversation-state: previous_response_id.
    answer = Message("assistant", (TextBlock("Hi."),), "assistant", OPENAI, "gpt-5")
    envelope = ProviderPayload(OPENAI, "response", None, {"id": "resp_9", "store": True})
    return ModelRequest(
        "gpt-5",
        (Message.user("Hello"), answer, Message.user("Again")),
        options=GenerationOptions(extra={"store": True}),
        response_payloads=(envelope,),
    )


RESPONSES: dict[str, Callable[[], ModelRequest]] = {
    # platform.openai.com/docs/api-reference/responses/create
    "a tool turn": _responses_tool_turn,
    # platform.openai.com/docs/guides/images-vision, /docs/guides/pdf-files
    "an image and a PDF": lambda: _media_turn("gpt-5"),
    "a continued conversation": _continued,
}


@pytest.mark.parametrize("name", sorted(RESPONSES))
def test_responses_bodies_are_the_sdks_params(name: str) -> None:
    request = RESPONSES[name]()
    body = shape_named("openai_responses").encode_request(request, provider=OPENAI).body
    assert mismatches(body, ResponseCreateParamsStreaming) == []


def _chat_tool_turn() -> ModelRequest:
    # platform.openai.com/docs/api-reference/chat/create: the assistant's
    # tool_calls, then a tool message with the result.
    answer = _answer(
        "openai_chat",
        OPENAI,
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": "gpt-4.1",
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {
                                    "name": "get_weather",
                                    "arguments": '{"city":"Paris"}',
                                },
                            }
                        ],
                    },
                    "finish_reason": "tool_calls",
                }
            ],
        },
    )
    result = ToolResultBlock(CallId("call_1"), "18 C", name="get_weather")
    return ModelRequest(
        "gpt-4.1",
        (Message.user("Weather in Paris?"), answer, Message("user", (result,))),
        tools=(WEATHER,),
        options=GenerationOptions(temperature=0.2, max_tokens=200, tool_choice="auto"),
    )


CHAT: dict[str, Callable[[], ModelRequest]] = {
    # platform.openai.com/docs/api-reference/chat/create
    "a tool turn": _chat_tool_turn,
    # platform.openai.com/docs/guides/images-vision, /docs/guides/pdf-files
    "an image and a PDF": lambda: _media_turn("gpt-4.1"),
}


@pytest.mark.parametrize("name", sorted(CHAT))
def test_chat_completions_bodies_are_the_sdks_params(name: str) -> None:
    shape = shape_named("openai_chat").with_dialect("openai")  # type: ignore[attr-defined]
    body = shape.encode_request(CHAT[name](), provider=OPENAI).body
    assert mismatches(body, CompletionCreateParamsStreaming) == []


def _anthropic_tool_turn() -> ModelRequest:
    # docs.anthropic.com/en/docs/build-with-claude/tool-use: the signed
    # thinking and tool_use blocks go back, then a tool_result block.
    answer = _answer(
        "anthropic_messages",
        ANTHROPIC,
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [
                {"type": "thinking", "thinking": "Look it up.", "signature": "c2ln"},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                },
            ],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 1, "output_tokens": 2},
        },
    )
    result = ToolResultBlock(CallId("toolu_1"), "18 C", name="get_weather")
    return ModelRequest(
        "claude-sonnet-4-5",
        (Message.user("Weather in Paris?"), answer, Message("user", (result,))),
        tools=(WEATHER,),
        options=GenerationOptions(
            max_tokens=2000, reasoning=ReasoningOptions(budget_tokens=1024), tool_choice="auto"
        ),
    )


ANTHROPIC_REQUESTS: dict[str, Callable[[], ModelRequest]] = {
    # docs.anthropic.com/en/api/messages
    "a tool turn": _anthropic_tool_turn,
    # docs.anthropic.com/en/docs/build-with-claude/vision, /docs/build-with-claude/pdf-support
    "an image and a PDF": lambda: _media_turn("claude-sonnet-4-5"),
}


@pytest.mark.parametrize("name", sorted(ANTHROPIC_REQUESTS))
def test_anthropic_bodies_are_the_sdks_params(name: str) -> None:
    request = ANTHROPIC_REQUESTS[name]()
    body = shape_named("anthropic_messages").encode_request(request, provider=ANTHROPIC).body
    assert mismatches(body, MessageCreateParamsStreaming) == []


def _gemini_models() -> dict[str, tuple[type[BaseModel], bool]]:
    from google.genai import types

    # ai.google.dev/api/generate-content#request-body: each field and its type.
    return {
        "contents": (types.Content, True),
        "systemInstruction": (types.Content, False),
        "tools": (types.Tool, True),
        "toolConfig": (types.ToolConfig, False),
        "generationConfig": (types.GenerationConfig, False),
        "safetySettings": (types.SafetySetting, True),
        "cachedContent": (str, False),  # type: ignore[dict-item]
    }


def _gemini_tool_turn() -> ModelRequest:
    # ai.google.dev/gemini-api/docs/function-calling: the model's
    # functionCall part goes back, then a functionResponse part.
    answer = _answer(
        "gemini",
        GOOGLE,
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [
                            {
                                "functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
                                "thoughtSignature": "c2ln",
                            }
                        ],
                    },
                    "finishReason": "STOP",
                }
            ],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 2},
        },
    )
    call = answer.content[0]
    result = ToolResultBlock(call.id, "18 C", name="get_weather")  # type: ignore[union-attr]
    return ModelRequest(
        "gemini-2.5-flash",
        (Message.user("Weather in Paris?"), answer, Message("user", (result,))),
        tools=(WEATHER,),
        options=OPTIONS,
    )


GEMINI: dict[str, Callable[[], ModelRequest]] = {
    # ai.google.dev/api/generate-content#method:-models.generatecontent
    "a tool turn": _gemini_tool_turn,
    # ai.google.dev/gemini-api/docs/image-understanding, /docs/document-processing
    "an image and a PDF": lambda: _media_turn("gemini-2.5-flash"),
}


@pytest.mark.parametrize("name", sorted(GEMINI))
def test_gemini_bodies_are_the_sdks_types(name: str) -> None:
    body = shape_named("gemini").encode_request(GEMINI[name](), provider=GOOGLE).body
    models = _gemini_models()
    assert sorted(set(body) - set(models)) == []
    for key, value in body.items():
        model, many = models[key]
        if not isinstance(model, type) or not issubclass(model, BaseModel):
            assert isinstance(value, model)
            continue
        for item in value if many else [value]:
            model.model_validate(item)  # google-genai's models forbid unknown fields


def test_the_check_catches_a_key_the_sdk_does_not_name() -> None:
    body = shape_named("openai_responses").encode_request(_continued(), provider=OPENAI).body
    assert mismatches({**body, "previous_response": "resp_9"}, ResponseCreateParamsStreaming) == [
        "$.previous_response: no such key in ResponseCreateParamsStreaming"
    ]
