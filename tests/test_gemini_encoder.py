"""Gemini request encoder: the request body, native replay and portable encoding."""

from __future__ import annotations

import pytest

from elelem.errors import PayloadError
from elelem.shapes.gemini import PORTABLE_SIGNATURE, SHAPE, assistant_wire, request_path
from elelem.vocabulary import (
    ActivityId,
    CallId,
    CodeExecution,
    GenerationOptions,
    HostedActivity,
    Message,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    ReasoningOptions,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolSpec,
    UnknownBlock,
    WebFetch,
    WebSearch,
)
from elelem.vocabulary.drop import (
    EMPTY,
    FOREIGN_PAYLOAD,
    FOREIGN_REASONING,
    UNREPLAYABLE,
    UNSUPPORTED,
    Drop,
)
from elelem.wire import ModelRequest

G = ProviderId("google")
A = ProviderId("anthropic")


def _p(fmt: str, value: object, provider: ProviderId = G) -> ProviderPayload:
    return ProviderPayload(provider, fmt, None, value)  # type: ignore[arg-type]


def test_paths_carry_the_model() -> None:
    assert request_path("gemini-2.5-pro", stream=True) == (
        "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    )
    assert request_path("models/gemini-2.5-pro", stream=False) == (
        "/v1beta/models/gemini-2.5-pro:generateContent"
    )


def test_the_request_body() -> None:
    request = ModelRequest(
        model="gemini-3-pro-preview",
        system="Be brief.",
        messages=(Message.system("Use metric units."), Message.user("Weather?")),
        tools=(ToolSpec("weather", "Weather for a city", {"type": "object"}), ToolSpec("now")),
        hosted_tools=(WebSearch(), WebFetch(), CodeExecution()),
        options=GenerationOptions(
            max_tokens=100,
            temperature=0.5,
            top_p=0.9,
            stop=("END",),
            reasoning=ReasoningOptions(effort="low", budget_tokens=512),
            tool_choice="weather",
            extra={"safetySettings": []},
        ),
    )
    encoded = SHAPE.encode_request(request, provider=G)
    assert encoded.path == "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse"
    assert (encoded.stream, encoded.headers, encoded.dropped) == (True, {}, ())
    assert encoded.body == {
        "contents": [{"role": "user", "parts": [{"text": "Weather?"}]}],
        "systemInstruction": {"parts": [{"text": "Be brief.\n\nUse metric units."}]},
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": "weather",
                        "description": "Weather for a city",
                        "parametersJsonSchema": {"type": "object"},
                    },
                    {"name": "now", "parametersJsonSchema": {"type": "object", "properties": {}}},
                ]
            },
            {"google_search": {}},
            {"url_context": {}},
            {"code_execution": {}},
        ],
        "toolConfig": {
            "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["weather"]}
        },
        "generationConfig": {
            "maxOutputTokens": 100,
            "temperature": 0.5,
            "topP": 0.9,
            "stopSequences": ["END"],
            "thinkingConfig": {
                "includeThoughts": True,
                "thinkingBudget": 512,
                "thinkingLevel": "low",
            },
        },
        "safetySettings": [],
    }
    plain = SHAPE.encode_request(request, provider=G, stream=False)
    assert plain.path == "/v1beta/models/gemini-3-pro-preview:generateContent"


def test_hosted_tool_options_gemini_lacks_are_reported() -> None:
    request = ModelRequest(
        model="m",
        messages=(Message.user("q"),),
        hosted_tools=(WebSearch(max_uses=3, allowed_domains=("a.com",)),),
    )
    encoded = SHAPE.encode_request(request, provider=G)
    assert encoded.body["tools"] == [{"google_search": {}}]
    assert encoded.dropped == (
        Drop(
            "hosted_tools[0].max_uses", "max_uses", UNSUPPORTED, "google_search has no such option"
        ),
        Drop(
            "hosted_tools[0].allowed_domains",
            "allowed_domains",
            UNSUPPORTED,
            "google_search has no such option",
        ),
    )


@pytest.mark.parametrize(
    ("choice", "config"),
    [("auto", {"mode": "AUTO"}), ("none", {"mode": "NONE"}), ("required", {"mode": "ANY"})],
)
def test_tool_choice_modes(choice: str, config: dict[str, object]) -> None:
    request = ModelRequest("m", (Message.user("q"),), options=GenerationOptions(tool_choice=choice))
    body = SHAPE.encode_request(request, provider=G).body
    assert body["toolConfig"] == {"functionCallingConfig": config}


CODE = {"executableCode": {"language": "PYTHON", "code": "print(2)"}, "thoughtSignature": "Qw=="}
RESULT = {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "2\n"}}


