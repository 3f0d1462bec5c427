"""Chat Completions choices and calls beyond the plain function tool call:
``n>1`` responses, custom tool calls, and the deprecated ``function_call``.

Every fixture here is written by hand from OpenAI's API reference:

- the streamed chunk object, whose ``choices`` list holds one entry per
  choice, each with its own ``index`` (``n`` "How many chat completion
  choices to generate for each input message"), and whose ``delta.tool_calls``
  entries carry ``index``, ``id``, ``type`` and ``function``
  (platform.openai.com/docs/api-reference/chat-streaming/streaming);
- custom tools (``tools[].type: "custom"``): the model's call is
  ``{"id", "type": "custom", "custom": {"name", "input"}}`` with free-text
  ``input`` (platform.openai.com/docs/guides/function-calling#custom-tools,
  ``ChatCompletionMessageCustomToolCall`` in the API reference);
- the deprecated functions API: ``message.function_call`` ``{"name",
  "arguments"}`` with ``finish_reason: "function_call"``, answered by a
  ``{"role": "function", "name", "content"}`` message
  (api-reference/chat/object, "function_call: Deprecated and replaced by
  tool_calls").
"""

from __future__ import annotations

import json
from typing import Any

from elelem.shapes.openai_chat import SHAPE, alternatives, encode_request
from elelem.shapes.openai_chat.parser import parse_body
from elelem.stream import assemble
from elelem.vocabulary import (
    CallId,
    Message,
    ProviderId,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from elelem.wire import ModelRequest

OPENAI = ProviderId("openai")
HEAD = {"id": "chatcmpl-9", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4.1"}


def frame(*choices: dict[str, Any], **top: Any) -> str:
    return json.dumps({**HEAD, "choices": list(choices), **top})


def parsed(frames: list[str], provider: ProviderId = OPENAI) -> Any:
    parser = SHAPE.new_parser(provider)
    chunks = []
    for data in frames:
        chunks += parser.message("", data)
    chunks += parser.eof()
    return assemble(chunks, provider)


def call(index: int, **fields: Any) -> dict[str, Any]:
    return {"index": index, **fields}


# n=2: two choices, each calling its own tool, interleaved as the server streams them.
N2 = [
    frame(
        {
            "index": 0,
            "delta": {
                "role": "assistant",
                "tool_calls": [
                    call(
                        0,
                        id="call_w",
                        type="function",
                        function={"name": "weather", "arguments": ""},
                    )
                ],
            },
        }
    ),
    frame(
        {
            "index": 1,
            "delta": {
                "role": "assistant",
                "tool_calls": [
                    call(
                        0, id="call_t", type="function", function={"name": "clock", "arguments": ""}
                    )
                ],
            },
        }
    ),
    frame({"index": 0, "delta": {"tool_calls": [call(0, function={"arguments": '{"city":'})]}}),
    frame({"index": 1, "delta": {"tool_calls": [call(0, function={"arguments": '{"tz":"CET"}'})]}}),
    frame({"index": 0, "delta": {"tool_calls": [call(0, function={"arguments": '"Oslo"}'})]}}),
    frame({"index": 0, "delta": {}, "finish_reason": "tool_calls"}),
    frame({"index": 1, "delta": {}, "finish_reason": "tool_calls"}),
    frame(usage={"prompt_tokens": 20, "completion_tokens": 30, "total_tokens": 50}),
    "[DONE]",
]


def test_an_n2_stream_keeps_the_second_choice_as_an_alternative() -> None:
    response = parsed(N2)
    (first,) = response.content
    assert first == ToolCallBlock(CallId("call_w"), "weather", '{"city":"Oslo"}')
    assert response.finish.reason == "tool-calls"
    assert response.usage.total == 50
    (second,) = alternatives(response)
    assert second.content == (ToolCallBlock(CallId("call_t"), "clock", '{"tz":"CET"}'),)
    assert second.finish.raw == "tool_calls"
    assert second.response_id == "chatcmpl-9" and second.model == "gpt-4.1"
    # Replayable: the alternative continues a conversation natively, like the first.
    request = ModelRequest(
        model="gpt-4.1",
        messages=(
            Message(role="user", content=(TextBlock("time?"),)),
            second.to_message(),
            Message(role="user", content=(ToolResultBlock(CallId("call_t"), "12:00"),)),
        ),
    )
    body = encode_request(request, provider=OPENAI).body
    assert body["messages"][1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_t",
                "type": "function",
                "function": {"name": "clock", "arguments": '{"tz":"CET"}'},
            }
        ],
    }


def test_a_whole_n2_body_keeps_every_choice_with_its_fields() -> None:
    body = {
        "id": "chatcmpl-9",
        "object": "chat.completion",
        "model": "gpt-4.1",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Red."},
                "finish_reason": "stop",
            },
            {
                "index": 1,
                "message": {"role": "assistant", "content": "Blue.", "refusal": None},
                "logprobs": {"content": [{"token": "Blue", "logprob": -0.1}]},
                "finish_reason": "stop",
            },
        ],
    }
    response = assemble(parse_body(json.dumps(body).encode(), OPENAI), OPENAI)
    assert response.text == "Red."
    (second,) = alternatives(response)
    assert second.text == "Blue."
    (payload,) = response.finish.payloads
    assert payload.value == [
        {
            "index": 1,
            "message": {"role": "assistant", "content": "Blue."},
            "finish_reason": "stop",
            "logprobs": {"content": [{"token": "Blue", "logprob": -0.1}]},
        }
    ]


