"""What a response cost, from ``genai-prices`` (the price database pydantic keeps).

:func:`price` turns one response's :class:`~elelem.vocabulary.Usage` into a
:class:`Cost` in US dollars: tokens (input, cache reads and writes, output,
reasoning) and the hosted-tool charges the database prices (web searches,
code executions, file searches, X searches).  A model or provider the
database does not know is a cost with ``total`` None and the reason, shown
as "unknown": never 0.  Costs add up (:meth:`Cost.__add__`, :func:`total`):
a sum with an unknown part is unknown, saying which part.

elelem's provider names map to the database's (``xai`` is ``x-ai``,
``bedrock`` is ``aws``); a provider of the user's own is looked up by its
API address, and a local server (Ollama, llama.cpp) has no price.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from decimal import Decimal

import msgspec

from elelem.vocabulary import Usage
from elelem.vocabulary.registry import RecordTable

PRICE_SOURCE = "genai-prices"

PROVIDER_IDS: Mapping[str, str] = RecordTable(lambda r: r.price_id or None)
"""elelem's provider names and the price database's ids for them (each
record's ``price_id``; the clouds bill the same models at their makers'
list prices)."""

LOCAL_PROVIDERS: Mapping[str, bool] = RecordTable(lambda r: True if r.local else None)
"""Providers that run on the user's own machine (records marked ``local``):
priced $0."""

IN_PROCESS_PROVIDER = "test"
"""The provider of the in-process test models (``elelem.testing``, ``-m
test``): no record, nothing sent anywhere, priced $0."""

HOSTED_UNITS = {
    "web_search": "web_searches",
    "code_execution": "code_executions",
    "file_search": "storage_searches",
    "x_search": "social_searches",
}
"""Neutral hosted counters (``Usage.hosted``) and the database's priced units."""

AUDIO_UNITS = {
    "input_audio": "input_audio_tokens",
    "output_audio": "output_audio_tokens",
    "cache_audio_read": "cache_audio_read_tokens",
}
"""The audio parts of a live session's input, output and cache reads
(``Usage.hosted`` counters the live protocols write) and the database's
units, which price them at the model's audio rates."""


class Cost(msgspec.Struct, frozen=True):
    """What one or more responses cost, in US dollars.

    ``total`` is None when the price is unknown, and ``unknown`` says why
    (the model the database does not list, say); ``input`` and ``output``
    split the total where known.  ``responses`` counts the responses summed.
    """

    total: Decimal | None
    input: Decimal | None = None
    output: Decimal | None = None
    unknown: tuple[str, ...] = ()
    responses: int = 1

    @property
    def known(self) -> bool:
        """True when every part of the cost has a price."""
        return self.total is not None

    def __add__(self, other: Cost) -> Cost:
        if self.total is None or other.total is None:
            return Cost(
                None,
                unknown=self.unknown + other.unknown,
                responses=self.responses + other.responses,
            )
        return Cost(
            self.total + other.total,
            _sum(self.input, other.input),
            _sum(self.output, other.output),
            responses=self.responses + other.responses,
        )

    def describe(self) -> str:
        """``$0.0123`` (to four significant decimals, at least a cent's
        hundredth), or ``cost unknown``."""
        if self.total is None:
            return "cost unknown"
        return "$" + format_dollars(self.total)


NO_COST = Cost(Decimal(0), Decimal(0), Decimal(0), responses=0)
"""The cost of nothing (the start of a sum)."""


def _sum(a: Decimal | None, b: Decimal | None) -> Decimal | None:
    return None if a is None or b is None else a + b


def format_dollars(amount: Decimal) -> str:
    """``0.0123`` for small amounts, ``1.23`` from a dollar up; never ``0``
    for a charge that is not zero (``0.000004``)."""
    if amount == 0:
        return "0.00"
    if amount >= 1:
        return f"{amount:,.2f}"
    text = f"{amount:.4f}"
    if Decimal(text) == 0:
        # Two significant digits, never in exponent notation ($1.2e-7).
        return (
            f"{Decimal(f'{amount:.2g}'):f}"
            if amount < Decimal("0.000001")
            else f"{amount.normalize():f}"
        )
    return text


