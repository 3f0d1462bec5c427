"""The neutral structured-output option (:attr:`GenerationOptions.output`): its
canonical bytes and validation, each shape's exact wire spelling and dropped
lines, the chat dialects' downgrades, ``options.extra`` winning, and the
OpenAI Responses request through :class:`~elelem.Client` over a loopback server."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from elelem import Client
from elelem.codec import dumps, loads
from elelem.errors import DecodeError
from elelem.shapes.anthropic_messages import encoder as anthropic
from elelem.shapes.bedrock_converse import encoder as bedrock
from elelem.shapes.gemini import encoder as gemini
from elelem.shapes.ollama_native import encoder as ollama
from elelem.shapes.openai_chat import encoder as chat
from elelem.shapes.openai_chat.dialects import DIALECTS, dialect_for
from elelem.shapes.openai_responses import encoder as responses
from elelem.testing.servers import LoopbackServer, replay
from elelem.vocabulary import (
    GenerationOptions,
    JsonObjectOutput,
    JsonSchemaOutput,
    Message,
    OutputFormat,
    ProviderId,
    ReasoningOptions,
)
from elelem.vocabulary.drop import ADJUSTED, UNSUPPORTED, Drop
from elelem.wire import ModelRequest

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
NAMED = JsonSchemaOutput(SCHEMA, name="city", description="A city.")
PLAIN = JsonSchemaOutput(SCHEMA)
ANY_OBJECT = JsonObjectOutput()
# OpenAI's fields for NAMED: beside ``type`` on Responses, under ``json_schema`` on Chat.
NAMED_FIELDS: dict[str, Any] = {
    "name": "city",
    "schema": SCHEMA,
    "strict": True,
    "description": "A city.",
}
NAMED_CHAT = {"type": "json_schema", "json_schema": NAMED_FIELDS}


def label_lines(label: str) -> tuple[Drop, ...]:
    """The dropped lines of NAMED on a wire that takes a bare schema."""
    return (
        Drop("options.output.name", "name", UNSUPPORTED, f"'city': {label} takes no schema name"),
        Drop(
            "options.output.description",
            "description",
            UNSUPPORTED,
            f"{label} takes no schema description",
        ),
    )


def request(output: OutputFormat | None, **options: Any) -> ModelRequest:
    return ModelRequest(
        "m-1",
        (Message.user("hello"),),
        options=GenerationOptions(max_tokens=50, output=output, **options),
    )


# -- the option and its canonical bytes ------------------------------------------------


def test_the_option_has_canonical_bytes_and_round_trips() -> None:
    options = GenerationOptions(max_tokens=10, output=NAMED)
    data = (
        b'{"max_tokens":10,"temperature":null,"top_p":null,"stop":[],"reasoning":null,'
        b'"tool_choice":null,"extra":{},"cache":null,"output":{"type":"json_schema",'
        b'"schema":{"type":"object","properties":{"city":{"type":"string"}},'
        b'"required":["city"],"additionalProperties":false},"name":"city","strict":true,'
        b'"description":"A city."},"seed":null,"context_editing":null}'
    )
    assert dumps(options) == data
    assert loads(data, GenerationOptions) == options
    any_object = GenerationOptions(output=ANY_OBJECT)
    assert dumps(any_object).endswith(
        b'"cache":null,"output":{"type":"json_object"},"seed":null,"context_editing":null}'
    )
    assert loads(dumps(any_object), GenerationOptions) == any_object


def test_options_stored_before_the_option_existed_still_decode() -> None:
    old = (
        b'{"max_tokens":10,"temperature":null,"top_p":null,"stop":[],"reasoning":null,'
        b'"tool_choice":null,"extra":{},"cache":null}'
    )
    assert loads(old, GenerationOptions) == GenerationOptions(max_tokens=10)
    assert loads(old, GenerationOptions).output is None


def test_a_schema_that_is_not_a_json_object_is_a_decode_error_with_its_path() -> None:
    with pytest.raises(DecodeError) as decoded:
        loads(b'{"output":{"type":"json_schema","schema":[1]}}', GenerationOptions)
    assert decoded.value.path == "$.output.schema"
    with pytest.raises(DecodeError) as built:
        JsonSchemaOutput([1])  # type: ignore[arg-type]
    assert built.value.path == "$.schema"
    assert "structured output schema must be a JSON object, not list" in str(built.value)
    with pytest.raises(DecodeError) as nested:
        JsonSchemaOutput({"type": "object", "default": {1, 2}})  # type: ignore[dict-item]
    assert nested.value.path == "$.schema.default"
    with pytest.raises(DecodeError) as unnamed:
        JsonSchemaOutput(SCHEMA, name="")
    assert unnamed.value.path == "$.name"


def test_an_unknown_output_type_or_field_is_refused() -> None:
    with pytest.raises(DecodeError) as kind:
        loads(b'{"output":{"type":"yaml"}}', GenerationOptions)
    assert kind.value.path == "$.output.type"
    with pytest.raises(DecodeError) as field:
        loads(b'{"output":{"type":"json_object","schema":{}}}', GenerationOptions)
    assert "schema" in str(field.value)


# -- OpenAI Responses ------------------------------------------------------------------


def test_responses_sends_text_format_json_schema_with_every_field() -> None:
    encoded = responses.encode_request(request(NAMED), provider=ProviderId("openai"))
    assert encoded.body["text"] == {"format": {"type": "json_schema", **NAMED_FIELDS}}
    assert encoded.dropped == ()


def test_responses_leaves_out_an_empty_description_and_sends_strict_false() -> None:
    output = JsonSchemaOutput(SCHEMA, strict=False)
    encoded = responses.encode_request(request(output), provider=ProviderId("openai"))
    assert encoded.body["text"] == {
        "format": {"type": "json_schema", "name": "output", "schema": SCHEMA, "strict": False}
    }


def test_responses_sends_json_object() -> None:
    encoded = responses.encode_request(request(ANY_OBJECT), provider=ProviderId("openai"))
    assert encoded.body["text"] == {"format": {"type": "json_object"}}
    assert encoded.dropped == ()


def test_responses_without_the_option_sends_no_text_field() -> None:
    assert "text" not in responses.encode_request(request(None), provider=ProviderId("openai")).body


def test_responses_a_callers_own_text_in_extra_wins() -> None:
    own = {"format": {"type": "text"}, "verbosity": "low"}
    encoded = responses.encode_request(
        request(NAMED, extra={"text": own}), provider=ProviderId("openai")
    )
    assert encoded.body["text"] == own


# -- OpenAI Chat Completions and its dialects ------------------------------------------


def test_chat_sends_response_format_json_schema_nested_under_json_schema() -> None:
    encoded = chat.encode_request(request(NAMED), provider=ProviderId("openai"))
    assert encoded.body["response_format"] == NAMED_CHAT
    assert encoded.dropped == ()


def test_chat_sends_json_object() -> None:
    encoded = chat.encode_request(request(ANY_OBJECT), provider=ProviderId("openai"))
    assert encoded.body["response_format"] == {"type": "json_object"}
    assert encoded.dropped == ()


@pytest.mark.parametrize(
    "provider",
    [*sorted(name for name, d in DIALECTS.items() if d.output == "openai"), "unknown-server"],
)
def test_openai_style_dialects_send_both_forms_as_openai_does(provider: str) -> None:
    p = ProviderId(provider)
    schema = chat.encode_request(request(PLAIN), provider=p)
    assert schema.body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "output", "schema": SCHEMA, "strict": True},
    }
    assert [line for line in schema.dropped if "structured" in line] == []
    obj = chat.encode_request(request(ANY_OBJECT), provider=p)
    assert obj.body["response_format"] == {"type": "json_object"}


def test_the_dialect_decisions_are_the_documented_ones() -> None:
    assert dialect_for("deepseek").output == "json_object_only"
    assert dialect_for("perplexity").output == "json_schema_only"
    assert {name for name, d in DIALECTS.items() if d.output != "openai"} == {
        "deepseek",
        "perplexity",
    }


def test_deepseek_gets_json_object_for_a_schema_and_the_downgrade_is_reported() -> None:
    encoded = chat.encode_request(request(NAMED), provider=ProviderId("deepseek"))
    assert encoded.body["response_format"] == {"type": "json_object"}
    assert encoded.dropped == (
        Drop(
            "options.output",
            "schema",
            ADJUSTED,
            "deepseek takes json_object only; json_object sent, schema 'city' not enforced",
        ),
    )
    obj = chat.encode_request(request(ANY_OBJECT), provider=ProviderId("deepseek"))
    assert obj.body["response_format"] == {"type": "json_object"}
    assert obj.dropped == ()


def test_perplexity_takes_a_schema_and_reports_a_schema_less_request() -> None:
    schema = chat.encode_request(request(NAMED), provider=ProviderId("perplexity"))
    assert schema.body["response_format"] == NAMED_CHAT
    assert schema.dropped == ()
    obj = chat.encode_request(request(ANY_OBJECT), provider=ProviderId("perplexity"))
    assert "response_format" not in obj.body
    assert obj.dropped == (
        Drop(
            "options.output",
            "json_object",
            UNSUPPORTED,
            "perplexity has no schema-less JSON mode; give a JsonSchemaOutput",
        ),
    )


def test_chat_a_callers_own_response_format_in_extra_wins() -> None:
    own = {"type": "json_object"}
    for provider in ("openai", "deepseek"):
        encoded = chat.encode_request(
            request(NAMED, extra={"response_format": own}), provider=ProviderId(provider)
        )
        assert encoded.body["response_format"] == own


# -- Anthropic Messages ----------------------------------------------------------------


def test_anthropic_sends_output_config_format_and_reports_the_labels() -> None:
    encoded = anthropic.encode_request(request(NAMED), provider=ProviderId("anthropic"))
    assert encoded.body == {
        "model": "m-1",
        "max_tokens": 50,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hello"}]}],
        "output_config": {"format": {"type": "json_schema", "schema": SCHEMA}},
        "stream": True,
    }
    # Generally available: no beta header.
    assert encoded.headers == {"anthropic-version": "2023-06-01"}
    assert encoded.dropped == label_lines("Anthropic")


def test_anthropic_a_default_name_without_description_loses_nothing() -> None:
    encoded = anthropic.encode_request(request(PLAIN), provider=ProviderId("anthropic"))
    assert encoded.body["output_config"] == {"format": {"type": "json_schema", "schema": SCHEMA}}
    assert encoded.dropped == ()


def test_anthropic_keeps_the_effort_beside_the_format_in_one_output_config() -> None:
    encoded = anthropic.encode_request(
        request(PLAIN, reasoning=ReasoningOptions(effort="low")),
        provider=ProviderId("anthropic"),
    )
    assert encoded.body["output_config"] == {
        "effort": "low",
        "format": {"type": "json_schema", "schema": SCHEMA},
    }


def test_anthropic_has_no_json_object_mode_and_says_so() -> None:
    encoded = anthropic.encode_request(request(ANY_OBJECT), provider=ProviderId("anthropic"))
    assert "output_config" not in encoded.body
    assert encoded.dropped == (
        Drop(
            "options.output",
            "json_object",
            UNSUPPORTED,
            "Anthropic has no schema-less JSON mode; give a JsonSchemaOutput",
        ),
    )


def test_anthropic_a_callers_own_output_config_in_extra_wins() -> None:
    own = {"format": {"type": "json_schema", "schema": {"type": "object"}}}
    encoded = anthropic.encode_request(
        request(PLAIN, extra={"output_config": own}), provider=ProviderId("anthropic")
    )
    assert encoded.body["output_config"] == own


# -- Gemini ----------------------------------------------------------------------------


def test_gemini_sends_the_json_mime_type_and_response_json_schema() -> None:
    encoded = gemini.encode_request(request(NAMED), provider=ProviderId("gemini"))
    assert encoded.body["generationConfig"] == {
        "maxOutputTokens": 50,
        "responseMimeType": "application/json",
        "responseJsonSchema": SCHEMA,
    }
    assert encoded.dropped == label_lines("Gemini")


def test_gemini_json_object_is_the_mime_type_alone() -> None:
    encoded = gemini.encode_request(
        ModelRequest("m-1", (Message.user("hi"),), options=GenerationOptions(output=ANY_OBJECT)),
        provider=ProviderId("gemini"),
    )
    assert encoded.body["generationConfig"] == {"responseMimeType": "application/json"}
    assert encoded.dropped == ()


def test_gemini_a_callers_own_generation_config_in_extra_wins() -> None:
    own = {"responseMimeType": "text/x.enum"}
    encoded = gemini.encode_request(
        request(PLAIN, extra={"generationConfig": own}), provider=ProviderId("gemini")
    )
    assert encoded.body["generationConfig"] == own


# -- Ollama native ---------------------------------------------------------------------


def test_ollama_sends_the_schema_as_format() -> None:
    encoded = ollama.encode_request(request(PLAIN), provider=ProviderId("ollama"))
    assert encoded.body == {
        "model": "m-1",
        "messages": [{"role": "user", "content": "hello"}],
        "stream": True,
        "options": {"num_predict": 50},
        "format": SCHEMA,
    }
    assert encoded.dropped == ()
    named = ollama.encode_request(request(NAMED), provider=ProviderId("ollama"))
    assert named.dropped == label_lines("Ollama")


def test_ollama_json_object_is_format_json_and_extra_wins() -> None:
    encoded = ollama.encode_request(request(ANY_OBJECT), provider=ProviderId("ollama"))
    assert encoded.body["format"] == "json"
    assert encoded.dropped == ()
    own = ollama.encode_request(
        request(PLAIN, extra={"format": "json"}), provider=ProviderId("ollama")
    )
    assert own.body["format"] == "json"


# -- Bedrock Converse ------------------------------------------------------------------


def test_bedrock_sends_output_config_text_format_with_the_schema_as_a_string() -> None:
    encoded = bedrock.encode_request(request(NAMED), provider=ProviderId("bedrock"))
    assert encoded.body["outputConfig"] == {
        "textFormat": {
            "type": "json_schema",
            "structure": {
                "jsonSchema": {
                    "schema": '{"type":"object","properties":{"city":{"type":"string"}},'
                    '"required":["city"],"additionalProperties":false}',
                    "name": "city",
                    "description": "A city.",
                }
            },
        }
    }
    assert encoded.dropped == ()
    plain = bedrock.encode_request(request(PLAIN), provider=ProviderId("bedrock"))
    definition = plain.body["outputConfig"]["textFormat"]["structure"]["jsonSchema"]
    assert set(definition) == {"schema", "name"}
    assert json.loads(definition["schema"]) == SCHEMA


def test_bedrock_has_no_json_object_mode_and_says_so() -> None:
    encoded = bedrock.encode_request(request(ANY_OBJECT), provider=ProviderId("bedrock"))
    assert "outputConfig" not in encoded.body
    assert encoded.dropped == (
        Drop(
            "options.output",
            "json_object",
            UNSUPPORTED,
            "Bedrock has no schema-less JSON mode; give a JsonSchemaOutput",
        ),
    )


def test_bedrock_a_callers_own_output_config_in_extra_wins() -> None:
    own = {"textFormat": {"type": "json_schema", "structure": {"jsonSchema": {"schema": "{}"}}}}
    encoded = bedrock.encode_request(
        request(PLAIN, extra={"outputConfig": own}), provider=ProviderId("bedrock")
    )
    assert encoded.body["outputConfig"] == own


# -- through the client, over a loopback server ----------------------------------------


def _responses_reply(text: str) -> bytes:
    response = {
        "id": "resp_1",
        "object": "response",
        "model": "gpt-5",
        "status": "in_progress",
        "output": [],
    }
    item = {"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress"}
    done_item = {
        **item,
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": response},
        {"type": "response.output_item.added", "output_index": 0, "item": {**item, "content": []}},
        {
            "type": "response.content_part.added",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []},
        },
        {
            "type": "response.output_text.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": text,
        },
        {
            "type": "response.output_text.done",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "text": text,
        },
        {"type": "response.output_item.done", "output_index": 0, "item": done_item},
        {
            "type": "response.completed",
            "response": {
                **response,
                "status": "completed",
                "output": [done_item],
                "usage": {"input_tokens": 5, "output_tokens": 4, "total_tokens": 9},
            },
        },
    ]
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def test_the_client_sends_text_format_and_gets_the_json_reply() -> None:
    async def main() -> tuple[list[dict[str, Any]], str]:
        with LoopbackServer([replay(_responses_reply('{"city":"Oslo"}'))]) as server:
            env = {
                "OPENAI_BASE_URL": server.url,
                "OPENAI_API_KEY": "sk-test-key",
                "ELELEM_CONFIG": "/nonexistent/elelem.toml",
            }
            async with Client(env=env) as client:
                options = GenerationOptions(output=NAMED)
                async with client.stream("openai:gpt-5", "where?", options=options) as stream:
                    final = await stream.final()
                return [json.loads(r.body) for r in server.requests], final.text

    sent, text = asyncio.run(main())
    assert [body["text"] for body in sent] == [{"format": {"type": "json_schema", **NAMED_FIELDS}}]
    assert json.loads(text) == {"city": "Oslo"}
