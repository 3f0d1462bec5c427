"""An MCP server whose tools answer with images, for the page's thumbnails
(tests/test_page_tools_browser.py): ``screenshot`` a real 1600×1200 PNG
beside a line of text, as a computer-use or browser MCP server returns a
screen; ``forged`` bytes that claim ``image/png`` but are an SVG carrying a
script.  ``python mcp_picture_server.py`` serves over stdio."""

from __future__ import annotations

import base64
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import ImageContent, TextContent

sys.path.insert(0, str(Path(__file__).resolve().parent))
from web_helpers import png  # the tests' own folder, put on the path above

server = MCPServer("pictures")

SCREEN = png(1600, 1200)
FORGED = (
    b'<svg xmlns="http://www.w3.org/2000/svg" onload="document.title=1"><script>1</script></svg>'
)


@server.tool()
def screenshot(city: str) -> list[TextContent | ImageContent]:
    """A screenshot of a city's weather page."""
    return [
        TextContent(text=f"the weather page of {city}"),
        ImageContent(data=base64.b64encode(SCREEN).decode(), mime_type="image/png"),
    ]


@server.tool()
def forged(city: str) -> list[ImageContent]:
    """An image that is not one."""
    return [ImageContent(data=base64.b64encode(FORGED).decode(), mime_type="image/png")]


if __name__ == "__main__":
    server.run()
