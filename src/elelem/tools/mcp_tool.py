"""One tool of a connected MCP server, as a tool of the loop (see
:mod:`elelem.tools.mcp`)."""

from __future__ import annotations

import math
from typing import Any

import anyio
import msgspec

from elelem.tools.base import ToolOutcome
from elelem.tools.mcp_result import result_outcome
from elelem.vocabulary import JSONValue, ToolSpec
from elelem.vocabulary.json import decode_json


class MCPTool:
    """One tool of a connected :class:`MCPServer`, as a tool of the loop.

    Its :attr:`timeout` is None for the loop: the call bounds itself by the
    server's timeout, which each progress notification starts again (up to
    ten times the timeout in all)."""

    timeout: float | None = None

    def __init__(self, server: Any, tool: Any) -> None:
        # ``server`` is the MCPServer that lists the tool (not imported: it imports this).
        self.server = server
        self.remote_name: str = tool.name
        self.name: str = server.prefix + tool.name
        schema: JSONValue = msgspec.convert(tool.input_schema, JSONValue)
        self.spec = ToolSpec(self.name, tool.description or "", schema)
        hints = tool.annotations
        self.annotations: JSONValue = (
            None
            if hints is None
            else hints.model_dump(mode="json", by_alias=True, exclude_none=True)
        )
        # The server's own word that a call may be repeated (read-only tools can).
        self.idempotent = bool(
            hints is not None and (hints.idempotent_hint or hints.read_only_hint)
        )
        self.progress: tuple[float, float | None, str | None] | None = None

    async def call(self, arguments: str) -> ToolOutcome:
        """Call the tool on its server; see the module docs for the result."""
        server = self.server
        if server.failure is not None:
            return ToolOutcome(server.failure, is_error=True)
        try:
            given = decode_json(arguments) if arguments.strip() else {}
        except msgspec.DecodeError as exc:
            return ToolOutcome(f"invalid arguments for {self.name}: {exc}", is_error=True)
        if not isinstance(given, dict):
            return ToolOutcome(
                f"invalid arguments for {self.name}: not a JSON object", is_error=True
            )
        if server._portal is not None:
            import anyio.to_thread

            # The connection lives on its own loop: hop there and back.
            return await anyio.to_thread.run_sync(
                server._portal.call, self._call, given, abandon_on_cancel=True
            )
        return await self._call(given)

    async def _call(self, given: dict[str, Any]) -> ToolOutcome:
        from mcp.shared.exceptions import MCPError
        from pydantic import ValidationError

        server = self.server
        for attempt in (1, 2):
            if server.client is None:
                return ToolOutcome(
                    server.failure or f"MCP server {server.name!r} is not connected", is_error=True
                )
            try:
                result = await self._bounded(server.client, given)
            except MCPError as exc:
                if server._session_lost() and attempt == 1 and await server.renew():
                    continue  # the server forgot the session: a new one, and the call again
                if not _is_closed(exc):
                    # The server answered with a protocol error: the server lives on.
                    return ToolOutcome(f"MCP error from {server.name}: {exc}", is_error=True)
                return self._stopped(exc)
            except ValidationError as exc:
                # A result the server sent malformed: that call failed, the server lives on.
                error = " ".join(str(exc).split())
                return ToolOutcome(f"MCP server {server.name} sent a bad result: {error}", True)
            except Exception as exc:  # noqa: BLE001 - told to the model, kept for the caller
                return self._stopped(exc)
            if result is None:
                return self._stopped(None)
            return result
        raise AssertionError("unreachable")  # pragma: no cover

    def _stopped(self, exc: BaseException | None) -> ToolOutcome:
        server = self.server
        if server.failure is None:
            why = server._why(exc) if exc is not None else "the connection ended"
            server.failure = (
                f"MCP server {server.name!r} stopped during a call of {self.name}: {why}"
            )
        return ToolOutcome(server.failure, is_error=True)

    async def _bounded(self, client: Any, given: dict[str, Any]) -> ToolOutcome | None:
        """The call, bounded by the server's timeout (extended by progress);
        None when the connection ended under it."""
        timeout = self.server.timeout
        start = anyio.current_time()
        bound = math.inf if timeout is None else start + timeout

        async def progress(done: float, total: float | None, message: str | None) -> None:
            self.progress = (done, total, message)
            if timeout is not None:
                scope.deadline = min(anyio.current_time() + timeout, start + 10 * timeout)

        with anyio.CancelScope(deadline=bound) as scope:
            self.server._calls.add(scope)
            try:
                return await self._request(client, given, progress)
            finally:
                self.server._calls.discard(scope)
        if anyio.current_time() >= scope.deadline:
            assert timeout is not None
            return ToolOutcome(
                f"timeout: {self.name} did not finish within {timeout:g} s", is_error=True
            )
        return None

    async def _request(self, client: Any, given: dict[str, Any], progress: Any) -> ToolOutcome:
        result = await client.call_tool(self.remote_name, given, progress_callback=progress)
        return result_outcome(result, self.server.max_result)

    def __repr__(self) -> str:
        return f"MCPTool({self.server.name}.{self.name})"


READ_RESOURCE = "read_resource"
"""The name (after the server's prefix) of the tool that reads a server's resources."""


class MCPResourceReader(MCPTool):
    """The tool elelem offers for a server that has resources: the model
    reads one by its URI (a ``resource_link`` of a result names it), and
    gets its contents as a tool result mapped like an embedded resource."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.remote_name = "resources/read"
        self.name = server.prefix + READ_RESOURCE
        schema: JSONValue = {
            "type": "object",
            "properties": {"uri": {"type": "string", "description": "The resource's URI."}},
            "required": ["uri"],
        }
        description = (
            f"Read a resource of the MCP server {server.name} by its URI (as a resource "
            "link in one of its results names it)."
        )
        self.spec = ToolSpec(self.name, description, schema)
        self.annotations = {"readOnlyHint": True}
        self.idempotent = True
        self.progress = None

    async def _request(self, client: Any, given: dict[str, Any], progress: Any) -> ToolOutcome:
        from mcp.types import CallToolResult, ContentBlock, EmbeddedResource

        uri = given.get("uri")
        if not isinstance(uri, str):
            return ToolOutcome(f"invalid arguments for {self.name}: uri is not a string", True)
        read = await client.read_resource(uri)
        blocks: list[ContentBlock] = [
            EmbeddedResource(type="resource", resource=c) for c in read.contents
        ]
        return result_outcome(CallToolResult(content=blocks), self.server.max_result)


def _is_closed(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "closed" in text or "terminated" in text or "stream ended" in text


__all__ = ["READ_RESOURCE", "MCPResourceReader", "MCPTool"]
