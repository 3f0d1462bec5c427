"""A real MCP server for the tests, written with the mcp package's server API.

``python mcp_weather_server.py`` serves over stdio; ``--http PORT`` over
streamable HTTP on 127.0.0.1, ``--sse PORT`` over the older HTTP+SSE
transport (at ``/sse``).  ``die`` exits the process in the middle of
its call, as a crashing server would; ``snapshot`` answers with an image
and the same image again in its structured content (as media servers do).
"""

from __future__ import annotations

import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ImageContent, ResourceLink, TextContent, ToolAnnotations

server = MCPServer(
    "weather",
    # A bell and a bidi override: what reaches a system prompt has neither.
    instructions="Give temperatures in \u00b0C.\x07\u202e Call get_weather once per city.",
)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def get_weather(city: str) -> str:
    """The weather in a city."""
    return {"Paris": "18°C", "Oslo": "4°C"}.get(city, "unknown city")


@server.tool()
def radar(city: str) -> list[TextContent | ImageContent | ResourceLink]:
    """A radar picture of a city, and where to find more."""
    return [
        TextContent(text=f"radar for {city}"),
        ImageContent(data="iVBORw0KGgo=", mime_type="image/png"),
        ResourceLink(name="forecast", uri=f"https://weather.example/{city}", mime_type="text/html"),
    ]


@server.prompt()
def forecast_request(city: str) -> str:
    """Ask for a city's forecast."""
    return f"What is the forecast for {city}?"


@server.resource("weather://stations", mime_type="text/plain")
def stations() -> str:
    """The cities the server knows."""
    return "Paris, Oslo"


@server.tool()
def snapshot(city: str) -> CallToolResult:
    """A camera picture of a city: an image only, with the same data structured."""
    data = "iVBORw0KGgo="
    return CallToolResult(
        content=[ImageContent(data=data, mime_type="image/png")],
        structured_content={"city": city, "image": data},
    )


@server.tool()
def die(reason: str) -> str:
    """Crash the server mid-call."""
    sys.stdout.flush()
    os._exit(3)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif len(sys.argv) > 2 and sys.argv[1] == "--sse":
        server.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
