"""Tools from Python functions: schema from type hints, validated arguments."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Annotated, Literal, TypedDict

import msgspec
import pytest

from elelem.tools import FunctionTool, ToolOutcome, tool
from elelem.vocabulary import ImageBlock


class Place(msgspec.Struct):
    city: str
    country: str | None = None


@dataclasses.dataclass
class Window:
    days: int
    hourly: bool = False


class Extras(TypedDict):
    wind: bool


def forecast(
    place: Place,
    window: Window,
    unit: Literal["celsius", "fahrenheit"] = "celsius",
    extras: Extras | None = None,
    limit: Annotated[int, msgspec.Meta(description="At most this many rows", ge=1)] = 3,
) -> str:
    """Forecast the weather for a place.

    Returns one line per day."""
    return f"{place.city}/{place.country}: {window.days}d {unit} {extras} {limit}"


def test_schema_of_nested_types_is_exact() -> None:
    t = FunctionTool(forecast)
    assert t.spec.name == "forecast"
    assert t.spec.description == "Forecast the weather for a place.\n\nReturns one line per day."
    assert t.spec.parameters == {
        "type": "object",
        "properties": {
            "place": {
                "title": "Place",
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "country": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
                },
                "required": ["city"],
            },
            "window": {
                "title": "Window",
                "type": "object",
                "properties": {
                    "days": {"type": "integer"},
                    "hourly": {"type": "boolean", "default": False},
                },
                "required": ["days"],
            },
            "unit": {"enum": ["celsius", "fahrenheit"], "default": "celsius"},
            "extras": {
                "anyOf": [
                    {
                        "title": "Extras",
                        "type": "object",
                        "properties": {"wind": {"type": "boolean"}},
                        "required": ["wind"],
                    },
                    {"type": "null"},
                ],
                "default": None,
            },
            "limit": {
                "description": "At most this many rows",
                "type": "integer",
                "minimum": 1,
                "default": 3,
            },
        },
        "required": ["place", "window"],
        "additionalProperties": False,
    }


def test_arguments_are_decoded_into_the_hinted_types() -> None:
    t = FunctionTool(forecast)
    kwargs = t.decode(
        '{"place": {"city": "Paris"}, "window": {"days": 2}, "extras": {"wind": true}}'
    )
    assert kwargs == {
        "place": Place("Paris"),
        "window": Window(2),
        "unit": "celsius",
        "extras": {"wind": True},
        "limit": 3,
    }
    out = asyncio.run(
        t.call('{"place": {"city": "Paris", "country": "FR"}, "window": {"days": 1}}')
    )
    assert out == ToolOutcome("Paris/FR: 1d celsius None 3")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            '{"place": {"city": 7}, "window": {"days": 1}}',
            "Expected `str`, got `int` - at `$.place.city`",
        ),
        (
            '{"place": {"city": "P"}, "window": {"days": 1}, "limit": 0}',
            "Expected `int` >= 1 - at `$.limit`",
        ),
        (
            '{"place": {"city": "P"}, "window": {"days": 1}, "unit": "kelvin"}',
            "Invalid enum value 'kelvin' - at `$.unit`",
        ),
        ('{"window": {"days": 1}}', "Object missing required field `place`"),
        (
            '{"place": {"city": "P"}, "window": {"days": 1}, "x": 1}',
            "Object contains unknown field `x`",
        ),
        ('{"place": ', "Input data was truncated"),
    ],
)
def test_invalid_arguments_are_an_error_result_not_an_exception(
    arguments: str, message: str
) -> None:
    out = asyncio.run(FunctionTool(forecast).call(arguments))
    assert out == ToolOutcome(f"invalid arguments for forecast: {message}", is_error=True)


def test_decorator_async_options_and_results() -> None:
    @tool(idempotent=True, timeout=5)
    async def lookup(key: str) -> dict[str, int]:
        """Look a key up."""
        return {key: len(key)}

    assert lookup.idempotent is True and lookup.timeout == 5 and lookup.is_async
    assert lookup.spec.parameters == {
        "type": "object",
        "properties": {"key": {"type": "string"}},
        "required": ["key"],
        "additionalProperties": False,
    }
    assert asyncio.run(lookup.call('{"key": "abc"}')) == ToolOutcome('{"abc":3}')

    @tool
    def nothing() -> None:
        pass

    assert nothing() is None  # still callable as the function
    assert nothing.spec.description == ""
    assert asyncio.run(nothing.call("")) == ToolOutcome("")


def test_undescribable_functions_are_refused() -> None:
    def star(*args: int) -> None: ...

    with pytest.raises(TypeError, match=r"tool 'star': \*args parameters cannot be described"):
        FunctionTool(star)
    with pytest.raises(TypeError, match="needs name="):
        FunctionTool(lambda: None)
    FunctionTool(lambda: None, name="noop")


class Node(msgspec.Struct):
    value: int
    children: list[Node] = []


def test_recursive_types_keep_their_definitions() -> None:
    def walk(tree: Node) -> int:
        return tree.value

    params = FunctionTool(walk).spec.parameters
    assert isinstance(params, dict)
    assert params["properties"] == {
        "tree": {
            "title": "Node",
            "type": "object",
            "properties": {
                "value": {"type": "integer"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}, "default": []},
            },
            "required": ["value"],
        }
    }
    assert set(params["$defs"]) == {"Node"}


def test_a_function_returning_an_image_attaches_it() -> None:
    png = ImageBlock.from_bytes(b"\x89PNG\r\n\x1a\n", "image/png")

    @tool
    def screenshot() -> ImageBlock:
        """A screenshot."""
        return png

    assert asyncio.run(screenshot.call("{}")) == ToolOutcome("", attachments=(png,))


def test_an_unresolvable_parameter_hint_names_the_parameter() -> None:
    def broken(x: NoSuchType) -> None:  # type: ignore[name-defined]  # noqa: F821
        pass

    with pytest.raises(TypeError, match="tool 'broken': cannot resolve the hint of 'x'"):
        FunctionTool(broken)
