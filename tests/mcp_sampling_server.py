"""A real MCP server for the tests that asks its client for sampling:
``haiku(topic)`` asks the client's model for a haiku and answers with it
(or with the error the client gave, and whether it declared sampling)."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import SamplingMessage, TextContent

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


if __name__ == "__main__":
    server.run()
