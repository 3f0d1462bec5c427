"""A tool call whose arguments are not a JSON object no longer poisons the
conversation: every shape sends ``{}`` (or the text, where the wire takes
text) and reports a structured drop record (issue #33)."""

from __future__ import annotations

from typing import Any

import pytest

from elelem.providers import load_shape
from elelem.vocabulary import (
    Drop,
    Message,
    ProviderId,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from elelem.vocabulary.drop import INVALID
from elelem.wire import ModelRequest

PROVIDERS = {
    "anthropic_messages": "anthropic",
    "gemini": "gemini",
    "bedrock_converse": "bedrock",
    "ollama_native": "ollama",
}
HOSTILE = ["not json", '["a"]', "[" * 50_000 + "]" * 50_000]


def _history(arguments: str, producer: str) -> tuple[Message, ...]:
    call = ToolCallBlock("call_1", "lookup", arguments)
    return (
        Message.user("look it up"),
        Message("assistant", (TextBlock("Looking."), call), "assistant", ProviderId(producer)),
        Message("user", (ToolResultBlock("call_1", "none found", name="lookup"),), "tool"),
        Message.user("and now?"),
    )


def _calls(body: Any) -> list[Any]:
    """Every tool-call object of the wire body, whatever the shape's spelling."""
    found: list[Any] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key in ("input", "args", "arguments"):
                if key in value and ("name" in value):
                    found.append(value[key])
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(body)
    return found


@pytest.mark.parametrize("shape_name", sorted(PROVIDERS))
@pytest.mark.parametrize("native", [True, False], ids=["native", "portable"])
@pytest.mark.parametrize("arguments", HOSTILE, ids=["text", "array", "deep"])
def test_bad_arguments_are_sent_as_an_empty_object_and_reported(
    shape_name: str, native: bool, arguments: str
) -> None:
    provider = PROVIDERS[shape_name]
    producer = provider if native else "openai"
    shape = load_shape(shape_name)
    request = ModelRequest(model="m", messages=_history(arguments, producer))
    encoded = shape.encode_request(request, provider=ProviderId(provider))
    assert _calls(encoded.body) == [{}]
    assert [d for d in encoded.dropped if d.what == "arguments"] == [
        Drop(
            "messages[1].content[1]",
            "arguments",
            INVALID,
            "tool call call_1: not a JSON object; sent {}",
        )
    ]


@pytest.mark.parametrize("arguments", HOSTILE, ids=["text", "array", "deep"])
def test_interaction_steps_send_an_empty_object_and_report(arguments: str) -> None:
    from elelem.shapes.gemini_interactions.encoder import interaction_steps

    message = _history(arguments, "gemini")[1]
    steps, dropped = interaction_steps(message, "gemini")
    assert steps["steps"][1]["arguments"] == {}
    assert dropped == (
        Drop("content[1]", "arguments", INVALID, "tool call call_1: not a JSON object; sent {}"),
    )
