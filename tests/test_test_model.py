"""The in-process test models: the same assembler, log and tool loop as a
provider's stream, no socket; their history continues on real wires."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
import pytest

import elelem
from elelem.conversation import Conversation, SQLiteStore, TurnStart
from elelem.conversation.events import HostedBody, MessageBody, ResponseRecord
from elelem.errors import ServerError
from elelem.testing import NO_TOOL_CALLS, FunctionModel, Reply, TestModel
from elelem.testing.schema_values import SchemaValueError, value_for
from elelem.testing.servers import LoopbackServer
from elelem.tools import FunctionTool
from elelem.turns.engine import TurnResult
from elelem.vocabulary import ReasoningBlock, TextBlock, ToolCallBlock, ToolResultBlock, Usage
from toolloop_wires import WIRES, Wire


@elelem.tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"18°C in {city}"


def conversation(tmp_path: Path) -> Conversation:
    return Conversation.create(SQLiteStore(tmp_path / "log.db"))


def rows(conv: Conversation) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for e in conv.events:
        body = e.body
        if isinstance(body, MessageBody):
            for p in body.content:
                if isinstance(p, TextBlock):
                    cited = tuple(a.source.url for a in p.attributions)
                    out.append((body.role, e.response, "text", p.text, cited))
                elif isinstance(p, ReasoningBlock):
                    out.append((body.role, e.response, "reasoning", p.text))
                elif isinstance(p, ToolCallBlock):
                    out.append((body.role, e.response, "call", p.id, p.name, p.arguments))
                elif isinstance(p, ToolResultBlock):
                    out.append((body.role, e.response, "result", p.call_id, p.content, p.is_error))
        elif isinstance(body, HostedBody):
            a = body.activity
            out.append(("hosted", e.response, a.name, a.state, a.summary))
        elif isinstance(body, ResponseRecord):
            out.append(("response", e.response, body.provider, body.model, body.finish))
    return out


EXPECTED = [
    ("user", None, "text", "Weather?", ()),
    ("assistant", 1, "reasoning", "let me see"),
    ("assistant", 1, "call", "call_test_1_1", "get_weather", '{"city": "a"}'),
    ("response", 1, "test", "test-model", "tool-calls"),
    ("user", None, "result", "call_test_1_1", "18°C in a", False),
    ("assistant", 2, "reasoning", "let me see"),
    ("hosted", 2, "web_search", "started", ""),
    ("hosted", 2, "web_search", "completed", "1 result"),
    ("assistant", 2, "text", '{"get_weather": "18°C in a"}', ("https://example.com/test-source",)),
    ("response", 2, "test", "test-model", "stop"),
]


def model() -> TestModel:
    return TestModel(reasoning="let me see", citations=True, hosted=["web_search"])


def test_the_tool_loop_runs_on_the_test_model(tmp_path: Path) -> None:
    conv = conversation(tmp_path)
    test_model = model()

    async def main() -> TurnResult:
        async with elelem.Client(env={}) as client:
            return await elelem.run(conv, client, test_model, "Weather?", tools=[get_weather])

    result = asyncio.run(main())
    assert rows(conv) == EXPECTED
    assert (result.end, result.text) == ("completed", '{"get_weather": "18°C in a"}')
    assert conv.events[0].body == TurnStart("user", "test:test-model", None)
    # Usage as a provider counts it: input estimated from the request.
    assert result.responses[0].usage is not None and result.responses[0].usage.input > 0
    assert [len(r.messages) for r in test_model.requests] == [1, 3]
    assert [t.name for t in test_model.requests[0].tools] == ["get_weather"]


def test_the_blocking_loop_commits_the_same_log(tmp_path: Path) -> None:
    conv = conversation(tmp_path)
    with elelem.SyncClient(env={}) as client:
        elelem.run_sync(conv, client, model(), "Weather?", tools=[get_weather])
    assert rows(conv) == EXPECTED


class Place(msgspec.Struct):
    name: str
    country: Literal["FR", "NO"]


@dataclasses.dataclass
class Window:
    days: Annotated[int, msgspec.Meta(ge=1, le=7)]
    unit: Literal["C", "F"] = "C"


def test_arguments_built_from_each_schema_validate() -> None:
    seen: list[tuple[Any, ...]] = []

    @elelem.tool
    def forecast(place: Place, window: Window, tags: list[str], note: str | None = None) -> str:
        """A forecast."""
        seen.append((place, window, tags, note))
        return "ok"

    with elelem.SyncClient(env={}) as client:
        conv = Conversation.create(SQLiteStore(":memory:"))
        result = elelem.run_sync(conv, client, TestModel(), "go", tools=[forecast])
    assert seen == [(Place("a", "FR"), Window(1, "C"), ["a"], "a")]
    assert result.text == '{"forecast": "ok"}'


def test_named_arguments_and_chosen_tools(tmp_path: Path) -> None:
    @elelem.tool
    def other(x: int) -> str:
        """Other."""
        return str(x)

    conv = conversation(tmp_path)
    test_model = TestModel(call_tools=["get_weather"], arguments={"get_weather": {"city": "Oslo"}})
    with elelem.SyncClient(env={}) as client:
        result = elelem.run_sync(conv, client, test_model, "go", tools=[get_weather, other])
    calls = [r for r in rows(conv) if r[2] == "call"]
    assert calls == [("assistant", 1, "call", "call_test_1_1", "get_weather", '{"city": "Oslo"}')]
    assert result.text == '{"get_weather": "18°C in Oslo"}'


def test_no_tools_answers_the_fixed_text() -> None:
    async def main() -> list[str]:
        async with elelem.Client(env={}) as client, client.stream(TestModel(), "hi") as stream:
            return [t async for t in stream.text()]

    assert "".join(asyncio.run(main())) == NO_TOOL_CALLS
    client = elelem.SyncClient(env={})
    with client, client.stream(TestModel(text="one two three"), "hi") as stream:
        assert list(stream.text()) == ["one ", "two ", "three"]
        assert stream.final().finish_reason == "stop"


def test_an_async_function_model_and_its_requests(tmp_path: Path) -> None:
    async def answer(request: Any) -> Reply:
        await asyncio.sleep(0)
        last = request.messages[-1].content[0]
        if isinstance(last, ToolResultBlock):
            return Reply(text=f"it is {last.content}", usage=Usage(input=7, output=3))
        return Reply(calls=[("get_weather", {"city": "Paris"})])

    conv = conversation(tmp_path)
    function_model = FunctionModel(answer)

    async def main() -> TurnResult:
        async with elelem.Client(env={}) as client:
            return await elelem.run(conv, client, function_model, "go", tools=[get_weather])

    result = asyncio.run(main())
    assert rows(conv) == [
        ("user", None, "text", "go", ()),
        ("assistant", 1, "call", "call_test_1_1", "get_weather", '{"city": "Paris"}'),
        ("response", 1, "test", "function", "tool-calls"),
        ("user", None, "result", "call_test_1_1", "18°C in Paris", False),
        ("assistant", 2, "text", "it is 18°C in Paris", ()),
        ("response", 2, "test", "function", "stop"),
    ]
    assert result.responses[1].usage == Usage(input=7, output=3)
    assert len(function_model.requests) == 2


def test_an_async_function_model_is_refused_by_the_blocking_api(tmp_path: Path) -> None:
    async def answer(request: Any) -> str:
        return "never"

    conv = conversation(tmp_path)
    client = elelem.SyncClient(env={})
    with client, pytest.raises(TypeError, match="synchronous model function"):
        elelem.send_sync(conv, client, FunctionModel(answer), "go")
    assert rows(conv)[-1] == ("response", 1, "test", "function", "aborted")


def test_a_provider_error_from_a_function_model_is_recorded(tmp_path: Path) -> None:
    def overloaded(request: Any) -> str:
        raise ServerError("overloaded", status=529, retryable=True)

    conv = conversation(tmp_path)
    with elelem.SyncClient(env={}) as client, pytest.raises(ServerError, match="overloaded"):
        elelem.send_sync(conv, client, FunctionModel(overloaded, model="flaky"), "go")
    record = conv.events[-1].body
    assert isinstance(record, ResponseRecord)
    assert (record.finish, record.error, record.complete) == (
        "aborted",
        "server: overloaded",
        False,
    )


def test_chunks_without_a_finish_are_an_incomplete_stream(tmp_path: Path) -> None:
    from elelem.errors import IncompleteStreamError
    from elelem.stream import BlockStart, ResponseStart, TextDelta

    def cut(request: Any) -> list[Any]:
        return [ResponseStart("r1"), BlockStart(0, "text"), TextDelta(0, "half")]

    conv = conversation(tmp_path)
    with elelem.SyncClient(env={}) as client, pytest.raises(IncompleteStreamError):
        elelem.send_sync(conv, client, FunctionModel(cut), "go")
    assert [r[:4] for r in rows(conv)[1:]] == [
        ("assistant", 1, "text", "half"),
        ("response", 1, "test", "function"),
    ]


@pytest.mark.parametrize("wire", WIRES[:3], ids=[w.shape for w in WIRES[:3]])
def test_a_test_model_history_continues_on_each_wire(wire: Wire, tmp_path: Path) -> None:
    """What the test model said goes to a real wire through the portable
    projection: calls and results spelled that wire's way."""
    conv = conversation(tmp_path)
    with LoopbackServer([wire.text("Noted.")]) as server:

        async def main() -> None:
            async with elelem.Client(env=wire.env(server)) as client:
                await elelem.run(conv, client, TestModel(), "Weather?", tools=[get_weather])
                await elelem.send(conv, client, wire.model, "And now?")

        asyncio.run(main())
    body = json.dumps(json.loads(server.requests[0].body))
    assert "call_test_1_1" in body and "18\\u00b0C in a" in body and "And now?" in body
    last = rows(conv)[-1]
    assert (last[0], last[2], last[4]) == ("response", wire.model.split(":")[0], "stop")


