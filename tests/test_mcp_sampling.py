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


def test_a_named_model_serves_sampling_within_the_usage_limits() -> None:
    import json

    from elelem import Client
    from elelem.testing.servers import LoopbackServer
    from elelem.turns.limits import UsageLimits
    from elelem.turns.sampling import model_sampler
    from test_tool_loop import anthropic_env
    from toolloop_wires import anthropic_text

    with LoopbackServer([anthropic_text("Grey rain on the roof", 1)]) as provider:

        async def main() -> list[str]:
            async with Client(env=anthropic_env(provider)) as client:
                sample = model_sampler(client, "anthropic:claude-test", UsageLimits(requests=1))
                async with MCPServer.stdio(
                    sys.executable, [SERVER], name="poet", protocol="legacy", sample=sample
                ) as poet:
                    (tool,) = [t for t in poet.tools if t.name == "haiku"]
                    first = await tool.call('{"topic": "rain"}')
                    second = await tool.call('{"topic": "snow"}')
                    return [first.content, second.content]

        first, second = asyncio.run(main())
    assert first == "claude-test: Grey rain on the roof"
    assert second == (
        "refused snow: refused by the usage limits: "
        "usage limit requests=1 exceeded before-request: 2"
    )
    (request,) = provider.requests
    body = json.loads(request.body)
    assert (body["system"], body["max_tokens"]) == ("You write haiku.", 60)
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "A haiku on rain"}]}
    ]


def test_the_runs_own_limits_count_sampling_and_stop_it(tmp_path: Path) -> None:
    """Given the run's limits and conversation, the sampler counts the run's
    responses with its own: the answer that goes over output_tokens is
    withheld (the server refused, the record keeps what it used) and the
    run ends with the same typed error after the tool step."""
    import pytest

    import elelem
    from elelem.conversation import Conversation, ServerRequest, SQLiteStore
    from elelem.testing import FunctionModel, Reply
    from elelem.turns.limits import UsageLimitExceeded, UsageLimits
    from elelem.turns.sampling import model_sampler, recording_requests
    from elelem.vocabulary import ToolResultBlock, Usage

    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    limits = UsageLimits(output_tokens=20)
    asks = FunctionModel(lambda _: Reply(calls=[("limerick", {"topic": "rain"})],
                                         usage=Usage(input=10, output=5)))  # fmt: skip
    poet = FunctionModel(lambda _: Reply("Grey rain", usage=Usage(input=7, output=30)))

    async def main() -> None:
        async with elelem.Client() as client:
            sample = model_sampler(client, poet, limits, conversation=conv)
            async with MCPServer.stdio(sys.executable, [SERVER], name="poet", sample=sample) as s:
                with recording_requests([s], conv, asyncio.get_running_loop()):
                    await elelem.run(conv, client, asks, "A poem", tools=[s], limits=limits)

    with pytest.raises(UsageLimitExceeded) as caught:
        asyncio.run(main())
    exc = caught.value
    assert (exc.limit, exc.maximum, exc.value, exc.when) == ("output_tokens", 20, 35, "after-tools")
    assert exc.result.end == "usage-limit"
    reason = "refused by the usage limits: usage limit output_tokens=20 exceeded after-response: 35"
    (result,) = [b for m in conv.history() for b in m.content if isinstance(b, ToolResultBlock)]
    assert result.content == f"MCP error from poet: {reason}"
    (asked,) = [e.body for e in conv.events if isinstance(e.body, ServerRequest)]
    assert asked == ServerRequest("poet", "sampling/createMessage", "refused",
                                  {"max_tokens": 80, "reason": reason}, "test", "function",
                                  Usage(input=7, output=30))  # fmt: skip