def _native_message() -> Message:
    started = HostedActivity(
        ActivityId("c1"), "code_execution", "started", None, "", _p("part", CODE)
    )
    search = HostedActivity(
        ActivityId("s"), "web_search", "completed", None, "", _p("grounding_metadata", {})
    )
    return Message(
        role="assistant",
        provider=G,
        content=(
            ReasoningBlock("Plan.", payloads=(_p("thought_signature", "VA=="),)),
            started,
            started.transition("completed", summary="ok", payload=_p("part", RESULT)),
            TextBlock(
                "It is 2.",
                payloads=(_p("thought_signature", "WA=="), _p("signature_layout", "own-part")),
            ),
            search,
            ToolCallBlock(
                CallId("real-1"), "f", '{"a":1}', payloads=(_p("thought_signature", "Rg=="),)
            ),
            ToolCallBlock(
                CallId("r:call:2"), "g", "{}", payloads=(_p("synthesized_id", "r:call:2"),)
            ),
            UnknownBlock({"type": "inlineData", "part": {"inlineData": {"data": "AA=="}}}),
        ),
    )


def test_native_replay_rebuilds_every_part_in_order() -> None:
    wire, dropped = assistant_wire(_native_message(), G)
    # The search's grounding is response metadata: reported, never a part.
    detail = "web_search completed: grounding metadata, no request part"
    assert dropped == (Drop("content[4]", "hosted", UNREPLAYABLE, detail),)
    assert wire == {
        "role": "model",
        "parts": [
            {"text": "Plan.", "thought": True, "thoughtSignature": "VA=="},
            CODE,
            RESULT,
            {"text": "It is 2."},
            {"text": "", "thoughtSignature": "WA=="},
            {
                "functionCall": {"id": "real-1", "name": "f", "args": {"a": 1}},
                "thoughtSignature": "Rg==",
            },
            {"functionCall": {"name": "g", "args": {}}},
            {"inlineData": {"data": "AA=="}},
        ],
    }


def test_function_responses_name_their_call_and_keep_only_provider_ids() -> None:
    results = Message(
        role="user",
        source="tool",
        content=(
            ToolResultBlock(CallId("real-1"), "one"),
            ToolResultBlock(CallId("r:call:2"), "boom", is_error=True),
        ),
    )
    request = ModelRequest("m", (Message.user("go"), _native_message(), results))
    body = SHAPE.encode_request(request, provider=G).body
    assert body["contents"][2] == {  # type: ignore[index]
        "role": "user",
        "parts": [
            {"functionResponse": {"id": "real-1", "name": "f", "response": {"content": "one"}}},
            {"functionResponse": {"name": "g", "response": {"error": "boom"}}},
        ],
    }


def test_portable_encoding_of_another_providers_turn() -> None:
    foreign = Message(
        role="assistant",
        provider=A,
        content=(
            ReasoningBlock("hidden", payloads=(_p("signature", "x", A),)),
            TextBlock("Checking.", payloads=(_p("block_fields", {"k": 1}, A),)),
            HostedActivity(ActivityId("w"), "web_search", "started", {"query": "q"}),
            HostedActivity(ActivityId("w"), "web_search", "completed", {"query": "q"}, "5 results"),
            ToolCallBlock(CallId("toolu_1"), "f", '{"a":1}'),
            ToolCallBlock(CallId("toolu_2"), "f", '{"a":2}'),
        ),
    )
    wire, dropped = assistant_wire(foreign, G)
    assert wire == {
        "role": "model",
        "parts": [
            {"text": "Checking."},
            {"text": '[hosted web_search {"query": "q"}: completed, 5 results]'},
            {
                "functionCall": {"id": "toolu_1", "name": "f", "args": {"a": 1}},
                "thoughtSignature": PORTABLE_SIGNATURE,
            },
            {"functionCall": {"id": "toolu_2", "name": "f", "args": {"a": 2}}},
        ],
    }
    assert dropped == (
        Drop("content[0]", "reasoning", FOREIGN_REASONING, "from anthropic"),
        Drop("content[1]", "payload", FOREIGN_PAYLOAD, "anthropic block_fields"),
    )


def test_context_messages_are_wrapped_in_their_tag() -> None:
    request = ModelRequest("m", (Message.context("Be nice.", "reminder"),))
    body = SHAPE.encode_request(request, provider=G).body
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "<reminder>\nBe nice.\n</reminder>"}]}
    ]


def test_an_empty_message_is_omitted_and_reported() -> None:
    only_reasoning = Message(role="assistant", provider=A, content=(ReasoningBlock("x"),))
    encoded = SHAPE.encode_request(
        ModelRequest("m", (Message.user("q"), only_reasoning)), provider=G
    )
    assert encoded.body["contents"] == [{"role": "user", "parts": [{"text": "q"}]}]
    assert encoded.dropped == (
        Drop("messages[1].content[0]", "reasoning", FOREIGN_REASONING, "from anthropic"),
        Drop("messages[1]", "message", EMPTY, "nothing left to send"),
    )


def test_an_undecodable_signature_payload_is_an_error() -> None:
    bad = Message(
        role="assistant",
        provider=G,
        content=(TextBlock("t", payloads=(_p("thought_signature", 5),)),),
    )
    with pytest.raises(PayloadError, match="thought_signature payload is not a str"):
        assistant_wire(bad, G)