def test_a_custom_tool_call_is_a_call_whose_arguments_are_its_input_text() -> None:
    frames = [
        frame(
            {
                "index": 0,
                "delta": {
                    "role": "assistant",
                    "tool_calls": [
                        call(
                            0,
                            id="call_c",
                            type="custom",
                            custom={"name": "run_python", "input": ""},
                        )
                    ],
                },
            }
        ),
        frame({"index": 0, "delta": {"tool_calls": [call(0, custom={"input": 'print("hi")'})]}}),
        frame({"index": 0, "delta": {"tool_calls": [call(0, custom={"input": "\n"})]}}),
        frame({"index": 0, "delta": {}, "finish_reason": "tool_calls"}),
        "[DONE]",
    ]
    response = parsed(frames)
    (block,) = response.content
    assert isinstance(block, ToolCallBlock)
    assert (block.id, block.name, block.input) == ("call_c", "run_python", 'print("hi")\n')
    assert response.finish.reason == "tool-calls"
    request = ModelRequest(model="gpt-4.1", messages=(response.to_message(),))
    (wire,) = encode_request(request, provider=OPENAI).body["messages"]
    assert wire["tool_calls"] == [
        {
            "id": "call_c",
            "type": "custom",
            "custom": {"name": "run_python", "input": 'print("hi")\n'},
        }
    ]


def test_a_custom_call_with_no_input_has_the_empty_string() -> None:
    frames = [
        frame(
            {
                "index": 0,
                "delta": {"tool_calls": [call(0, id="c", type="custom", custom={"name": "noop"})]},
            }
        ),
        frame({"index": 0, "delta": {}, "finish_reason": "tool_calls"}),
        "[DONE]",
    ]
    (block,) = parsed(frames).content
    assert block.arguments == '""' and block.input == ""


def test_the_deprecated_function_call_is_a_tool_call_replayed_as_one() -> None:
    frames = [
        frame(
            {
                "index": 0,
                "delta": {
                    "role": "assistant",
                    "content": None,
                    "function_call": {"name": "weather", "arguments": ""},
                },
            }
        ),
        frame({"index": 0, "delta": {"function_call": {"arguments": '{"city"'}}}),
        frame({"index": 0, "delta": {"function_call": {"arguments": ':"Oslo"}'}}}),
        frame({"index": 0, "delta": {}, "finish_reason": "function_call"}),
        "[DONE]",
    ]
    response = parsed(frames)
    (block,) = response.content
    assert isinstance(block, ToolCallBlock)
    assert (block.name, block.input) == ("weather", {"city": "Oslo"})
    assert response.finish.reason == "tool-calls"
    request = ModelRequest(
        model="gpt-4.1",
        messages=(
            response.to_message(),
            Message(role="user", content=(ToolResultBlock(block.id, "sunny", name="weather"),)),
        ),
    )
    messages = encode_request(request, provider=OPENAI).body["messages"]
    assert messages == [
        {
            "role": "assistant",
            "content": None,
            "function_call": {"name": "weather", "arguments": '{"city":"Oslo"}'},
        },
        {"role": "function", "name": "weather", "content": "sunny"},
    ]


def test_a_whole_body_with_function_call_gives_the_same_block() -> None:
    body = {
        "id": "chatcmpl-9",
        "object": "chat.completion",
        "model": "gpt-4.1",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "function_call": {"name": "weather", "arguments": '{"city":"Oslo"}'},
                },
                "finish_reason": "function_call",
            }
        ],
    }
    response = assemble(parse_body(json.dumps(body).encode(), OPENAI), OPENAI)
    (block,) = response.content
    assert (block.id, block.name, block.arguments) == (
        "chatcmpl-9-function_call",
        "weather",
        '{"city":"Oslo"}',
    )


def test_a_field_the_response_showed_is_replayed_to_a_host_taken_for_openai() -> None:
    # An OpenAI-compatible host the catalog does not know is recorded as
    # "openai" (recognize.SHAPE_PROVIDERS); its GLM/DeepSeek-style answer
    # shows reasoning in delta.reasoning_content (api-docs.deepseek.com
    # /guides/reasoning_model, docs.z.ai "Deep Thinking"), so that field goes back.
    from elelem.providers import Catalog
    from elelem.providers.recognize import provider_of_url

    host = provider_of_url(
        Catalog(), "https://llm.internal.example/v1/chat/completions", "openai_chat"
    )
    assert host == "openai"
    frames = [
        frame({"index": 0, "delta": {"role": "assistant", "reasoning_content": "Think."}}),
        frame({"index": 0, "delta": {"content": "Done."}, "finish_reason": "stop"}),
        "[DONE]",
    ]
    response = parsed(frames, ProviderId(host))
    request = ModelRequest(model="glm-4.6", messages=(response.to_message(),))
    (wire,) = encode_request(request, provider=ProviderId(host)).body["messages"]
    assert wire == {"role": "assistant", "content": "Done.", "reasoning_content": "Think."}
    # OpenAI's own reasoning shows in no field: it stays server-side.
    plain = parsed(
        [frame({"index": 0, "delta": {"content": "Hi."}, "finish_reason": "stop"}), "[DONE]"]
    )
    assert (
        "reasoning_content"
        not in encode_request(
            ModelRequest(model="gpt-4.1", messages=(plain.to_message(),)), provider=OPENAI
        ).body["messages"][0]
    )
