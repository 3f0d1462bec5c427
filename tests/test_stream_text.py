"""``stream.text()`` and ``stream.reasoning()`` on recorded streams, async and sync."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from elelem import Client, SyncClient
from elelem.recordings.cassettes import load
from elelem.testing.servers import LoopbackServer, replay

DEEPSEEK = "vercel__ai/packages__deepseek__src__chat____fixtures____deepseek-reasoning.chunks.txt"
ANTHROPIC = (
    "vercel__ai/packages__anthropic__src____fixtures____anthropic-clear-thinking.1.chunks.txt"
)


def recorded_deltas(path: Path, text_key: str, reasoning_key: str) -> tuple[list[str], list[str]]:
    """The non-empty text and reasoning pieces, read straight from the recording."""
    texts: list[str] = []
    reasoning: list[str] = []
    for line in path.read_text().splitlines():
        frame = json.loads(line)
        if "choices" in frame:
            delta = frame["choices"][0]["delta"]
            texts += [delta[text_key]] if delta.get(text_key) else []
            reasoning += [delta[reasoning_key]] if delta.get(reasoning_key) else []
        elif frame.get("type") == "content_block_delta":
            delta = frame["delta"]
            texts += [delta["text"]] if delta.get("text") else []
            reasoning += [delta["thinking"]] if delta.get("thinking") else []
    return texts, reasoning


def env_for(url: str) -> dict[str, str]:
    return {
        "DEEPSEEK_API_KEY": "sk-loopback",
        "ELELEM_DEEPSEEK_BASE_URL": url,
        "ANTHROPIC_API_KEY": "sk-ant-loopback",
        "ANTHROPIC_BASE_URL": url,
        "ELELEM_CONFIG": "/nonexistent/elelem.toml",
    }


def test_text_and_reasoning_iterators_async(corpus: Path) -> None:
    path = corpus / DEEPSEEK
    texts, reasoning = recorded_deltas(path, "content", "reasoning_content")
    body = load(path).interactions[0].response.body

    async def main() -> tuple[list[str], list[str], str, str]:
        with LoopbackServer([replay(body, chunk_size=700), replay(body)]) as server:
            async with Client(env=env_for(server.url)) as client:
                async with client.stream("deepseek:deepseek-reasoner", "q") as stream:
                    got_text = [t async for t in stream.text()]
                    result = await stream.final()
                async with client.stream("deepseek:deepseek-reasoner", "q") as stream:
                    got_reasoning = [t async for t in stream.reasoning()]
        return (
            got_text,
            got_reasoning,
            result.text,
            "".join(b.text for b in result.blocks if type(b).__name__ == "ReasoningBlock"),
        )

    got_text, got_reasoning, text, thought = asyncio.run(main())
    assert got_text == texts and len(texts) == 13
    assert got_reasoning == reasoning and len(reasoning) == 205
    assert "".join(got_text) == text
    assert "".join(got_reasoning) == thought


def test_text_and_reasoning_iterators_sync(corpus: Path) -> None:
    path = corpus / ANTHROPIC
    texts, reasoning = recorded_deltas(path, "", "")
    body = load(path).interactions[0].response.body
    with (
        LoopbackServer([replay(body, chunk_size=300), replay(body)]) as server,
        SyncClient(env=env_for(server.url)) as client,
    ):
        with client.stream("anthropic:claude-sonnet-4-5", "q") as stream:
            got_text = list(stream.text())
            result = stream.final()
        with client.stream("anthropic:claude-sonnet-4-5", "q") as stream:
            got_reasoning = list(stream.reasoning())
    assert got_text == texts and "".join(texts) == result.text
    assert got_reasoning == reasoning
    assert (len(texts), len(reasoning)) == (3, 9)
