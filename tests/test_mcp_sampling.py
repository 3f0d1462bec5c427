"""A server's sampling requests: refused by default, served by the ``sample``
callback when given (a real MCP server process that asks).  The server asks
over the ``initialize`` revisions' back-channel (``protocol="legacy"``): the
SDK's server has none on a stateless 2026-07-28 connection."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from elelem.tools import MCPServer
from elelem.tools.mcp_sampling import SampleAnswer, SamplingRefused, SamplingRequest

SERVER = str(Path(__file__).parent / "mcp_sampling_server.py")


def haiku(**options: object) -> str:
    async def main() -> str:
        async with MCPServer.stdio(
            sys.executable, [SERVER], name="poet", protocol="legacy", **options
        ) as poet:
            (tool,) = [t for t in poet.tools if t.name == "haiku"]
            return (await tool.call('{"topic": "rain"}')).content

    return asyncio.run(main())


def test_sampling_is_refused_without_a_callback() -> None:
    assert haiku() == "refused rain (sampling not declared): Sampling not supported"


def test_the_callback_serves_a_sampling_request() -> None:
    seen: list[SamplingRequest] = []

    async def sample(request: SamplingRequest) -> SampleAnswer:
        seen.append(request)
        return SampleAnswer("Grey rain on the roof", "claude-test")

    assert haiku(sample=sample) == "claude-test: Grey rain on the roof"
    assert seen == [SamplingRequest("poet", (("user", "A haiku on rain"),), "You write haiku.", 60)]


def test_a_refusing_callback_answers_the_server_with_its_reason() -> None:
    async def sample(request: SamplingRequest) -> SampleAnswer:
        raise SamplingRefused("over the run's usage limits")

    assert haiku(sample=sample) == "refused rain: over the run's usage limits"
