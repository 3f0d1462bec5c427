"""Every request an MCP server makes of the client recorded in the
conversation log as a `server-request` event (elelem.turns.sampling.
recording_requests): the event kind's round trip through SQLite and a real
PostgreSQL, and its cost counted with the turn's."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from cli_helpers import run
from elelem.conversation import Conversation, Draft, ServerRequest
from elelem.conversation.store import Store
from elelem.providers.costs import events_cost
from elelem.providers.pricing import price
from elelem.vocabulary import Usage
from test_store import Ticker, opener, pg_url  # noqa: F401  (pg_url: the fixture)

SAMPLED = ServerRequest(
    "poet",
    "sampling/createMessage",
    "served",
    {"messages": [["user", "A haiku on \x1b[2Jrain"]], "system": None, "max_tokens": 60},
    "anthropic",
    "claude-sonnet-4-5",
    Usage(input=1000, output=200),
)


@pytest.fixture(params=["sqlite", "postgres"])
def any_store(request: pytest.FixtureRequest) -> Iterator[Store]:
    opened = opener(request.param, request)(clock=Ticker())
    yield opened
    opened.close()


def test_a_server_request_round_trips_through_the_store(any_store: Store) -> None:
    conv = Conversation.create(any_store)
    conv.start_turn()
    declined = ServerRequest("booker", "elicitation/create", "decline", {"mode": "form"})
    conv.append(Draft.of(SAMPLED, turn=1), Draft.of(declined, turn=1))
    again = Conversation.open(any_store, conv.id)
    stored = [e for e in again.events if e.kind == "server-request"]
    assert [e.body for e in stored] == [SAMPLED, declined]
    assert again.history() == ()  # changes no projection
    # Priced with the turn, as of when it was stored.
    expected = price("anthropic", "claude-sonnet-4-5", SAMPLED.usage, at=None)
    assert events_cost(again.events).total == expected.total
    assert expected.total is not None and expected.total > Decimal(0)


def server_requests(env: dict[str, str]) -> list[dict[str, Any]]:
    """The `server-request` event bodies of the latest conversation (its
    export); `elelem ask`'s records are checked where it ran:
    test_mcp_sampling_cli (sampling) and test_mcp_elicit_terminal
    (elicitation)."""
    import json

    exported = run(env, "export", "last")
    assert exported.returncode == 0, exported.stderr
    events = [json.loads(line) for line in exported.stdout.splitlines()]
    return [e["body"] for e in events if e.get("kind") == "server-request"]