def reported_cost(usage: Usage) -> Decimal | None:
    """The cost the provider itself reported in its usage object, in US
    dollars, where it reports one: a gateway's ``usage.cost`` (LiteLLM,
    OpenRouter), what it billed, so taken over any price list."""
    raw = usage.raw
    if not isinstance(raw, dict):
        return None
    cost = raw.get("cost")
    if isinstance(cost, bool) or not isinstance(cost, int | float) or not cost >= 0:
        return None
    return Decimal(str(cost))


def genai_usage(usage: Usage) -> dict[str, int]:
    """``usage`` in the database's units, where input and output are totals
    (cache and reasoning tokens are parts of them, not beside them)."""
    counts = {
        "input_tokens": usage.input + usage.cache_read + usage.cache_write,
        "cache_read_tokens": usage.cache_read,
        "cache_write_tokens": usage.cache_write,
        "output_tokens": usage.output + usage.reasoning,
    }
    for name, count in usage.hosted.items():
        unit = HOSTED_UNITS.get(name) or AUDIO_UNITS.get(name)
        if unit is not None and count:
            counts[unit] = counts.get(unit, 0) + count
    if "input_audio_tokens" in counts and usage.cache_read:
        # The database asks how many cached tokens were audio once any are.
        counts.setdefault("cache_audio_read_tokens", 0)
    return counts


def price(
    provider: str,
    model: str,
    usage: Usage | None,
    *,
    api_url: str | None = None,
    at: datetime | None = None,
    audio_input: int = 0,
) -> Cost:
    """The cost of one response of ``model`` at ``provider`` that used ``usage``.

    ``audio_input`` says how many of the input tokens were audio (a
    transcription's), priced at the model's audio rate where it has one.

    ``api_url`` finds a provider elelem has no name for (a configured
    OpenAI-compatible server) in the database by its address; ``at`` is when
    the request was made (prices change), now by default.  No usage, a local
    provider, or a model or provider the database lacks is an unknown cost
    saying which.
    """
    where = f"{provider}:{model}"
    if usage is None:
        return Cost(None, unknown=(f"{where}: the response reported no usage",))
    reported = reported_cost(usage)
    if reported is not None:
        return Cost(reported)
    if provider in LOCAL_PROVIDERS or provider == IN_PROCESS_PROVIDER:
        return Cost(Decimal(0), Decimal(0), Decimal(0))  # runs on the user's own machine
    provider_id = PROVIDER_IDS.get(provider)
    if provider_id is None and api_url is None:
        return Cost(None, unknown=(f"{where}: no price list for provider {provider}",))
    import genai_prices  # deferred: its price tables take a while to load

    counts = genai_usage(usage)
    if audio_input:
        counts["input_audio_tokens"] = audio_input
    try:
        if provider_id is not None:
            calc = genai_prices.calc_price(
                genai_prices.Usage(**counts),
                model,
                provider_id=provider_id,
                genai_request_timestamp=at,
            )
        else:
            calc = genai_prices.calc_price(
                genai_prices.Usage(**counts),
                model,
                provider_api_url=api_url,
                genai_request_timestamp=at,
            )
    except LookupError as exc:
        return Cost(None, unknown=(f"{where}: {PRICE_SOURCE} has no price ({exc})",))
    return Cost(calc.total_price, calc.input_price, calc.output_price)


BATCH_DISCOUNT = Decimal("0.5")
"""What a batched token costs against the standard price: Anthropic, OpenAI
and Gemini all price their batch APIs at 50%."""


def batch_price(cost: Cost) -> Cost:
    """``cost`` at the batch price (an unknown cost stays unknown)."""
    if cost.total is None:
        return cost
    return Cost(
        cost.total * BATCH_DISCOUNT,
        None if cost.input is None else cost.input * BATCH_DISCOUNT,
        None if cost.output is None else cost.output * BATCH_DISCOUNT,
        responses=cost.responses,
    )


def total(costs: Iterable[Cost]) -> Cost:
    """The sum of ``costs`` (a turn's responses, a conversation's turns)."""
    out = NO_COST
    for cost in costs:
        out = out + cost
    return out


__all__ = [
    "BATCH_DISCOUNT",
    "HOSTED_UNITS",
    "IN_PROCESS_PROVIDER",
    "LOCAL_PROVIDERS",
    "NO_COST",
    "PROVIDER_IDS",
    "Cost",
    "batch_price",
    "format_dollars",
    "genai_usage",
    "price",
    "reported_cost",
    "total",
]
