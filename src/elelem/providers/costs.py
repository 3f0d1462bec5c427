"""What responses, turns and conversations cost (see :mod:`elelem.providers.pricing`).

A cost is computed from the stored response records: each record's
provider, model and usage, priced as of the time the record was committed.
A price the database does not know is "unknown", never 0, and a sum with an
unknown part is unknown.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal

from elelem.conversation.events import Event, ResponseRecord, ServerRequest
from elelem.providers.pricing import Cost, batch_price, price, total


def response_cost(record: ResponseRecord, at: datetime | str | None = None) -> Cost:
    """The cost of one response, priced as of ``at`` (now by default), at
    the batch price for a response of a batch."""
    when = datetime.fromisoformat(at) if isinstance(at, str) else at
    if record.error and record.usage is None and record.response_id is None:
        # Refused before the model answered (an HTTP error status, a refused
        # connection): no response began, so none was billed.
        return Cost(Decimal(0), Decimal(0), Decimal(0))
    cost = price(record.provider or "unknown", record.model or "unknown", record.usage, at=when)
    return batch_price(cost) if record.tier == "batch" else cost


def records_cost(records: Iterable[ResponseRecord]) -> Cost:
    """The cost of a turn's (or any) response records, priced now."""
    return total(response_cost(r) for r in records)


def events_cost(events: Iterable[Event]) -> Cost:
    """The cost of every response record among ``events`` (a conversation's,
    or one turn's), and of every sampling request an MCP server had served
    (a :class:`ServerRequest` with usage), each priced as of when it was
    stored."""
    costs: list[Cost] = []
    for e in events:
        if e.kind == "response" and isinstance(e.body, ResponseRecord):
            costs.append(response_cost(e.body, e.at))
        elif isinstance(e.body, ServerRequest) and e.body.usage is not None:
            body = e.body
            when = datetime.fromisoformat(e.at) if isinstance(e.at, str) else e.at
            costs.append(
                price(body.provider or "unknown", body.model or "unknown", body.usage, at=when)
            )
    return total(costs)


__all__ = ["events_cost", "records_cost", "response_cost"]
