"""History processors: applied before each request as overlays on the log,
never rewriting it; whole turns only, so no call loses its result."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import elelem
from elelem.conversation import Compaction, Conversation, SQLiteStore
from elelem.testing import FunctionModel, Reply, TestModel
from elelem.testing.servers import LoopbackServer
from elelem.turns.history import History, HistoryError, KeepLastTurns, Summarize, TrimToTokens
from elelem.vocabulary import (
    Message,
    ProviderId,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    Usage,
)
from test_test_model import get_weather
from toolloop_wires import WIRES, Wire

THREE = WIRES[:3]


def texts(request: Any) -> list[str]:
    """Each message of a neutral request as role: text (results by content)."""
    out = []
    for m in request.messages:
        for p in m.content:
            if isinstance(p, TextBlock):
                out.append(f"{m.role}: {p.text}")
            elif isinstance(p, ToolResultBlock):
                out.append(f"{m.role}: result {p.content}")
    return out


def echo(request: Any) -> Reply:
    last = request.messages[-1].content[0]
    return Reply(text=f"re {last.text}" if isinstance(last, TextBlock) else "done")


def test_keep_last_turns_sends_the_last_turns_and_keeps_the_log(tmp_path: Path) -> None:
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    model = FunctionModel(echo)
    with elelem.SyncClient(env={}) as client:
        for prompt in ("one", "two", "three"):
            elelem.send_sync(conv, client, model, prompt, history=[KeepLastTurns(2)])
    assert [texts(r) for r in model.requests] == [
        ["user: one"],
        ["user: one", "assistant: re one", "user: two"],
        ["user: two", "assistant: re two", "user: three"],
    ]
    # The log is untouched: every turn is still there.
    assert len(conv.history()) == 6 and not any(e.kind == "compaction" for e in conv.events)


def test_a_tool_call_keeps_its_result_when_turns_are_cut(tmp_path: Path) -> None:
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    model = TestModel(text="ok")
    with elelem.SyncClient(env={}) as client:
        elelem.send_sync(conv, client, model, "first")
        elelem.run_sync(
            conv, client, model, "second", tools=[get_weather], history=[KeepLastTurns(1)]
        )
    second_step = texts(model.requests[-1])
    assert second_step == ["user: second", "user: result 18°C in a"]
    calls = [
        p for m in model.requests[-1].messages for p in m.content if isinstance(p, ToolCallBlock)
    ]
    assert [c.id for c in calls] == ["call_test_2_1"]


def test_a_cut_never_starts_at_an_answer_or_a_result(tmp_path: Path) -> None:
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    model = FunctionModel(echo)
    with elelem.SyncClient(env={}) as client:
        elelem.send_sync(conv, client, model, "one")
        elelem.send_sync(conv, client, model, None)  # a turn with no user message
        elelem.send_sync(conv, client, model, "three", history=[KeepLastTurns(2)])
    # Turn 2 opens with the assistant: the cut moves on to turn 3's prompt.
    assert texts(model.requests[-1]) == ["user: three"]


def test_trim_to_tokens_drops_the_oldest_turns_first(tmp_path: Path) -> None:
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    model = FunctionModel(echo)
    long = "word " * 200
    with elelem.SyncClient(env={}) as client:
        elelem.send_sync(conv, client, model, long + "one")
        elelem.send_sync(conv, client, model, long + "two")
        elelem.send_sync(conv, client, model, "three", history=[TrimToTokens(budget=700)])
        sent = texts(model.requests[-1])
        assert [t[-8:] for t in sent] == ["word two", "word two", "r: three"]
        assert 700 >= _estimate(model.requests[-1]) > 500
        elelem.send_sync(conv, client, model, "four", history=[TrimToTokens(budget=10)])
        assert texts(model.requests[-1]) == ["user: four"]  # the last turn always goes
        with pytest.raises(HistoryError, match="no context window is known for test:function"):
            elelem.send_sync(conv, client, model, "four", history=[TrimToTokens()])
    priced = TestModel(provider=ProviderId("anthropic"), model="claude-sonnet-4-5")
    assert TrimToTokens(reserve=1000).limit(_history_of(priced)) == 199_000
    assert TrimToTokens().limit(_history_of(priced)) == 200_000 - 64_000


def _estimate(request: Any) -> int:
    from elelem.tokens import estimate_request

    return estimate_request(request, "test").total


def _history_of(model: TestModel) -> Any:
    from elelem.turns.history import History

    return History((), (), (), str(model.provider), model.model)


def test_summarize_stores_a_compaction_with_its_provenance(tmp_path: Path) -> None:
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    model = FunctionModel(echo)

    def summarize(request: Any) -> Reply:
        return Reply(text="S: " + "|".join(texts(request)[:-1]), usage=Usage(input=9, output=4))

    writer = FunctionModel(summarize, model="summarizer")
    with elelem.SyncClient(env={}) as client:
        elelem.send_sync(conv, client, model, "one")
        elelem.send_sync(conv, client, model, "two")
        history = [Summarize(writer, keep_last=1)]
        elelem.send_sync(conv, client, model, "three", history=history)
    (compaction,) = [e.body for e in conv.events if isinstance(e.body, Compaction)]
    assert compaction == Compaction(
        1, 2, "S: user: one|assistant: re one|user: two|assistant: re two",
        provider=ProviderId("test"), model="summarizer", response_id="resp_test_1",
        usage=Usage(input=9, output=4),
    )  # fmt: skip
    assert writer.requests[0].system is not None and "Summarize" in writer.requests[0].system
    assert texts(model.requests[-1]) == [f"user: {compaction.summary}", "user: three"]
    # An overlay: the events of turns 1 and 2 are all still in the log.
    assert [e.kind for e in conv.events].count("message") == 6
    assert conv.history()[0].source == "context:compaction"


def test_summarize_only_over_a_threshold(tmp_path: Path) -> None:
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    writer = FunctionModel(lambda r: "summary", model="summarizer")
    with elelem.SyncClient(env={}) as client:
        for prompt in ("one", "two", "three"):
            elelem.send_sync(conv, client, FunctionModel(echo), prompt,
                             history=[Summarize(writer, keep_last=1, over_tokens=10_000)])  # fmt: skip
    assert writer.requests == [] and not any(e.kind == "compaction" for e in conv.events)


@pytest.mark.parametrize("wire", THREE, ids=[w.shape for w in THREE])
def test_processors_on_each_wire(wire: Wire, tmp_path: Path) -> None:
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    replies = [wire.text("First answer."), wire.text("Second answer."),
               wire.text("A short summary."), wire.text("Third answer.")]  # fmt: skip
    with LoopbackServer(replies) as server:

        async def main() -> None:
            async with elelem.Client(env=wire.env(server)) as client:
                await elelem.send(conv, client, wire.model, "first question")
                await elelem.send(conv, client, wire.model, "second question")
                await elelem.send(conv, client, wire.model, "third question",
                                  history=[Summarize(keep_last=1), KeepLastTurns(1)])  # fmt: skip

        asyncio.run(main())
        summary_request = json.dumps(json.loads(server.requests[2].body))
        third = json.dumps(json.loads(server.requests[3].body))
    assert "first question" in summary_request and "Second answer." in summary_request
    assert "A short summary." in third and "third question" in third
    assert "first question" not in third and "Second answer." not in third
    (compaction,) = [e.body for e in conv.events if isinstance(e.body, Compaction)]
    assert (compaction.first_turn, compaction.last_turn, compaction.summary) == (
        1,
        2,
        "A short summary.",
    )
    assert compaction.provider == wire.model.split(":")[0] and compaction.usage is not None


@pytest.mark.parametrize("n", [0, 1.5, True, "3"])
def test_keep_last_turns_takes_a_count_only(n: Any) -> None:
    # 1.5 and True were kept; "3" was a TypeError from the comparison.
    with pytest.raises(ValueError) as caught:
        KeepLastTurns(n)
    assert str(caught.value) == f"KeepLastTurns needs n of 1 or more, not {n!r}"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"budget": -5}, "budget of 0 or more, not -5"),
        ({"budget": 2.5}, "budget of 0 or more, not 2.5"),
        ({"budget": "100"}, "budget of 0 or more, not '100'"),
        ({"reserve": -1}, "reserve of 0 or more, not -1"),
        ({"reserve": True}, "reserve of 0 or more, not True"),
    ],
)
def test_trim_to_tokens_takes_counts_only(kwargs: dict[str, Any], message: str) -> None:
    # A negative budget was kept: every history was cut to its last turn.
    with pytest.raises(ValueError) as caught:
        TrimToTokens(**kwargs)
    assert str(caught.value) == f"TrimToTokens needs {message}"
    assert TrimToTokens(budget=0, reserve=0).budget == 0


def _long_history(sizes: list[int]) -> History:
    """A history of one turn per size: a user message and an answer of
    ``size`` words each."""
    messages: list[Message] = []
    for turn, size in enumerate(sizes):
        messages += [
            Message.user(f"q{turn} " * size),
            Message("assistant", (TextBlock(f"a{turn} " * size),)),
        ]
    turns = tuple(t for t in range(len(sizes)) for _ in (0, 1))
    return History(
        tuple(messages), ((None,),) * len(messages), turns, "anthropic", "claude-sonnet-4-5"
    )


def _one_turn_at_a_time(history: History, budget: int) -> History:
    """TrimToTokens as it was: drop the oldest turn until the estimate fits."""
    turns = history.turn_numbers()
    while len(turns) > 1 and history.estimate() > budget:
        turns.pop(0)
        history = history.from_turn(turns[0])
    return history


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=40), min_size=1, max_size=30),
    st.integers(min_value=0, max_value=2000),
)
def test_trim_to_tokens_keeps_what_dropping_one_turn_at_a_time_kept(
    sizes: list[int], budget: int
) -> None:
    history = _long_history(sizes)
    assert TrimToTokens(budget=budget)(history) == _one_turn_at_a_time(history, budget)


def test_trim_to_tokens_estimates_a_long_history_log_n_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # One estimate per dropped turn made 2,000 turns take 6 s a request.
    history = _long_history([20] * 4096)
    estimates = 0
    estimate = History.estimate

    def counted(self: History) -> int:
        nonlocal estimates
        estimates += 1
        return estimate(self)

    monkeypatch.setattr(History, "estimate", counted)
    kept = TrimToTokens(budget=500)(history)
    assert kept.turn_numbers() == list(range(4088, 4096))
    assert estimates == 13  # the whole history once, then a bisection of 4,095 turns
