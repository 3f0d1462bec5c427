"""Usage limits of one run: tokens, cost, requests and tool calls.

A :class:`UsageLimits` bounds what one :func:`elelem.send` or
:func:`elelem.run` may spend.  The engine checks it at three points:

- **before each request**, from the estimate: the input tokens the request
  would read (:func:`elelem.tokens.estimate_messages`) added to what the
  run used, and its price added to the run's cost; one more request;
- **after each response**, from the usage it reported: every token limit
  and the cost (a response's usage is in the log before the check);
- **before each tool step**, the calls the step would run added to the
  calls run so far (the calls over the limit are answered with an error
  result naming the limit, so the log has no unanswered call);
- **after each tool step**, every token limit and the cost again: an MCP
  server's sampling served during the step (a ``server-request`` event of
  the turn with usage, :func:`elelem.turns.sampling.recording_requests`)
  counts as the run's own usage.  :func:`elelem.turns.sampling.model_sampler`
  given the run's limits and conversation checks them before and after each
  sampling request and withholds an answer that went over (the server is
  refused, the request recorded with what it used), and this check then
  ends the run (a resumed run's too, after its approved calls).  Both count
  the run going on: a resumed run's own responses and sampling, from its
  decision on (:func:`elelem.turns.engine.run_events`).

Exceeding one ends the run with :class:`UsageLimitExceeded`: everything up
to that point is in the log, and the error carries the run's
:class:`~elelem.turns.engine.TurnResult` so far (turn end ``usage-limit``).
The counts: ``input_tokens`` is everything read (input, cache reads and
writes), ``output_tokens`` everything generated (output and reasoning),
``total_tokens`` both.  A response whose provider reports 0 output tokens
(or no usage) counts what it was seen to generate
(:func:`elelem.tokens.generated_tokens` of its text, reasoning and tool
calls), so ``output_tokens`` still stops it.  A cost limit needs a price: a model whose price is
unknown ends the run the first time its cost is needed, rather than spend
without a bound.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from elelem.conversation.events import ResponseRecord, ServerRequest
from elelem.conversation.projections import add_usage
from elelem.errors import ElelemError
from elelem.providers.costs import records_cost
from elelem.providers.pricing import Cost, price, total
from elelem.tokens import estimate_messages
from elelem.vocabulary import Usage, register_turn_end_reason

USAGE_LIMIT_END = register_turn_end_reason(
    "usage-limit", "a usage limit (tokens, cost, requests or tool calls) ended the run"
)


class UsageLimitExceeded(ElelemError):
    """A usage limit ended the run.

    ``limit`` names it (``input_tokens``, ``output_tokens``,
    ``total_tokens``, ``cost``, ``requests``, ``tool_calls``), ``maximum``
    is its value, ``value`` what the run would reach (None for a cost that
    has no price), ``when`` is ``before-request``, ``after-response``,
    ``before-tools`` or ``after-tools``; ``result`` is the run's result so far.
    """

    def __init__(self, limit: str, maximum: Any, value: Any, when: str, detail: str = "") -> None:
        shown = "unknown" if value is None else value
        text = f"usage limit {limit}={maximum} exceeded {when}: {shown}"
        super().__init__(f"{text} ({detail})" if detail else text)
        self.limit = limit
        self.maximum = maximum
        self.value = value
        self.when = when
        self.result: Any = None


@dataclass(frozen=True)
class Used:
    """What a run used so far."""

    usage: Usage
    cost: Cost | None
    requests: int
    tool_calls: int
    unreported: int = 0
    """Output tokens of the responses that reported none, counted from what
    they were seen to generate."""


@dataclass(frozen=True)
class UsageLimits:
    """The most one run may use; None leaves a count unbounded.  ``cost`` is
    in US dollars."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cost: Decimal | float | str | None = None
    requests: int | None = None
    tool_calls: int | None = None

    def __post_init__(self) -> None:
        for name in ("input_tokens", "output_tokens", "total_tokens", "requests", "tool_calls"):
            value = getattr(self, name)
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value < 0
            ):
                raise ValueError(f"UsageLimits.{name} must be a count of 0 or more, not {value!r}")
        if self.cost is not None:
            try:
                dollars = Decimal(str(self.cost))
            except ArithmeticError:  # decimal's InvalidOperation: not a number at all
                dollars = Decimal("NaN")
            if isinstance(self.cost, bool) or not dollars.is_finite() or dollars < 0:
                raise ValueError(
                    f"UsageLimits.cost must be 0 or more US dollars, not {self.cost!r}"
                )

    @property
    def prices(self) -> bool:
        """True when a cost limit needs prices."""
        return self.cost is not None

    def before_request(self, used: Used, estimate: int, estimate_cost: Cost | None) -> None:
        """Raise when one more request, reading ``estimate`` input tokens at
        ``estimate_cost``, would go over a limit."""
        when = "before-request"
        self._count("requests", used.requests + 1, when)
        reading = _read(used.usage) + estimate
        self._count("input_tokens", reading, when, f"{estimate} estimated for this request")
        self._count("total_tokens", used.usage.total + estimate, when)
        if estimate_cost is not None and used.cost is not None:
            self._cost(used.cost + estimate_cost, when)

    def after_response(self, used: Used) -> None:
        """Raise when what the run used is over a limit."""
        self._spent(used, "after-response")

    def after_tools(self, used: Used) -> None:
        """Raise when what the run used, with the sampling its tools had
        served, is over a limit."""
        self._spent(used, "after-tools")

    def _spent(self, used: Used, when: str) -> None:
        self._count("input_tokens", _read(used.usage), when)
        generated = used.usage.output + used.usage.reasoning + used.unreported
        self._count("output_tokens", generated, when)
        self._count("total_tokens", used.usage.total + used.unreported, when)
        if used.cost is not None:
            self._cost(used.cost, when)

    def before_tools(self, used: Used, calls: int) -> None:
        """Raise when running ``calls`` more tool calls would go over the limit."""
        self._count("tool_calls", used.tool_calls + calls, "before-tools")

    def _count(self, name: str, value: int, when: str, detail: str = "") -> None:
        maximum = getattr(self, name)
        if maximum is not None and value > maximum:
            raise UsageLimitExceeded(name, maximum, value, when, detail)

    def _cost(self, cost: Cost, when: str) -> None:
        if self.cost is None:
            return
        maximum = Decimal(str(self.cost))
        if cost.total is None:
            why = "; ".join(cost.unknown) or "no price"
            raise UsageLimitExceeded("cost", self.cost, None, when, why)
        if cost.total > maximum:
            raise UsageLimitExceeded("cost", self.cost, cost.total, when)


