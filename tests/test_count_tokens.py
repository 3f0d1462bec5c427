"""client.count_tokens: the provider's counting endpoint where it has one,
against loopback servers; the local estimate otherwise, saying which."""

from __future__ import annotations

import asyncio
import json

import pytest

from elelem import Client, SyncClient
from elelem.errors import AuthenticationError, MalformedStreamError
from elelem.testing.servers import LoopbackServer, status
from elelem.tokens import estimate_messages
from elelem.vocabulary import Message, ToolSpec
from toolloop_wires import WIRES

WEATHER = ToolSpec(
    "weather",
    "The weather in a city",
    {"type": "object", "properties": {"city": {"type": "string"}}},
)
WIRE = {w.shape: w for w in WIRES}


def count(shape: str, reply_body: bytes, code: int = 200) -> tuple[object, dict[str, object], str]:
    wire = WIRE[shape]
    with LoopbackServer([status(code, reply_body)]) as server:
        with SyncClient(env=wire.env(server), max_retries=0) as client:
            result = client.count_tokens(
                wire.model, "How warm is Paris?", tools=[WEATHER], system="Be brief."
            )
        (sent,) = server.requests
    return result, json.loads(sent.body), sent.path


def test_anthropic_count_tokens() -> None:
    result, body, path = count("anthropic_messages", b'{"input_tokens": 412}')
    assert path == "/v1/messages/count_tokens"
    assert set(body) == {"model", "messages", "system", "tools"}
    assert body["model"] == "claude-test" and body["tools"][0]["name"] == "weather"
    assert (result.input, result.source, result.note) == (412, "provider", "Anthropic count_tokens")  # type: ignore[attr-defined]


def test_openai_input_token_counting() -> None:
    answer = b'{"object": "response.input_tokens", "input_tokens": 57}'
    result, body, path = count("openai_responses", answer)
    assert path == "/v1/responses/input_tokens"
    assert "stream" not in body and "max_output_tokens" not in body
    assert body["instructions"] == "Be brief." and body["model"] == "gpt-test"
    assert (result.input, result.source, result.raw) == (  # type: ignore[attr-defined]
        57,
        "provider",
        {"object": "response.input_tokens", "input_tokens": 57},
    )


def test_gemini_count_tokens() -> None:
    result, body, path = count("gemini", b'{"totalTokens": 31, "promptTokensDetails": []}')
    assert path == "/v1beta/models/gemini-test:countTokens"
    inner = body["generateContentRequest"]
    assert inner["model"] == "models/gemini-test"  # type: ignore[index]
    assert inner["contents"][0]["parts"] == [{"text": "How warm is Paris?"}]  # type: ignore[index]
    assert inner["systemInstruction"] == {"parts": [{"text": "Be brief."}]}  # type: ignore[index]
    assert (result.input, result.source, result.note) == (31, "provider", "Gemini countTokens")  # type: ignore[attr-defined]


def test_a_wire_without_an_endpoint_is_estimated_locally_saying_so() -> None:
    wire = WIRE["openai_chat"]
    with SyncClient(env=wire.env(LoopbackServer([])), max_retries=0) as client:
        result = client.count_tokens(wire.model, "How warm is Paris?", tools=[WEATHER])
    expected = estimate_messages([Message.user("How warm is Paris?")], "deepseek", tools=[WEATHER])
    assert (result.input, result.source, result.note) == (
        expected.total,
        "estimate",
        "openai_chat has no counting endpoint",
    )
    assert result.estimate == expected


def test_a_server_without_the_endpoint_falls_back_and_a_bad_key_raises() -> None:
    result, _, _ = count("anthropic_messages", b'{"error": "no such route"}', code=404)
    assert (result.source, result.note) == (  # type: ignore[attr-defined]
        "estimate",
        "Anthropic count_tokens is not there (HTTP 404)",
    )
    denied = (
        b'{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}'
    )
    with pytest.raises(AuthenticationError):
        count("anthropic_messages", denied, code=401)


@pytest.mark.parametrize(
    ("shape", "answer", "why"),
    [
        ("anthropic_messages", b'{"tokens": 12}', "it holds no token count"),
        ("gemini", b'{"totalTokens": -1}', "it holds no token count"),
        ("openai_responses", b'{"input_tokens": true}', "it holds no token count"),
        ("anthropic_messages", b"[412]", "it holds no token count"),
    ],
)
def test_an_answer_without_a_count_is_malformed_naming_the_endpoint(
    shape: str, answer: bytes, why: str
) -> None:
    with pytest.raises(MalformedStreamError) as raised:
        count(shape, answer)
    endpoint = {
        "anthropic_messages": "Anthropic count_tokens",
        "gemini": "Gemini countTokens",
        "openai_responses": "OpenAI responses/input_tokens",
    }[shape]
    assert str(raised.value).startswith(
        f"the answer to {endpoint} is not what the API documents: {why}"
    )
    assert raised.value.retryable is False


def test_the_async_client_counts_through_the_same_exchange() -> None:
    wire = WIRE["anthropic_messages"]

    async def main() -> object:
        with LoopbackServer([status(200, b'{"input_tokens": 9}')]) as server:
            async with Client(env=wire.env(server), max_retries=0) as client:
                return await client.count_tokens(wire.model, "Hi")

    result = asyncio.run(main())
    assert (result.input, result.source, result.note) == (9, "provider", "Anthropic count_tokens")  # type: ignore[attr-defined]
