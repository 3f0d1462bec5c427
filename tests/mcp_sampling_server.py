"""A real MCP server for the tests that asks its client for sampling:
``haiku(topic)`` asks the client's model for a haiku and answers with it
(or with the error the client gave, and whether it declared sampling),
over the ``initialize`` revisions' back-channel only; ``limerick(topic)``
asks through the SDK's resolvers, which on 2026-07-28 carry the request in
the call's ``input_required`` result (the client answers and calls again)
and on older revisions send it mid-call."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Resolve, Sample
from mcp.shared.exceptions import MCPError
from mcp.types import CreateMessageResult, SamplingMessage, TextContent

server = MCPServer("poet")


@server.tool()
async def haiku(topic: str, ctx: Context) -> str:
    """A haiku about a topic, by the client's model (asked even when the
    client did not declare sampling, to see it refused)."""
    params = ctx.session.client_params
    if params is not None and params.capabilities.sampling is None:
        topic += " (sampling not declared)"
    try:
        result = await ctx.session.create_message(
            [
                SamplingMessage(
                    role="user", content=TextContent(type="text", text=f"A haiku on {topic}")
                )
            ],
            max_tokens=60,
            system_prompt="You write haiku.",
        )
    except MCPError as exc:  # the client's refusal is the tool's answer
        return f"refused {topic}: {exc}"
    content = result.content
    return f"{result.model}: {content.text if isinstance(content, TextContent) else content}"


def ask_limerick(topic: str) -> Sample:
    ask = TextContent(type="text", text=f"A limerick on {topic}")
    return Sample([SamplingMessage(role="user", content=ask)], max_tokens=80)


@server.tool()
async def limerick(topic: str, poem: Annotated[CreateMessageResult, Resolve(ask_limerick)]) -> str:
    """A limerick about a topic, by the client's model, on any revision."""
    content = poem.content
    return f"{poem.model}: {content.text if isinstance(content, TextContent) else content}"


if __name__ == "__main__":
    server.run()
