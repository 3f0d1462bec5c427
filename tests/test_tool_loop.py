"""The durable tool loop on the turn engine, against a scripted loopback
provider of each of the six wire shapes."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from elelem import Client, SyncClient
from elelem.conversation import Conversation, SQLiteStore, TurnStart
from elelem.conversation.events import MessageBody, ResponseRecord
from elelem.testing.servers import LoopbackServer
from elelem.tools import call_key, tool
from elelem.turns.toolloop import INTERRUPTED, ApprovalRequest, run, run_sync
from elelem.vocabulary import TextBlock, ToolCallBlock, ToolResultBlock
from toolloop_wires import WIRES, Wire, anthropic_calls, anthropic_text


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return {"Paris": "18°C", "Oslo": "4°C"}[city]


PARIS = ("call_1", "get_weather", {"city": "Paris"})


def conversation(tmp_path: Path) -> Conversation:
    return Conversation.create(SQLiteStore(tmp_path / "log.db"))


def summary(conv: Conversation) -> list[tuple[Any, ...]]:
    """The log, one row per event: kind, turn, and what it holds."""
    rows: list[tuple[Any, ...]] = []
    for e in conv.events:
        body = e.body
        if isinstance(body, TurnStart):
            rows.append(("turn-start", e.turn, body.trigger))
        elif isinstance(body, MessageBody):
            for p in body.content:
                if isinstance(p, TextBlock):
                    rows.append((body.role, e.turn, "text", p.text))
                elif isinstance(p, ToolCallBlock):
                    rows.append((body.role, e.turn, "call", p.id, p.name, json.loads(p.arguments)))
                elif isinstance(p, ToolResultBlock):
                    rows.append((body.role, e.turn, "result", p.call_id, p.content, p.is_error))
        elif isinstance(body, ResponseRecord):
            rows.append(("response", e.turn, body.finish))
    return rows


@pytest.mark.parametrize("wire", WIRES, ids=[w.shape for w in WIRES])
def test_each_shape_asks_for_a_tool_then_answers(wire: Wire, tmp_path: Path) -> None:
    conv = conversation(tmp_path)
    with LoopbackServer([wire.calls([PARIS]), wire.text("It is 18°C in Paris.")]) as server:

        async def main() -> Any:
            async with Client(env=wire.env(server)) as client:
                return await run(conv, client, wire.model, "Weather in Paris?", tools=[get_weather])

        result = asyncio.run(main())
    assert result.text == "It is 18°C in Paris."
    assert result.end == "completed"
    calls = [r for r in summary(conv) if r[2] == "call"]
    assert len(calls) == 1 and calls[0][4:] == ("get_weather", {"city": "Paris"})
    call_id = calls[0][3]
    assert summary(conv) == [
        ("turn-start", 1, "user"),
        ("user", 1, "text", "Weather in Paris?"),
        ("assistant", 1, "call", call_id, "get_weather", {"city": "Paris"}),
        ("response", 1, "tool-calls"),
        ("user", 1, "result", call_id, "18°C", False),
        ("assistant", 1, "text", "It is 18°C in Paris."),
        ("response", 1, "stop"),
    ]
    # The second request carried the result, spelled the wire's own way.
    second = server.requests[1].body.decode()
    assert "18°C" in second or "18\\u00b0C" in second
    # The wire's tool definition came from the function.
    first = json.loads(server.requests[0].body)
    assert "get_weather" in json.dumps(first) and "The weather in a city." in json.dumps(first)


def anthropic_env(server: LoopbackServer) -> dict[str, str]:
    return WIRES[0].env(server)


def run_anthropic(
    tmp_path: Path, replies: list[Any], prompt: str = "go", **kwargs: Any
) -> tuple[Conversation, Any, LoopbackServer]:
    conv = conversation(tmp_path)
    with LoopbackServer(replies) as server:

        async def main() -> Any:
            async with Client(env=anthropic_env(server)) as client:
                return await run(conv, client, "anthropic:claude-test", prompt, **kwargs)

        result = asyncio.run(main())
    return conv, result, server


def test_calls_of_one_step_run_concurrently(tmp_path: Path) -> None:
    spans: dict[int, tuple[float, float]] = {}

    @tool
    async def slow_async(n: int) -> str:
        begun = time.monotonic()
        await asyncio.sleep(0.4)
        spans[n] = (begun, time.monotonic())
        return f"async {n}"

    @tool
    def slow_sync(n: int) -> str:
        begun = time.monotonic()
        time.sleep(0.4)
        spans[n] = (begun, time.monotonic())
        return f"sync {n}"

    calls = [
        ("a", "slow_async", {"n": 1}),
        ("b", "slow_sync", {"n": 2}),
        ("c", "slow_async", {"n": 3}),
    ]
    conv, result, _ = run_anthropic(
        tmp_path, [anthropic_calls(calls), anthropic_text("done")], tools=[slow_async, slow_sync]
    )
    # All three were under way at once: the last to begin began before any ended.
    assert max(b for b, _ in spans.values()) < min(e for _, e in spans.values())
    results = [r for r in summary(conv) if r[2] == "result"]
    assert results == [
        ("user", 1, "result", "a", "async 1", False),
        ("user", 1, "result", "b", "sync 2", False),
        ("user", 1, "result", "c", "async 3", False),
    ]
    assert result.text == "done"


def test_each_call_runs_under_its_own_key_from_the_conversation_and_the_call_id(
    tmp_path: Path,
) -> None:
    seen: dict[str, str | None] = {}

    @tool
    async def keyed_async(n: int) -> str:
        await asyncio.sleep(0.05)  # the other calls run meanwhile, under their keys
        seen[f"async {n}"] = call_key()
        return "ok"

    @tool
    def keyed_sync(n: int) -> str:
        seen[f"sync {n}"] = call_key()
        return "ok"

    calls = [("a", "keyed_async", {"n": 1}), ("b", "keyed_sync", {"n": 2})]
    conv, _, _ = run_anthropic(
        tmp_path, [anthropic_calls(calls), anthropic_text("done")], tools=[keyed_async, keyed_sync]
    )
    assert seen == {"async 1": f"{conv.id}/a", "sync 2": f"{conv.id}/b"}
    assert call_key() is None  # outside a call there is none


def test_a_raising_tool_an_unknown_tool_bad_arguments_and_a_timeout_are_error_results(
    tmp_path: Path,
) -> None:
    @tool
    def explode(why: str) -> str:
        raise ValueError(f"no {why}")

    @tool(timeout=0.2)
    async def hang() -> str:
        await asyncio.sleep(30)
        return "never"

    calls = [
        ("a", "explode", {"why": "luck"}),
        ("b", "missing", {}),
        ("c", "explode", {"why": 3}),
        ("d", "hang", {}),
    ]
    conv, result, server = run_anthropic(
        tmp_path, [anthropic_calls(calls), anthropic_text("sorry")], tools=[explode, hang]
    )
    assert [r[3:] for r in summary(conv) if r[2] == "result"] == [
        ("a", "ValueError: no luck", True),
        ("b", "no tool named 'missing' (tools: explode, hang)", True),
        ("c", "invalid arguments for explode: Expected `str`, got `int` - at `$.why`", True),
        ("d", "timeout: hang did not finish within 0.2 s", True),
    ]
    sent = json.loads(server.requests[1].body)["messages"][-1]["content"]
    assert sent[0] == {"type": "tool_result", "tool_use_id": "a", "content": "ValueError: no luck",
                       "is_error": True}  # fmt: skip
    assert result.text == "sorry"


def test_a_refused_approval_is_a_result_the_model_sees(tmp_path: Path) -> None:
    asked: list[ApprovalRequest] = []

    def approve(request: ApprovalRequest) -> bool:
        asked.append(request)
        return request.arguments == '{"city": "Oslo"}'

    calls = [PARIS, ("call_2", "get_weather", {"city": "Oslo"})]
    conv, result, _ = run_anthropic(
        tmp_path,
        [anthropic_calls(calls), anthropic_text("Oslo only")],
        tools=[get_weather],
        approve=approve,
    )
    assert asked == [
        ApprovalRequest("tool", "get_weather", '{"city": "Paris"}', "call_1"),
        ApprovalRequest("tool", "get_weather", '{"city": "Oslo"}', "call_2"),
    ]
    assert [r[3:] for r in summary(conv) if r[2] == "result"] == [
        ("call_1", "refused: the user did not approve this call", True),
        ("call_2", "4°C", False),
    ]
    assert result.text == "Oslo only"


def test_max_steps_ends_the_turn_and_answers_what_is_left(tmp_path: Path) -> None:
    replies = [
        anthropic_calls([PARIS], n=1),
        anthropic_calls([("call_2", "get_weather", {"city": "Oslo"})], n=2),
    ]
    conv, result, server = run_anthropic(tmp_path, replies, tools=[get_weather], max_steps=1)
    assert result.end == "max-steps"
    assert len(server.requests) == 2
    assert [r for r in summary(conv) if r[2] == "result"] == [
        ("user", 1, "result", "call_1", "18°C", False),
        ("user", 1, "result", "call_2", "not run: the tool loop stopped at max_steps=1", True),
    ]


def test_the_sync_driver_leaves_the_same_log(tmp_path: Path) -> None:
    logs = []
    for mode in ("async", "sync"):
        conv = Conversation.create(SQLiteStore(tmp_path / f"{mode}.db"))
        with LoopbackServer([anthropic_calls([PARIS]), anthropic_text("18°C")]) as server:
            if mode == "sync":
                with SyncClient(env=anthropic_env(server)) as client:
                    result = run_sync(
                        conv, client, "anthropic:claude-test", "w?", tools=[get_weather]
                    )
            else:

                async def main(conv: Conversation = conv) -> Any:
                    async with Client(env=anthropic_env(server)) as client:
                        return await run(
                            conv, client, "anthropic:claude-test", "w?", tools=[get_weather]
                        )

                result = asyncio.run(main())
        assert result.text == "18°C"
        logs.append(summary(conv))
    assert logs[0] == logs[1]


def test_a_hosted_mcp_approval_request_is_answered_through_the_approval_callback(
    tmp_path: Path,
) -> None:
    from elelem.vocabulary import RemoteMCP
    from toolloop_wires import WIRES, _responses

    ask = {"id": "mcpr_1", "type": "mcp_approval_request", "name": "shorten",
           "arguments": '{"url":"https://x.dev"}', "server_label": "zip"}  # fmt: skip
    call = {"id": "mcp_2", "type": "mcp_call", "approval_request_id": "mcpr_1", "name": "shorten",
            "arguments": '{"url":"https://x.dev"}', "server_label": "zip", "output": "https://z/1",
            "error": None}  # fmt: skip
    asked: list[ApprovalRequest] = []

    def approve(request: ApprovalRequest) -> bool:
        asked.append(request)
        return True

    wire = WIRES[1]
    conv = conversation(tmp_path)
    server_spec = RemoteMCP("https://zip.example/mcp", "zip", require_approval="always")
    answer = {"type": "message", "id": "msg_3", "role": "assistant", "status": "completed",
              "content": [{"type": "output_text", "text": "https://z/1", "annotations": []}]}  # fmt: skip
    replies = [_responses([ask], 1), _responses([call, answer], 2)]
    with LoopbackServer(replies) as server:

        async def main() -> Any:
            async with Client(env=wire.env(server)) as client:
                return await run(conv, client, wire.model, "shorten x.dev", approve=approve,
                                 hosted_tools=[server_spec])  # fmt: skip

        result = asyncio.run(main())
    assert asked == [ApprovalRequest("mcp", "shorten", '{"url":"https://x.dev"}', "mcpr_1", "zip")]
    second = json.loads(server.requests[1].body)
    assert second["input"][-2:] == [
        ask,
        {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True},
    ]
    assert second["tools"] == [{"type": "mcp", "server_label": "zip",
                                "server_url": "https://zip.example/mcp", "require_approval": "always"}]  # fmt: skip
    assert result.text == "https://z/1"
    assert len(server.requests) == 2


def test_a_left_call_of_a_tool_this_run_does_not_have_is_settled_as_interrupted(
    tmp_path: Path,
) -> None:
    from elelem.conversation import Draft
    from elelem.vocabulary import CallId, Message, ProviderId

    conv = conversation(tmp_path)
    conv.append(Draft.of(TurnStart("user", "anthropic:claude-test"), turn=1),
                *[Draft("message", d.body, 1) for d in conv.message_drafts(Message.user("go"))])  # fmt: skip
    call = ToolCallBlock(CallId("toolu_gone"), "gone", '{"a": 1}')
    body = MessageBody("assistant", (call,), "assistant", ProviderId("anthropic"), "claude-test")
    conv.append(
        Draft("message", body, 1, 1),
        Draft.of(ResponseRecord(finish="tool-calls"), turn=1, response=1),
    )
    with LoopbackServer([anthropic_text("ok")]) as server:

        async def main() -> Any:
            async with Client(env=anthropic_env(server)) as client:
                return await run(conv, client, "anthropic:claude-test", None, tools=[get_weather])

        result = asyncio.run(main())
    assert result.text == "ok"
    assert [r for r in summary(conv) if r[2] == "result"] == [
        ("user", 1, "result", "toolu_gone", INTERRUPTED, True)
    ]


def test_run_sync_awaits_async_tools_concurrently(tmp_path: Path) -> None:
    spans: dict[int, tuple[float, float]] = {}

    @tool
    async def nap(n: int) -> str:
        begun = time.monotonic()
        await asyncio.sleep(0.3)
        spans[n] = (begun, time.monotonic())
        return f"slept {n}"

    conv = conversation(tmp_path)
    calls = [("a", "nap", {"n": 1}), ("b", "nap", {"n": 2})]
    replies = [anthropic_calls(calls), anthropic_text("rested")]
    with LoopbackServer(replies) as server, SyncClient(env=anthropic_env(server)) as client:
        result = run_sync(conv, client, "anthropic:claude-test", "nap", tools=[nap])
    assert result.text == "rested"
    # Both naps were under way at once: each began before the other ended.
    assert spans[1][0] < spans[2][1] and spans[2][0] < spans[1][1]
    assert [r[3:] for r in summary(conv) if r[2] == "result"] == [
        ("a", "slept 1", False),
        ("b", "slept 2", False),
    ]


def test_a_tool_run_text_keeps_its_steps_apart(tmp_path: Path) -> None:
    """The text before a step's calls and the answer after them are two
    paragraphs of result.text, not one run-on word ("weather.It")."""
    from toolloop_wires import anthropic_text_then_calls

    conv = conversation(tmp_path)
    wire = WIRES[0]
    replies = [
        anthropic_text_then_calls("Let me check the weather.", [PARIS]),
        anthropic_text("18°C."),
    ]
    with LoopbackServer(replies) as server:

        async def main() -> Any:
            async with Client(env=wire.env(server)) as client:
                return await run(conv, client, wire.model, "Weather in Paris?", tools=[get_weather])

        result = asyncio.run(main())
    assert result.text == "Let me check the weather.\n\n18°C."