def test_schema_values() -> None:
    assert value_for({"type": "string", "enum": ["x", "y"]}) == "x"
    assert value_for({"const": 3}) == 3
    assert value_for({"type": "integer", "exclusiveMinimum": 4}) == 5
    assert value_for({"type": "number", "minimum": 0.5, "multipleOf": 2}) == 2
    assert value_for({"type": "string", "minLength": 3}) == "aaa"
    assert value_for({"type": "string", "format": "date"}) == "2025-01-01"
    assert value_for({"type": ["null", "boolean"]}) is False
    assert value_for({"anyOf": [{"type": "null"}, {"type": "integer"}]}) == 0
    tree = {
        "$ref": "#/$defs/Node",
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "v": {"type": "integer"},
                    "kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                },
                "required": ["v"],
            }
        },
    }
    # A recursive type is followed MAX_DEPTH deep, then stops at an empty array.
    assert value_for(tree) == {"v": 0, "kids": [{"v": 0, "kids": [{"v": 0, "kids": []}]}]}
    with pytest.raises(SchemaValueError, match=r"\$.code: cannot build a value for 'pattern'"):
        value_for({"type": "object", "properties": {"code": {"type": "string", "pattern": "^x$"}}})
    assert isinstance(get_weather, FunctionTool)
    assert value_for(get_weather.spec.parameters) == {"city": "a"}


def test_complete_and_count_tokens_take_a_test_model() -> None:
    async def main() -> tuple[str, int]:
        async with elelem.Client(env={}) as client:
            done = await client.complete(TestModel(text="whole"), "hi")
            counted = await client.count_tokens(TestModel(), "hi there")
            return done.text, counted.input

    text, tokens = asyncio.run(main())
    assert text == "whole" and tokens > 0
    with elelem.SyncClient(env={}) as client:
        assert client.complete(TestModel(text="sync whole"), "hi").text == "sync whole"
        counted = client.count_tokens(TestModel(), "hi")
    assert (counted.source, counted.note) == (
        "estimate",
        "test:test-model has no counting endpoint",
    )
