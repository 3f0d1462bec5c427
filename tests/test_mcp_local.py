"""Local MCP servers as tools of the loop: a real server written with the mcp
package's server API, started by the test over stdio and streamable HTTP."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from elelem import Client, SyncClient
from elelem.conversation import Conversation, SQLiteStore
from elelem.testing.servers import LoopbackServer
from elelem.tools import MCPServer, MCPServerError, ToolOutcome
from elelem.turns.toolloop import run, run_sync
from test_tool_loop import anthropic_env, summary
from toolloop_wires import anthropic_calls, anthropic_text

SERVER = str(Path(__file__).parent / "mcp_weather_server.py")
MODEL = "anthropic:claude-test"


def weather() -> MCPServer:
    return MCPServer.stdio(sys.executable, [SERVER], name="weather")


def test_the_servers_tools_with_their_schemas_as_given() -> None:
    async def main() -> list[Any]:
        async with weather() as server:
            return [
                (t.name, t.spec.description, t.spec.parameters, t.idempotent) for t in server.tools
            ]

    assert asyncio.run(main()) == [
        ("get_weather", "The weather in a city.", {"properties": {"city": {"title": "City", "type": "string"}},
         "required": ["city"], "title": "get_weatherArguments", "type": "object"}, True),
        ("radar", "A radar picture of a city, and where to find more.", {"properties": {"city": {
         "title": "City", "type": "string"}}, "required": ["city"], "title": "radarArguments", "type": "object"},
         False),
        ("snapshot", "A camera picture of a city: an image only, with the same data structured.",
         {"properties": {"city": {"title": "City", "type": "string"}}, "required": ["city"],
          "title": "snapshotArguments", "type": "object"}, False),
        ("die", "Crash the server mid-call.", {"properties": {"reason": {"title": "Reason", "type": "string"}},
         "required": ["reason"], "title": "dieArguments", "type": "object"}, False),
        ("read_resource", "Read a resource of the MCP server weather by its URI (as a resource link in one of "
         "its results names it).", {"type": "object", "properties": {"uri": {"type": "string",
         "description": "The resource's URI."}}, "required": ["uri"]}, True),
    ]  # fmt: skip


def test_the_loop_calls_a_stdio_servers_tools_and_maps_images_and_links(tmp_path: Path) -> None:
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    calls = [("c1", "get_weather", {"city": "Paris"}), ("c2", "radar", {"city": "Paris"})]
    with LoopbackServer(
        [anthropic_calls(calls), anthropic_text("18°C, radar attached")]
    ) as provider:

        async def main() -> Any:
            async with weather() as server, Client(env=anthropic_env(provider)) as client:
                return await run(conv, client, MODEL, "Weather in Paris?", tools=[server])

        result = asyncio.run(main())
    assert result.text == "18°C, radar attached"
    assert [r[3:] for r in summary(conv) if r[2] == "result"] == [
        ("c1", "18°C", False),
        (
            "c2",
            "radar for Paris\n[resource forecast <https://weather.example/Paris> (text/html)]",
            False,
        ),
    ]
    # The image is an attachment of the result, its bytes in the log's blob store.
    reopened = Conversation.open(conv.store, conv.id)
    radar = reopened.events[-3].body.content[1]  # type: ignore[union-attr]
    (image,) = radar.attachments
    assert image.media_type == "image/png"
    assert reopened.store.get_blob(image.source.blob.sha256) == b"\x89PNG\r\n\x1a\n"
    assert radar.payloads == ()
    second = __import__("json").loads(provider.requests[1].body)["messages"][-1]["content"][1]
    assert second["content"][-1] == {"type": "image", "source": {"type": "base64",
                                     "media_type": "image/png", "data": "iVBORw0KGgo="}}  # fmt: skip
    tools = [t["name"] for t in __import__("json").loads(provider.requests[0].body)["tools"]]
    assert tools == ["get_weather", "radar", "snapshot", "die", "read_resource"]


def test_a_server_that_dies_mid_call_is_an_error_result_and_a_failure_for_the_caller(
    tmp_path: Path,
) -> None:
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    replies = [
        anthropic_calls([("c1", "die", {"reason": "test"})], n=1),
        anthropic_calls([("c2", "get_weather", {"city": "Oslo"})], n=2),
        anthropic_text("the weather server is down", n=3),
    ]
    dead = "MCP server 'weather' stopped during a call of die: MCPError: Connection closed"
    with LoopbackServer(replies) as provider:

        async def main() -> tuple[Any, str | None]:
            async with weather() as server, Client(env=anthropic_env(provider)) as client:
                result = await run(conv, client, MODEL, "go", tools=[server])
                return result, server.failure

        result, failure = asyncio.run(main())
    assert failure == dead
    assert [r[3:] for r in summary(conv) if r[2] == "result"] == [
        ("c1", dead, True),
        ("c2", dead, True),
    ]
    assert result.text == "the weather server is down"


BROKEN = "import sys; sys.stderr.write('\\x1b[31mboom: no config\\n'); sys.exit(2)"


def test_a_server_that_cannot_start_is_a_clear_error_quoting_its_stderr() -> None:
    async def main() -> None:
        async with MCPServer.stdio(sys.executable, ["-c", BROKEN], name="broken"):
            pass

    with pytest.raises(MCPServerError) as caught:
        asyncio.run(main())
    message = str(caught.value)
    assert message.startswith("MCP server 'broken' could not be started: ")
    # Quoted as data; the CLI sanitizes it before it reaches a terminal.
    assert message.endswith("(its stderr ends: \x1b[31mboom: no config)")


def test_the_sync_lifetime_serves_run_sync(tmp_path: Path) -> None:
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    with (
        LoopbackServer(
            [anthropic_calls([("c1", "get_weather", {"city": "Oslo"})]), anthropic_text("4°C")]
        ) as p,
        weather() as server,
        SyncClient(env=anthropic_env(p)) as client,
    ):
        result = run_sync(conv, client, MODEL, "Oslo?", tools=[server])
    assert result.text == "4°C"
    assert [r[3:] for r in summary(conv) if r[2] == "result"] == [("c1", "4°C", False)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_streamable_http_server() -> None:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, SERVER, "--http", str(port)], stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline and process.poll() is None, (
                    "server did not start"
                )
                time.sleep(0.05)

        async def main() -> tuple[list[str], ToolOutcome]:
            async with MCPServer.http(f"http://127.0.0.1:{port}/mcp") as server:
                tool = next(t for t in server.tools if t.name == "get_weather")
                return [t.name for t in server.tools], await tool.call('{"city": "Paris"}')

        names, outcome = asyncio.run(main())
    finally:
        process.terminate()
        process.wait(10)
    assert names == ["get_weather", "radar", "snapshot", "die", "read_resource"]
    assert outcome == ToolOutcome("18°C")


def test_an_image_only_result_with_structured_content_is_sent_once() -> None:
    async def main() -> ToolOutcome:
        async with weather() as server:
            (snapshot,) = [t for t in server.tools if t.name == "snapshot"]
            return await snapshot.call('{"city": "Oslo"}')

    outcome = asyncio.run(main())
    assert outcome.content == ""  # not the image again, as base64 in the text (issue #40)
    (image,) = outcome.attachments
    assert (image.media_type, outcome.payloads) == ("image/png", ())


def test_the_model_reads_a_resource_through_the_tool_elelem_offers() -> None:
    async def main() -> tuple[ToolOutcome, ToolOutcome]:
        async with weather() as server:
            (reader,) = [t for t in server.tools if t.name == "read_resource"]
            found = await reader.call('{"uri": "weather://stations"}')
            return found, await reader.call('{"uri": "weather://nowhere"}')

    found, missing = asyncio.run(main())
    assert found == ToolOutcome("[resource <weather://stations>]\nParis, Oslo")
    assert missing.is_error
    assert missing.content.startswith("MCP error from weather: ")
