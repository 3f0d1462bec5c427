"""ToolSpec.native: per-shape tool fields reach exactly their own wire, never override."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import msgspec
import pytest

import elelem.shapes
from elelem import SyncClient
from elelem.codec import dumps, loads
from elelem.errors import DecodeError, UnsupportedError
from elelem.providers.catalog import PARKED_SHAPES
from elelem.shapes import (
    anthropic_messages,
    bedrock_converse,
    gemini,
    ollama_native,
    openai_chat,
    openai_responses,
)
from elelem.testing.servers import LoopbackServer, replay
from elelem.vocabulary import CodeExecution, Message, ProviderId, TextBlock, ToolSpec
from elelem.vocabulary.registry import SHAPE_NAMES
from elelem.wire import ModelRequest

SCHEMA = {"type": "object", "properties": {"sides": {"type": "integer"}}}

NATIVE: dict[str, dict[str, Any]] = {
    "anthropic_messages": {
        "cache_control": {"type": "ephemeral"},
        "allowed_callers": ["code_execution_20250825"],
    },
    "openai_responses": {"strict": True, "defer_loading": True},
    "openai_chat": {"strict": True},
    "gemini": {"behavior": "NON_BLOCKING", "responseJsonSchema": {"type": "integer"}},
    "ollama_native": {"x-note": "kept"},
    "bedrock_converse": {"x-note": "kept"},
}
ROLL = ToolSpec("rollDie", "Roll a die", SCHEMA, NATIVE)
PLAIN = ToolSpec("now")


def _request(*tools: ToolSpec) -> ModelRequest:
    return ModelRequest("m", (Message("user", (TextBlock("hi"),), "user"),), tools=tools)


def _encode(module: Any, request: ModelRequest, provider: str) -> tuple[Any, tuple[str, ...]]:
    encoded = module.SHAPE.encode_request(request, provider=ProviderId(provider), stream=True)
    tools = encoded.body.get("tools")
    return tools, encoded.dropped


def test_anthropic_merges_its_entry_into_the_tool_object_after_elelems_fields() -> None:
    tools, dropped = _encode(anthropic_messages, _request(ROLL, PLAIN), "anthropic")
    assert msgspec.json.encode(tools) == (
        b'[{"name":"rollDie","description":"Roll a die","input_schema":'
        b'{"type":"object","properties":{"sides":{"type":"integer"}}},'
        b'"cache_control":{"type":"ephemeral"},"allowed_callers":["code_execution_20250825"]},'
        b'{"name":"now","input_schema":{"type":"object","properties":{}}}]'
    )
    assert dropped == ()


def test_responses_merges_its_entry_into_the_function_tool() -> None:
    tools, dropped = _encode(openai_responses, _request(ROLL, PLAIN), "openai")
    assert tools == [
        {
            "type": "function",
            "name": "rollDie",
            "description": "Roll a die",
            "parameters": SCHEMA,
            "strict": True,
            "defer_loading": True,
        },
        {"type": "function", "name": "now", "parameters": {"type": "object", "properties": {}}},
    ]
    assert list(tools[0]) == [
        "type",
        "name",
        "description",
        "parameters",
        "strict",
        "defer_loading",
    ]
    assert dropped == ()


@pytest.mark.parametrize(
    ("module", "provider", "native"),
    [
        (openai_chat, "openai-compatible", {"strict": True}),
        (ollama_native, "ollama", {"x-note": "kept"}),
    ],
)
def test_chat_and_ollama_merge_their_entry_into_the_function_object(
    module: Any, provider: str, native: dict[str, Any]
) -> None:
    tools, dropped = _encode(module, _request(ROLL), provider)
    function = {"name": "rollDie", "description": "Roll a die", "parameters": SCHEMA, **native}
    assert tools == [{"type": "function", "function": function}]
    assert list(tools[0]["function"]) == list(function)
    assert dropped == ()


def test_gemini_merges_its_entry_into_the_function_declaration() -> None:
    tools, dropped = _encode(gemini, _request(ROLL, PLAIN), "google")
    assert tools == [
        {
            "functionDeclarations": [
                {
                    "name": "rollDie",
                    "description": "Roll a die",
                    "parametersJsonSchema": SCHEMA,
                    "behavior": "NON_BLOCKING",
                    "responseJsonSchema": {"type": "integer"},
                },
                {"name": "now", "parametersJsonSchema": {"type": "object", "properties": {}}},
            ]
        }
    ]
    assert dropped == ()


def test_bedrock_merges_its_entry_into_the_tool_spec() -> None:
    encoded = bedrock_converse.SHAPE.encode_request(
        _request(ROLL, PLAIN), provider=ProviderId("bedrock")
    )
    assert encoded.body["toolConfig"] == {
        "tools": [
            {
                "toolSpec": {
                    "name": "rollDie",
                    "description": "Roll a die",
                    "inputSchema": {"json": SCHEMA},
                    "x-note": "kept",
                }
            },
            {
                "toolSpec": {
                    "name": "now",
                    "description": "now",
                    "inputSchema": {"json": {"type": "object", "properties": {}}},
                }
            },
        ]
    }
    assert encoded.dropped == ()


def test_entries_for_other_shapes_only_leave_the_wire_unchanged_and_unreported() -> None:
    only_gemini = ToolSpec("rollDie", "Roll a die", SCHEMA, {"gemini": {"behavior": "BLOCKING"}})
    for module, provider in (
        (anthropic_messages, "anthropic"),
        (openai_responses, "openai"),
        (openai_chat, "openai-compatible"),
        (ollama_native, "ollama"),
        (bedrock_converse, "bedrock"),
    ):
        with_native = module.SHAPE.encode_request(_request(only_gemini), provider=provider)
        without = module.SHAPE.encode_request(
            _request(ToolSpec("rollDie", "Roll a die", SCHEMA)), provider=provider
        )
        assert with_native.body == without.body, module.__name__
        assert with_native.dropped == (), module.__name__


@pytest.mark.parametrize(
    ("module", "provider"),
    [
        (anthropic_messages, "anthropic"),
        (openai_responses, "openai"),
        (openai_chat, "openai-compatible"),
        (gemini, "google"),
        (ollama_native, "ollama"),
        (bedrock_converse, "bedrock"),
    ],
)
def test_an_entry_keyed_by_no_shape_is_a_typed_error_listing_the_shapes(
    module: Any, provider: str
) -> None:
    typo = ToolSpec("rollDie", "", SCHEMA, {"anthropic": {"cache_control": {"type": "ephemeral"}}})
    with pytest.raises(UnsupportedError) as info:
        _encode(module, _request(typo), provider)
    known = ", ".join(sorted({module.SHAPE.name, *SHAPE_NAMES.members()}))
    assert "anthropic_messages, " in known and "openai_chat" in known
    assert str(info.value) == (
        "tool 'rollDie': native fields keyed by 'anthropic', which is no registered shape "
        f"(known shapes: {known})"
    )


@pytest.mark.parametrize(
    ("module", "provider", "field", "reserved"),
    [
        (anthropic_messages, "anthropic", "input_schema", "description, input_schema, name, type"),
        (anthropic_messages, "anthropic", "type", "description, input_schema, name, type"),
        (openai_responses, "openai", "parameters", "description, name, parameters, type"),
        (openai_chat, "openai-compatible", "name", "description, name, parameters"),
        (gemini, "google", "parameters", "description, name, parameters, parametersJsonSchema"),
        (ollama_native, "ollama", "description", "description, name, parameters"),
        (bedrock_converse, "bedrock", "inputSchema", "description, inputSchema, name"),
    ],
)
def test_a_native_field_elelem_writes_is_a_typed_error_naming_tool_and_field(
    module: Any, provider: str, field: str, reserved: str
) -> None:
    shape = module.SHAPE.name
    clash = ToolSpec("rollDie", "Roll a die", SCHEMA, {shape: {"strict": True, field: "x"}})
    with pytest.raises(UnsupportedError) as info:
        module.SHAPE.encode_request(_request(clash), provider=ProviderId(provider))
    assert str(info.value) == (
        f"tool 'rollDie': native field {field!r} for {shape} is one elelem writes itself "
        f"({reserved}) and is never overridden"
    )


def test_native_shape_names_are_every_shape_package_and_each_encoders_key() -> None:
    # A parked shape builds no request, so it takes no native tool fields.
    packages = [
        importlib.import_module(f"elelem.shapes.{info.name}")
        for info in pkgutil.iter_modules(elelem.shapes.__path__)
        if info.ispkg and info.name not in PARKED_SHAPES
    ]
    # Every shape package's name is a registered shape name (ToolSpec.native keys).
    assert {p.SHAPE.name for p in packages} <= set(SHAPE_NAMES.members())
    for package in packages:
        encoder = importlib.import_module(f"{package.__name__}.encoder")
        assert package.SHAPE.name == encoder.SHAPE_NAME


def test_codec_round_trips_native_and_old_bytes_still_decode() -> None:
    spec = ToolSpec("f", "", {"type": "object"}, {"openai_chat": {"strict": True}})
    data = dumps(spec)
    assert data == (
        b'{"name":"f","description":"","parameters":{"type":"object"},'
        b'"native":{"openai_chat":{"strict":true}}}'
    )
    assert loads(data, ToolSpec) == spec
    old = loads(b'{"name":"f","description":"","parameters":{"type":"object"}}', ToolSpec)
    assert old == ToolSpec("f", "", {"type": "object"}) and old.native == {}


def test_native_must_be_json_objects() -> None:
    with pytest.raises(DecodeError) as info:
        ToolSpec("f", native={"gemini": {"behavior": float("nan")}})
    assert (str(info.value), info.value.path) == (
        "tool 'f' native fields is not JSON (at $.native.gemini.behavior)",
        "$.native.gemini.behavior",
    )
    with pytest.raises(DecodeError) as not_object:
        ToolSpec("f", native={"gemini": ["behavior"]})  # type: ignore[dict-item]
    assert not_object.value.path == "$.native.gemini"
    with pytest.raises(DecodeError):
        loads(b'{"name":"f","native":{"gemini":[1]}}', ToolSpec)


REPLY = (
    b'{"id":"msg_1","type":"message","role":"assistant","model":"claude-x",'
    b'"content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn",'
    b'"usage":{"input_tokens":5,"output_tokens":2}}'
)


def test_client_sends_allowed_callers_and_cache_control_to_anthropic_byte_exact() -> None:
    env = {"ANTHROPIC_API_KEY": "sk-ant-test-000", "ELELEM_CONFIG": "/nonexistent/x.toml"}
    with LoopbackServer([replay(REPLY, content_type="application/json")]) as server:
        env["ANTHROPIC_BASE_URL"] = server.url
        with SyncClient(env=env) as client:
            response = client.complete(
                "anthropic:claude-x",
                "roll",
                tools=[ROLL],
                hosted_tools=[CodeExecution("code_execution_20250825")],
            )
    assert response.content == (TextBlock("ok"),)
    (request,) = server.requests
    assert request.body == (
        b'{"model":"claude-x","max_tokens":4096,'
        b'"messages":[{"role":"user","content":[{"type":"text","text":"roll"}]}],'
        b'"tools":[{"name":"rollDie","description":"Roll a die","input_schema":'
        b'{"type":"object","properties":{"sides":{"type":"integer"}}},'
        b'"cache_control":{"type":"ephemeral"},"allowed_callers":["code_execution_20250825"]},'
        b'{"type":"code_execution_20250825","name":"code_execution"}]}'
    )
