"""Usage limits: checked before each request from the estimate, after each
response from its usage, and before each tool step; exceeding one ends the
run with UsageLimitExceeded and the log keeps everything so far."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import elelem
from elelem.conversation import Conversation, SQLiteStore
from elelem.testing import FunctionModel, Reply, TestModel
from elelem.testing.servers import LoopbackServer
from elelem.turns.limits import UsageLimitExceeded, UsageLimits
from elelem.vocabulary import ProviderId, ToolResultBlock, Usage
from test_test_model import get_weather, rows
from toolloop_wires import WIRES, Wire

THREE = WIRES[:3]
PARIS = ("call_1", "get_weather", {"city": "Paris"})


def run_wire(
    wire: Wire, tmp_path: Path, replies: list[Any], limits: UsageLimits
) -> tuple[Conversation, UsageLimitExceeded, LoopbackServer]:
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    with LoopbackServer(replies) as server:

        async def main() -> None:
            async with elelem.Client(env=wire.env(server)) as client:
                await elelem.run(
                    conv, client, wire.model, "Weather?", tools=[get_weather], limits=limits
                )

        with pytest.raises(UsageLimitExceeded) as caught:
            asyncio.run(main())
    return conv, caught.value, server


@pytest.mark.parametrize("wire", THREE, ids=[w.shape for w in THREE])
def test_a_request_limit_stops_before_the_second_request(wire: Wire, tmp_path: Path) -> None:
    replies = [wire.calls([PARIS]), wire.text("never sent")]
    conv, exc, server = run_wire(wire, tmp_path, replies, UsageLimits(requests=1))
    assert (exc.limit, exc.maximum, exc.value, exc.when) == ("requests", 1, 2, "before-request")
    assert len(server.requests) == 1
    # Everything so far is kept: the call ran and its result is in the log.
    assert [r[2] for r in rows(conv)] == ["text", "call", wire.model.split(":")[0], "result"]
    assert rows(conv)[-1][4:] == ("18°C in Paris", False)
    assert exc.result.end == "usage-limit" and len(exc.result.responses) == 1


@pytest.mark.parametrize("wire", THREE, ids=[w.shape for w in THREE])
def test_an_output_limit_ends_the_run_after_the_response(wire: Wire, tmp_path: Path) -> None:
    # Each scripted response reports 10 input and 5 output tokens.
    replies = [wire.calls([PARIS]), wire.text("18°C.")]
    conv, exc, server = run_wire(wire, tmp_path, replies, UsageLimits(output_tokens=8))
    assert (exc.limit, exc.maximum, exc.value, exc.when) == (
        "output_tokens",
        8,
        10,
        "after-response",
    )
    assert str(exc) == "usage limit output_tokens=8 exceeded after-response: 10"
    assert len(server.requests) == 2
    assert rows(conv)[-2][2:] == ("text", "18°C.", ())
    assert rows(conv)[-1][0] == "response" and rows(conv)[-1][4] == "stop"
    assert exc.result.text == "18°C." and exc.result.usage.output == 10


@pytest.mark.parametrize("wire", THREE, ids=[w.shape for w in THREE])
def test_a_tool_call_limit_answers_the_calls_it_stops(wire: Wire, tmp_path: Path) -> None:
    replies = [wire.calls([PARIS]), wire.text("never sent")]
    conv, exc, server = run_wire(wire, tmp_path, replies, UsageLimits(tool_calls=0))
    assert (exc.limit, exc.value, exc.when) == ("tool_calls", 1, "before-tools")
    assert len(server.requests) == 1
    last = rows(conv)[-1]
    assert last[2:] == (
        "result",
        last[3],
        "not run: the usage limit tool_calls=0 was reached",
        True,
    )
    # Nothing is left unanswered for the next run to settle.
    assert elelem.turns.toolloop.unanswered(conv) == ()


def test_an_input_limit_stops_before_anything_is_sent(tmp_path: Path) -> None:
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    test_model = TestModel()
    with elelem.SyncClient(env={}) as client, pytest.raises(UsageLimitExceeded) as caught:
        elelem.send_sync(
            conv, client, test_model, "a prompt of some words", limits=UsageLimits(input_tokens=3)
        )
    exc = caught.value
    assert (exc.limit, exc.when) == ("input_tokens", "before-request")
    assert exc.value > 3 and "estimated for this request" in str(exc)
    assert test_model.requests == []
    assert [e.kind for e in conv.events] == ["turn-start", "message"]


def test_a_total_limit_counts_what_the_runs_responses_reported(tmp_path: Path) -> None:
    def answer(request: Any) -> Reply:
        usage = Usage(input=1000, output=1000)
        if isinstance(request.messages[-1].content[0], ToolResultBlock):
            return Reply(text="done", usage=usage)
        return Reply(calls=[("get_weather", {"city": "Oslo"})], usage=usage)

    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    limits = UsageLimits(total_tokens=2500)
    with elelem.SyncClient(env={}) as client:
        elelem.send_sync(conv, client, FunctionModel(answer), "one", limits=limits)
        # Each run has its own budget: the first run's 2000 tokens are not counted.
        elelem.send_sync(conv, client, FunctionModel(answer), "two", limits=limits)
        with pytest.raises(UsageLimitExceeded) as caught:
            elelem.run_sync(
                conv, client, FunctionModel(answer), "three", tools=[get_weather], limits=limits
            )
    exc = caught.value
    assert (exc.limit, exc.value, exc.when) == ("total_tokens", 4000, "after-response")
    assert rows(conv)[-2:] == [
        ("assistant", 4, "text", "done", ()),
        ("response", 4, "test", "function", "stop"),
    ]


def test_a_cost_limit_prices_the_estimate_and_the_usage(tmp_path: Path) -> None:
    priced = TestModel(provider=ProviderId("anthropic"), model="claude-sonnet-4-5")
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    with elelem.SyncClient(env={}) as client:
        with pytest.raises(UsageLimitExceeded) as caught:
            elelem.send_sync(conv, client, priced, "hi", limits=UsageLimits(cost="0.00000001"))
        assert (caught.value.limit, caught.value.when) == ("cost", "before-request")
        assert priced.requests == []
        result = elelem.send_sync(conv, client, priced, "hi", limits=UsageLimits(cost=1))
    assert result.cost.total is not None and result.cost.total < Decimal(1)


def test_a_cost_limit_without_a_price_refuses_to_spend(tmp_path: Path) -> None:
    # A provider elelem has no price list for (the test provider itself is
    # priced: it runs in-process and costs $0).
    unpriced = TestModel(provider=ProviderId("acme"), model="m-1")
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    with elelem.SyncClient(env={}) as client, pytest.raises(UsageLimitExceeded) as caught:
        elelem.send_sync(conv, client, unpriced, "hi", limits=UsageLimits(cost=5))
    assert caught.value.value is None
    assert str(caught.value) == (
        "usage limit cost=5 exceeded before-request: unknown "
        "(acme:m-1: no price list for provider acme)"
    )
    assert unpriced.requests == []


def test_a_cost_limit_lets_the_in_process_test_model_run_for_nothing(tmp_path: Path) -> None:
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    with elelem.SyncClient(env={}) as client:
        result = elelem.send_sync(conv, client, TestModel(), "hi", limits=UsageLimits(cost=0))
    assert result.cost.total == Decimal(0)


def test_limits_are_checked_values() -> None:
    with pytest.raises(ValueError, match="requests must be a count of 0 or more, not -1"):
        UsageLimits(requests=-1)
    with pytest.raises(ValueError, match="cost must be 0 or more"):
        UsageLimits(cost=-0.5)


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ({"cost": "nan"}, "cost must be 0 or more US dollars, not 'nan'"),
        ({"cost": "five"}, "cost must be 0 or more US dollars, not 'five'"),
        ({"cost": float("inf")}, "cost must be 0 or more US dollars, not inf"),
        ({"cost": [1]}, "cost must be 0 or more US dollars, not [1]"),
        ({"cost": True}, "cost must be 0 or more US dollars, not True"),
        ({"requests": True}, "requests must be a count of 0 or more, not True"),
    ],
)
def test_a_limit_that_is_no_number_is_a_value_error(given: dict[str, Any], shown: str) -> None:
    # nan and words were a decimal.InvalidOperation; True counted as 1 request.
    with pytest.raises(ValueError) as caught:
        UsageLimits(**given)
    assert str(caught.value) == f"UsageLimits.{shown}"