def used_by(
    records: Iterable[ResponseRecord],
    tool_calls: int,
    limits: UsageLimits,
    received: Sequence[int] = (),
    served: Iterable[ServerRequest] = (),
) -> Used:
    """What ``records`` (a run's responses) and ``tool_calls`` calls used;
    ``received`` the output tokens each response was seen to generate, in
    the same order (its count when it reports none); ``served`` the
    sampling MCP servers had served during the run (each a request, its
    tokens and, priced, its cost)."""
    records = tuple(records)
    # A sampling request sent to a model: served, or refused once answered
    # (it went over a limit), which keeps what it used.
    served = tuple(s for s in served if s.outcome == "served" or s.usage is not None)
    usage = Usage()
    unreported = 0
    for n, r in enumerate(records):
        reported = 0
        if r.usage is not None:
            usage = add_usage(usage, r.usage)
            reported = r.usage.output + r.usage.reasoning
        if reported == 0 and n < len(received):
            # No count at all (a provider that reports 0, or nothing): what
            # was received is the count; a count given is the provider's.
            unreported += received[n]
    for s in served:
        usage = add_usage(usage, s.usage or Usage())
    cost = None
    if limits.prices:
        sampled = (price(s.provider or "unknown", s.model or "unknown", s.usage) for s in served)
        cost = total((records_cost(records), *sampled))
    return Used(usage, cost, len(records) + len(served), tool_calls, unreported)


def check_request(
    limits: UsageLimits, used: Used, arguments: Mapping[str, Any], provider: str, model: str
) -> None:
    """:meth:`UsageLimits.before_request` for a request of ``arguments``
    (:meth:`elelem.Client.stream`'s) to ``provider``'s ``model``."""
    estimate = estimate_messages(
        arguments["messages"],
        provider,
        system=arguments.get("system"),
        tools=arguments.get("tools", ()),
    ).total
    cost = price(provider, model, Usage(input=estimate)) if limits.prices else None
    limits.before_request(used, estimate, cost)


def _read(usage: Usage) -> int:
    return usage.input + usage.cache_read + usage.cache_write


__all__ = [
    "USAGE_LIMIT_END",
    "UsageLimitExceeded",
    "UsageLimits",
    "Used",
    "check_request",
    "used_by",
]
