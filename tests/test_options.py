"""Generation options through each shape's key table: where each goes, and what is reported."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

from elelem.shapes import (
    anthropic_messages,
    bedrock_converse,
    gemini,
    ollama_native,
    openai_chat,
    openai_responses,
)
from elelem.shapes.common import Dropped
from elelem.shapes.options import (
    NotTaken,
    ToolChoiceSpelling,
    check_table,
    sampling_options,
    tool_choice,
)
from elelem.vocabulary import Drop, GenerationOptions, Message, ProviderId, ToolSpec
from elelem.vocabulary.drop import UNSUPPORTED
from elelem.wire import ModelRequest

ALL = GenerationOptions(max_tokens=100, temperature=0.5, top_p=0.9, stop=("END",), seed=7)


def _encode(module: ModuleType, provider: str, options: GenerationOptions, **kw: Any) -> Any:
    request = ModelRequest("m", (Message.user("q"),), options=options, **kw)
    return module.SHAPE.encode_request(request, provider=ProviderId(provider), stream=False)


def _seed_drop(detail: str) -> Drop:
    return Drop("options.seed", "seed", UNSUPPORTED, detail)


@pytest.mark.parametrize(
    ("module", "provider", "fields", "dropped"),
    [
        (
            anthropic_messages,
            "anthropic",
            {"max_tokens": 100, "temperature": 0.5, "top_p": 0.9, "stop_sequences": ["END"]},
            (_seed_drop("Anthropic Messages takes no sampling seed"),),
        ),
        (
            openai_responses,
            "openai",
            {"max_output_tokens": 100, "temperature": 0.5, "top_p": 0.9},
            (
                Drop("options.stop", "stop", UNSUPPORTED, "OpenAI Responses has no stop parameter"),
                _seed_drop("OpenAI Responses has no seed parameter"),
            ),
        ),
        (
            openai_chat,
            "deepseek",
            {"max_tokens": 100, "temperature": 0.5, "top_p": 0.9, "stop": ["END"], "seed": 7},
            (),
        ),
        (
            openai_chat,
            "openai",
            {
                "max_completion_tokens": 100,
                "temperature": 0.5,
                "top_p": 0.9,
                "stop": ["END"],
                "seed": 7,
            },
            (),
        ),
        (
            gemini,
            "google",
            {
                "generationConfig": {
                    "maxOutputTokens": 100,
                    "temperature": 0.5,
                    "topP": 0.9,
                    "stopSequences": ["END"],
                    "seed": 7,
                }
            },
            (),
        ),
        (
            bedrock_converse,
            "bedrock",
            {
                "inferenceConfig": {
                    "maxTokens": 100,
                    "temperature": 0.5,
                    "topP": 0.9,
                    "stopSequences": ["END"],
                }
            },
            (_seed_drop("Converse takes no sampling seed"),),
        ),
        (
            ollama_native,
            "ollama-native",
            {
                "options": {
                    "num_predict": 100,
                    "temperature": 0.5,
                    "top_p": 0.9,
                    "stop": ["END"],
                    "seed": 7,
                }
            },
            (),
        ),
    ],
)
def test_each_sampling_option_goes_where_the_table_says_or_is_reported(
    module: ModuleType, provider: str, fields: dict[str, Any], dropped: tuple[Drop, ...]
) -> None:
    encoded = _encode(module, provider, ALL)
    assert {k: encoded.body[k] for k in fields} == fields
    assert encoded.dropped == dropped
    # Unset options write nothing.
    plain = _encode(module, provider, GenerationOptions())
    assert not any(k in plain.body for k in fields if k != "max_tokens")
    assert plain.dropped == ()


TOOL = (ToolSpec("get"),)


@pytest.mark.parametrize(
    ("module", "provider", "path", "modes", "named"),
    [
        (
            anthropic_messages,
            "anthropic",
            ("tool_choice",),
            {"auto": {"type": "auto"}, "none": {"type": "none"}, "any": {"type": "any"}},
            {"type": "tool", "name": "get"},
        ),
        (
            openai_responses,
            "openai",
            ("tool_choice",),
            {"auto": "auto", "none": "none", "any": "required", "required": "required"},
            {"type": "function", "name": "get"},
        ),
        (
            openai_chat,
            "deepseek",
            ("tool_choice",),
            {"auto": "auto", "none": "none", "any": "required", "required": "required"},
            {"type": "function", "function": {"name": "get"}},
        ),
        (
            gemini,
            "google",
            ("toolConfig", "functionCallingConfig"),
            {"auto": {"mode": "AUTO"}, "none": {"mode": "NONE"}, "required": {"mode": "ANY"}},
            {"mode": "ANY", "allowedFunctionNames": ["get"]},
        ),
        (
            bedrock_converse,
            "bedrock",
            ("toolConfig", "toolChoice"),
            {"auto": {"auto": {}}, "any": {"any": {}}, "required": {"any": {}}},
            {"tool": {"name": "get"}},
        ),
    ],
)
def test_tool_choice_is_spelled_per_shape(
    module: ModuleType, provider: str, path: tuple[str, ...], modes: dict[str, Any], named: Any
) -> None:
    for choice, wire in [*modes.items(), ("get", named)]:
        body = _encode(module, provider, GenerationOptions(tool_choice=choice), tools=TOOL).body
        for key in path:
            body = body[key]
        assert body == wire, choice


def test_a_mode_a_wire_lacks_is_reported() -> None:
    encoded = _encode(
        bedrock_converse, "bedrock", GenerationOptions(tool_choice="none"), tools=TOOL
    )
    assert "toolChoice" not in encoded.body["toolConfig"]
    assert encoded.dropped == (
        Drop("options.tool_choice", "tool_choice", UNSUPPORTED, "'none': Converse has no 'none'"),
    )
    bare = _encode(bedrock_converse, "bedrock", GenerationOptions(tool_choice="any"))
    assert "toolConfig" not in bare.body
    assert bare.dropped == (
        Drop("options.tool_choice", "tool_choice", UNSUPPORTED, "'any': the request has no tools"),
    )
    ollama = _encode(ollama_native, "ollama-native", GenerationOptions(tool_choice="auto"))
    assert ollama.dropped == ()


def test_a_table_must_name_every_sampling_option() -> None:
    with pytest.raises(ValueError, match=r"missing \['seed'\], unknown \['sead'\]"):
        check_table(
            "X",
            {
                "max_tokens": ("a",),
                "temperature": ("b",),
                "top_p": ("c",),
                "stop": ("d",),
                "sead": ("e",),
            },
        )


def test_the_tables_values_are_copied_into_each_body() -> None:
    spelling = ToolChoiceSpelling(("t",), {"auto": {"m": "A"}, "none": NotTaken("no")}, str)
    a: dict[str, Any] = {}
    tool_choice(GenerationOptions(tool_choice="auto"), spelling, a, Dropped())
    a["t"]["m"] = "changed"
    b: dict[str, Any] = {}
    tool_choice(GenerationOptions(tool_choice="auto"), spelling, b, Dropped())
    assert b == {"t": {"m": "A"}}
    table = check_table(
        "X",
        {
            "max_tokens": ("o", "n"),
            "temperature": ("o", "t"),
            "top_p": NotTaken("none here"),
            "stop": ("s",),
            "seed": ("o", "seed"),
        },
    )
    body: dict[str, Any] = {"o": {"keep": 1}}
    dropped = Dropped()
    sampling_options(ALL, table, body, dropped)
    assert body == {"o": {"keep": 1, "n": 100, "t": 0.5, "seed": 7}, "s": ["END"]}
    assert dropped.items == [Drop("options.top_p", "top_p", UNSUPPORTED, "none here")]
