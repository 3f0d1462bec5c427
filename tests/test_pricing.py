"""Cost from genai-prices: per response, turn and conversation; unknown is never 0."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

from elelem import Client, send
from elelem.conversation import Conversation, SQLiteStore
from elelem.conversation.events import ResponseRecord
from elelem.providers.costs import events_cost, response_cost
from elelem.providers.pricing import NO_COST, Cost, format_dollars, genai_usage, price, total
from elelem.recordings.cassettes import load
from elelem.testing.servers import LoopbackServer, replay
from elelem.vocabulary import ProviderId, Usage

AT = datetime(2026, 11, 1, tzinfo=UTC)
WEB_SEARCH = (
    "vercel__ai/packages__anthropic__src____fixtures____anthropic-web-search-tool.1.chunks.txt"
)


def test_a_known_price_tokens_and_web_searches() -> None:
    usage = Usage(
        input=1000, output=200, cache_read=4000, cache_write=500, hosted={"web_search": 3}
    )
    cost = price("anthropic", "claude-sonnet-4-5-20250929", usage, at=AT)
    # $3 / $15 per million, cache reads $0.30, 5-minute writes $3.75, searches $10 / 1,000
    assert cost.input == Decimal("0.003") + Decimal("0.0012") + Decimal("0.001875")
    assert cost.output == Decimal("0.003")
    assert cost.total == cost.input + cost.output + Decimal("0.03")
    assert cost.total == Decimal("0.039075") and cost.describe() == "$0.0391"


def test_reasoning_is_priced_as_output_and_the_database_sees_totals() -> None:
    usage = Usage(input=100, output=10, reasoning=90, cache_read=50, hosted={"code_execution": 2})
    assert genai_usage(usage) == {
        "input_tokens": 150,
        "cache_read_tokens": 50,
        "cache_write_tokens": 0,
        "output_tokens": 100,
        "code_executions": 2,
    }
    flat = price("openai", "gpt-5-mini", Usage(input=100, output=100), at=AT)
    split = price("openai", "gpt-5-mini", Usage(input=100, output=10, reasoning=90), at=AT)
    assert flat.total == split.total == Decimal("0.000225")


def test_an_unknown_model_or_provider_is_unknown_never_zero() -> None:
    unknown = price("anthropic", "claude-no-such-model", Usage(input=10, output=1), at=AT)
    assert unknown.total is None and not unknown.known
    assert unknown.describe() == "cost unknown"
    assert unknown.unknown[0].startswith(
        "anthropic:claude-no-such-model: genai-prices has no price"
    )
    local = price("ollama", "llama3.2", Usage(input=10, output=1))
    assert (local.total, local.describe()) == (Decimal(0), "$0.00")  # the user's own machine
    mine = price("my-proxy", "m", Usage(input=1))
    assert mine.unknown == ("my-proxy:m: no price list for provider my-proxy",)
    assert price("anthropic", "claude-sonnet-4-5", None).describe() == "cost unknown"
    known = price("xai", "grok-4-fast", Usage(input=1000, output=100), at=AT)
    assert known.total == Decimal("0.00025")
    summed = known + unknown
    assert summed.total is None and summed.unknown == unknown.unknown and summed.responses == 2


def test_sums_and_formatting() -> None:
    a = Cost(Decimal("0.01"), Decimal("0.004"), Decimal("0.006"))
    b = Cost(Decimal("1.5"), Decimal("1"), Decimal("0.5"))
    assert total([a, b]) == Cost(Decimal("1.51"), Decimal("1.004"), Decimal("0.506"), responses=2)
    assert total([]) == NO_COST and NO_COST.describe() == "$0.00"
    assert [format_dollars(Decimal(v)) for v in ("1234.5", "0.01234", "0.0000285")] == [
        "1,234.50",
        "0.0123",
        "0.0000285",
    ]


def test_cost_of_a_recorded_response_its_turn_and_its_conversation(
    corpus: Path, tmp_path: Path
) -> None:
    body = load(corpus / WEB_SEARCH).interactions[0].response.body
    env = {
        "ANTHROPIC_BASE_URL": "",
        "ANTHROPIC_API_KEY": "sk-ant-loopback",
        "ELELEM_CONFIG": "/nonexistent/elelem.toml",
    }
    with SQLiteStore(tmp_path / "c.db") as store:

        async def main() -> Conversation:
            with LoopbackServer([replay(body), replay(body)]) as server:
                env["ANTHROPIC_BASE_URL"] = server.url
                async with Client(env=env) as client:
                    conv = Conversation.create(store)
                    first = await send(conv, client, "anthropic:claude-sonnet-4-5", "q")
                    second = await send(conv, client, "anthropic:claude-sonnet-4-5", "q2")
            (record,) = first.responses
            assert record.model == "claude-sonnet-4-20250514"
            assert record.usage is not None
            assert (record.usage.input, record.usage.output, record.usage.hosted) == (
                15665,
                795,
                {"web_search": 1, "web_fetch": 0},
            )
            # 15,665 x $3/M + 795 x $15/M + 1 search x $10/1,000
            assert first.cost.total == Decimal("0.046995") + Decimal("0.011925") + Decimal("0.01")
            assert second.cost == first.cost
            return conv

        conv = asyncio.run(main())
        whole = events_cost(conv.events)
        assert whole.total == Decimal("0.13784") and whole.responses == 2


def test_a_record_without_usage_costs_unknown() -> None:
    record = ResponseRecord(provider=ProviderId("anthropic"), model="claude-sonnet-4-5")
    assert response_cost(record).unknown == (
        "anthropic:claude-sonnet-4-5: the response reported no usage",
    )
