"""Costs as the first hour sees them: a gateway's own reported cost (its
``usage.cost``) is shown, a local model costs $0, a request refused before
the model answered costs nothing, and a tiny amount is never in exponent
notation."""

from __future__ import annotations

from decimal import Decimal

from elelem.conversation.events import ResponseRecord
from elelem.providers.costs import response_cost
from elelem.providers.pricing import format_dollars, price, reported_cost
from elelem.vocabulary import Usage


def test_a_gateways_reported_cost_is_the_cost() -> None:
    # LiteLLM's proxy and OpenRouter put what they billed in usage.cost, in dollars.
    raw = {"prompt_tokens": 12, "completion_tokens": 3, "cost": 0.000042}
    usage = Usage(input=12, output=3, raw=raw)
    assert reported_cost(usage) == Decimal("0.000042")
    cost = price("litellm", "my-group", usage)
    assert (cost.total, cost.describe()) == (Decimal("0.000042"), "$0.000042")
    for bad in ("0.1", True, -1, None):
        assert reported_cost(Usage(input=1, raw={"cost": bad})) is None
    assert price("litellm", "my-group", Usage(input=1)).describe() == "cost unknown"


def test_a_local_model_costs_nothing() -> None:
    for provider in ("ollama", "ollama-native", "llamacpp"):
        assert price(provider, "llama3.2", Usage(input=10, output=2)).describe() == "$0.00"


def test_a_request_refused_before_the_model_answered_costs_nothing() -> None:
    refused = ResponseRecord(
        provider="anthropic",
        model="claude-sonnet-4-5",
        finish="aborted",
        complete=False,
        error="authentication: anthropic 401 authentication_error: invalid x-api-key",
    )
    assert response_cost(refused).describe() == "$0.00"
    begun = ResponseRecord(
        provider="anthropic",
        model="claude-sonnet-4-5",
        response_id="msg_01",
        finish="aborted",
        complete=False,
        error="server: anthropic 529 overloaded_error: Overloaded",
    )
    assert response_cost(begun).describe() == "cost unknown"  # it began: maybe billed


def test_tiny_amounts_are_never_in_exponent_notation() -> None:
    assert format_dollars(Decimal("1.2e-7")) == "0.00000012"
    assert format_dollars(Decimal("0.00000012345")) == "0.00000012"
