"""The chat stream of `elelem serve` carries no secret: one echoed by a model
split over deltas, or quoted in an error, is removed before it is sent."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path

from elelem.cli.demo import DEMO_KEY, DEMO_KEY_ENV, loopback_catalog
from elelem.client import Client
from elelem.conversation import open_store
from elelem.redaction import Redactor
from elelem.testing.asgi import ASGIServer
from elelem.testing.servers import LoopbackServer, anthropic_text_body, replay
from elelem.web.app import create_app
from elelem.web.asgi import redacted
from elelem.web.ui_chunks import UIChunk

SECRET = "sk-ant-echoed-0123456789abcdef"


async def chunks(items: list[UIChunk]) -> AsyncIterator[UIChunk]:
    for item in items:
        yield item


def run(items: list[UIChunk], redactor: Redactor) -> list[UIChunk]:
    async def collect() -> list[UIChunk]:
        return [c async for c in redacted(chunks(items), redactor)]

    return asyncio.run(collect())


def test_a_secret_split_over_deltas_is_removed() -> None:
    pieces = ["my key is sk-ant-ech", "oed-0123", "456789abcdef", " and more text"]
    items: list[UIChunk] = [
        {"type": "start"},
        {"type": "text-start", "id": "t1"},
        *({"type": "text-delta", "id": "t1", "delta": p} for p in pieces),
        {"type": "text-end", "id": "t1"},
        {"type": "data-hosted-activity", "id": "a", "data": {"status": f"searched {SECRET}"}},
        {"type": "reasoning-start", "id": "r1"},
        {"type": "reasoning-delta", "id": "r1", "delta": SECRET[:16]},
        {"type": "error", "errorText": f"authentication: bad key {SECRET}"},
        {"type": "finish"},
    ]
    out = run(items, Redactor([SECRET]))
    assert "".join(c["delta"] for c in out if c.get("id") == "t1" and "delta" in c) == (
        "my key is [redacted] and more text"
    )
    assert [c["type"] for c in out] == [
        "start",
        "text-start",
        "text-delta",
        "text-end",
        "data-hosted-activity",
        "reasoning-start",
        "reasoning-delta",  # held back until the error, then sent redacted
        "error",
        "finish",
    ]
    assert out[4]["data"]["status"] == "searched [redacted]"
    assert out[6]["delta"] == "[redacted]"
    assert out[7]["errorText"] == "authentication: bad key [redacted]"
    assert SECRET[:8] not in json.dumps(out)


def test_text_streams_on_behind_the_longest_echo() -> None:
    words = [f"word{i:02d} " for i in range(40)]  # 7 characters each
    items: list[UIChunk] = [{"type": "text-delta", "id": "t", "delta": w} for w in words]
    out = run([*items, {"type": "text-end", "id": "t"}], Redactor([SECRET]))
    deltas = [c["delta"] for c in out if c["type"] == "text-delta"]
    # Sent as it comes, cut after a space 2 × 30 characters or more behind,
    # the rest at the end: nothing lost, nothing added.
    assert "".join(deltas) == "".join(words)
    assert deltas[0] == words[0]
    assert deltas[-1] == "".join(words[-9:])
    assert len(deltas) == 32


def test_without_secrets_the_stream_is_untouched() -> None:
    items: list[UIChunk] = [{"type": "text-delta", "id": "t", "delta": "a"}]
    assert run(items, Redactor()) == items


def test_elelem_serves_chat_streams_redacted(tmp_path: Path) -> None:
    """Through the app: a model echoing the key, split over deltas, is sent
    redacted to the page."""
    body = anthropic_text_body("Your key is ", SECRET[:10], SECRET[10:], " — keep it safe.")
    with LoopbackServer(lambda _request: replay(body)) as provider:
        catalog = loopback_catalog(provider.url, {"anthropic": "anthropic_messages"})

        def client() -> Client:
            return Client(catalog=catalog, env={DEMO_KEY_ENV: DEMO_KEY})

        store = open_store(tmp_path / "s.db")
        app = create_app(
            store,
            token="tok",
            model="anthropic:claude-sonnet-4-5",
            client=client,
            redactor=Redactor([SECRET]),
        )
        with ASGIServer(app) as served:
            request = urllib.request.Request(
                f"{served.url}/api/chat?token=tok",
                data=json.dumps({"text": "what is my key?"}).encode(),
                headers={"content-type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=20) as response:
                sent = response.read().decode()
    deltas = [
        json.loads(line[6:])["delta"]
        for line in sent.splitlines()
        if line.startswith("data: {") and '"text-delta"' in line
    ]
    assert "".join(deltas) == "Your key is [redacted] — keep it safe."
    assert SECRET[:8] not in sent
