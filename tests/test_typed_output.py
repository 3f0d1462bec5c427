"""Typed outputs: the schema goes out on every wire, a validated instance comes
back, a mismatch is a typed error with the raw text, and partial objects
arrive as the JSON streams."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
from typing import Any, TypedDict

import msgspec
import pytest

from elelem import Client, SyncClient
from elelem.outputs import OutputError, PartialJSON, json_schema, output_format, parse_output
from elelem.testing.servers import LoopbackServer, Reply, Send, sse_body
from toolloop_wires import WIRES, Wire


class City(msgspec.Struct):
    name: str
    population: int
    landmarks: list[str]


@dataclasses.dataclass
class Point:
    x: float
    y: float
    label: str = ""


class Pet(TypedDict):
    kind: str
    age: int


VALID = '{"name": "Paris", "population": 2102650, "landmarks": ["Eiffel Tower", "Louvre"]}'
WRONG = '{"name": "Paris", "population": "two million", "landmarks": []}'
CUT = '{"name": "Paris", "population": 2102650, "landmarks": ["Eiffel T'


def schema_sent(wire: Wire, body: dict[str, Any]) -> Any:
    """Where each wire carries the schema, as the request holds it."""
    if wire.shape == "anthropic_messages":
        return body["output_config"]["format"]["schema"]
    if wire.shape == "openai_responses":
        return body["text"]["format"]["schema"]
    if wire.shape == "openai_chat":
        return body["response_format"]  # DeepSeek: JSON mode only (reported dropped)
    if wire.shape == "gemini":
        return body["generationConfig"]["responseJsonSchema"]
    if wire.shape == "bedrock_converse":
        return json.loads(body["outputConfig"]["textFormat"]["structure"]["jsonSchema"]["schema"])
    return body["format"]


def run_wire(wire: Wire, text: str) -> tuple[Any, list[Any], dict[str, Any]]:
    async def main() -> tuple[Any, list[Any], dict[str, Any]]:
        with LoopbackServer([wire.text(text)]) as server:
            async with Client(env=wire.env(server), max_retries=0) as client:
                stream = client.stream(wire.model, "Tell me about Paris", output_type=City)
                seen = [json.loads(json.dumps(v)) async for v in stream.objects()]
                try:
                    outcome: Any = await stream.output()
                except OutputError as exc:
                    outcome = exc
            return outcome, seen, json.loads(server.requests[0].body)

    return asyncio.run(main())


CITY_SCHEMA = {
    "type": "object",
    "title": "City",
    "properties": {
        "name": {"type": "string"},
        "population": {"type": "integer"},
        "landmarks": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "population", "landmarks"],
    "additionalProperties": False,
}


@pytest.mark.parametrize("wire", WIRES, ids=[w.shape for w in WIRES])
def test_valid_invalid_and_cut_answers_on_every_wire(wire: Wire) -> None:
    city, seen, body = run_wire(wire, VALID)
    assert city == City("Paris", 2102650, ["Eiffel Tower", "Louvre"])
    assert seen[-1] == json.loads(VALID)
    sent = schema_sent(wire, body)
    if wire.shape == "openai_chat":
        assert sent == {"type": "json_object"}
    else:
        assert sent == CITY_SCHEMA

    error, _, _ = run_wire(wire, WRONG)
    assert isinstance(error, OutputError) and error.raw == WRONG
    assert error.message == (
        "the answer is not a valid City: Expected `int`, got `str` - at `$.population`"
    )

    error, seen, _ = run_wire(wire, CUT)
    assert isinstance(error, OutputError) and error.raw == CUT
    assert error.message.startswith("the answer is not JSON: ")
    assert seen[-1] == {"name": "Paris", "population": 2102650, "landmarks": ["Eiffel T"]}


def anthropic_deltas(pieces: list[str]) -> bytes:
    frames: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "msg_1", "model": "claude-test",
         "usage": {"input_tokens": 10, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ]  # fmt: skip
    for piece in pieces:
        frames.append({"type": "content_block_delta", "index": 0,
                       "delta": {"type": "text_delta", "text": piece}})  # fmt: skip
    frames += [
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
    ]
    return sse_body([(str(f["type"]), json.dumps(f)) for f in frames])


def test_partial_objects_arrive_as_the_json_streams_sync() -> None:
    pieces = [
        '{"name": "Pa',
        'ris", "popul',
        'ation": 2102650, ',
        '"landmarks": ["Eiffel',
        ' Tower"',
        "]}",
    ]
    reply = Reply(script=(Send(anthropic_deltas(pieces)),))
    env = WIRES[0].env
    with (
        LoopbackServer([reply]) as server,
        SyncClient(env=env(server), max_retries=0) as client,
        client.stream("anthropic:claude-test", "Paris?", output_type=City) as stream,
    ):
        seen = [json.loads(json.dumps(v)) for v in stream.objects()]
        city = stream.output()
    assert seen == [
        {"name": "Pa"},
        {"name": "Paris"},
        {"name": "Paris", "population": 2102650},
        {"name": "Paris", "population": 2102650, "landmarks": ["Eiffel"]},
        {"name": "Paris", "population": 2102650, "landmarks": ["Eiffel Tower"]},
        {"name": "Paris", "population": 2102650, "landmarks": ["Eiffel Tower"]},
    ]
    assert city == City("Paris", 2102650, ["Eiffel Tower"])


def test_parse_returns_the_instance_and_dataclasses_and_typeddicts_work() -> None:
    wire = WIRES[1]  # Responses carries name and strictness too
    with LoopbackServer([wire.text('{"x": 1.5, "y": -2, "label": "a"}')]) as server:
        with SyncClient(env=wire.env(server), max_retries=0) as client:
            point = client.parse(wire.model, "A point", Point)
        body = json.loads(server.requests[0].body)
    assert point == Point(1.5, -2.0, "a")
    fmt = body["text"]["format"]
    # label has a default, so not every field is required: strict mode would refuse it
    assert (fmt["name"], fmt["strict"], fmt["schema"]["required"]) == ("Point", False, ["x", "y"])
    assert parse_output(Pet, '```json\n{"kind": "cat", "age": 3}\n```') == {"kind": "cat", "age": 3}
    assert output_format(Pet).strict is True


def test_a_pydantic_model_is_an_output_type() -> None:
    pydantic = pytest.importorskip("pydantic")

    class Person(pydantic.BaseModel):  # type: ignore[name-defined,misc]
        """Someone famous."""

        name: str
        born: int

    fmt = output_format(Person)
    assert (fmt.name, fmt.strict, fmt.description) == ("Person", True, "Someone famous.")
    assert fmt.schema["required"] == ["name", "born"]
    assert parse_output(Person, '{"name": "Ada", "born": 1815}') == Person(name="Ada", born=1815)
    with pytest.raises(OutputError) as info:
        parse_output(Person, '{"name": "Ada"}')
    assert info.value.raw == '{"name": "Ada"}' and "born" in info.value.message


def test_nested_structs_keep_their_definitions_and_the_root_is_inlined() -> None:
    class Trip(msgspec.Struct):
        start: City
        stops: list[City]

    schema = json_schema(Trip)
    assert schema["type"] == "object" and "$ref" not in schema
    assert schema["$defs"] == {
        "City": {k: v for k, v in CITY_SCHEMA.items() if k != "additionalProperties"}
    }
    with pytest.raises(TypeError, match="has no JSON Schema"):
        json_schema(object)
    with pytest.raises(ValueError, match="not both"):
        Client(env={"ELELEM_CONFIG": "/nonexistent"}, api_keys={"anthropic": "k"}).stream(
            "anthropic:claude-test",
            "q",
            output_type=City,
            options=__import__("elelem.vocabulary", fromlist=["x"]).GenerationOptions(
                output=output_format(City)
            ),
        )


DOC = {
    "name": 'Ada "the" Lovelace\n\u00e9\U0001f600',
    "age": 36,
    "tags": ["a", "b", [1, 2.5e3, -0.5, 0, 1e-7]],
    "ok": True,
    "none": None,
    "nested": {"x": {}, "y": [], "z": [{}]},
}


@pytest.mark.parametrize("ascii", [True, False])
def test_the_reader_gives_the_document_however_it_is_split(ascii: bool) -> None:
    text = "Here it is:\n```json\n" + json.dumps(DOC, ensure_ascii=ascii) + "\n```"
    rng = random.Random(7)
    for _ in range(200):
        reader = PartialJSON()
        i = 0
        while i < len(text):
            k = rng.randint(1, 9)
            reader.feed(text[i : i + k])
            i += k
        assert reader.done and reader.value == DOC and reader.broken is None


def test_the_reader_on_broken_input_stops_and_says_why() -> None:
    reader = PartialJSON()
    assert reader.feed('{"a": [1, 2}') is True
    assert reader.value == {"a": [1, 2]} and reader.broken == "'}' closes nothing open"
    assert reader.feed('"more"') is False
    reader = PartialJSON()
    reader.feed('{"a": tru')
    assert reader.value == {} and not reader.done
    reader.feed("e}")
    assert reader.value == {"a": True} and reader.done
    reader = PartialJSON()
    reader.feed('{"a": nope}')
    assert reader.broken == "'nope' is not a JSON value"
