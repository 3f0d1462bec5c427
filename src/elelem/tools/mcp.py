"""Local MCP servers as tools of the loop, through the official ``mcp`` SDK.

:class:`MCPServer` connects to one server over stdio (:meth:`MCPServer.stdio`,
a subprocess elelem starts) or streamable HTTP (:meth:`MCPServer.http`), and
its tools become :class:`MCPTool`\\ s, with the server's schemas as given.
The connection's lifetime is a context manager: ``async with`` on the
caller's event loop, or ``with`` (the connection then lives on a loop of its
own in a background thread, for :func:`elelem.run_sync` and the CLI)::

    async with MCPServer.stdio("python", ["weather_server.py"]) as weather:
        await elelem.run(conv, client, model, "Weather in Paris?", tools=[weather])

A call's result is mapped to the tool result: text content as it is, a
resource link and an embedded text resource as a line naming it, an image as
an image attachment, audio or a binary resource as a line naming its type and
size (its bytes kept in the result's payload).  A server
that dies mid-call gives the model an error result saying so, and the caller
:attr:`MCPServer.failure` (every later call fails at once with it).
"""

from __future__ import annotations

import base64
import contextlib
import tempfile
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any

import anyio
import msgspec

from elelem.errors import DecodeError, MCPServerError
from elelem.tools.base import ToolOutcome
from elelem.tools.mcp_stdio import MAX_LINE, Bounds, bounded_stdio
from elelem.vocabulary import ImageBlock, JSONValue, ProviderId, ProviderPayload, ToolSpec
from elelem.vocabulary.json import decode_json

MCP_PROVIDER = ProviderId("mcp")
"""The provider name of the payload that keeps a result's non-text content."""

CONTENT_FORMAT = "tool-result-content"
"""Payload format: the MCP result's content list, as the server sent it."""

DEFAULT_MCP_TIMEOUT = 60.0

STARTUP_TIMEOUT = 30.0
"""Seconds a server has to answer each start-up step (``initialize``, ``tools/list``)."""

MAX_TOOLS = 1000
"""The most tools one MCP server may list: each is a spec in every request
(50,000 would be megabytes of them), and a pager that never ends must end."""

MAX_RESULT = 1_000_000
"""The most characters of one tool result's text sent to the model (and stored)."""


class MCPServer:
    """One MCP server connection (see the module docs).  Build it with
    :meth:`stdio` or :meth:`http`; :attr:`tools` is filled once connected."""

    def __init__(
        self,
        name: str,
        connect: Any,
        *,
        timeout: float | None = DEFAULT_MCP_TIMEOUT,
        startup_timeout: float = STARTUP_TIMEOUT,
        max_result: int = MAX_RESULT,
        bounds: Bounds | None = None,
    ) -> None:
        self.name = name
        self._connect = connect
        self.timeout = timeout
        self.startup_timeout = startup_timeout
        self.max_result = max_result
        self._bounds = bounds or Bounds()
        self.tools: list[MCPTool] = []
        self.failure: str | None = None
        self.session: Any = None
        self._stack: contextlib.AsyncExitStack | None = None
        self._portal: Any = None
        self._portal_cm: Any = None
        self._sync_cm: Any = None
        self._errlog: Any = None

    def stderr_tail(self, limit: int = 300) -> str:
        """The end of what a stdio server wrote on its stderr (untrusted
        text; empty for an HTTP server or before it started)."""
        errlog = self._errlog
        if errlog is None:
            return ""
        errlog.flush()
        errlog.seek(0)
        text: str = errlog.read()
        errlog.seek(0, 2)
        return text.strip()[-limit:]

    @property
    def stdout_noise(self) -> int:
        """How many stdout lines of a stdio server were not JSON-RPC (skipped)."""
        return self._bounds.noise

    def _last_stderr_line(self) -> str:
        tail = self.stderr_tail()
        return tail.splitlines()[-1] if tail else ""

    def _why(self, exc: BaseException, last: str | None = None) -> str:
        """What failed, and the last line the server wrote on stderr (read
        now unless given: the file is gone once the server is closed)."""
        if self._bounds.failure is not None:
            return self._bounds.failure
        if isinstance(exc, MCPServerError):
            return str(exc)  # ours: it says what happened already
        if last is None:
            last = self._last_stderr_line()
        return f"{_reason(exc)} (its stderr ends: {last})" if last else _reason(exc)

    # -- construction ------------------------------------------------------------

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        name: str | None = None,
        timeout: float | None = DEFAULT_MCP_TIMEOUT,
        startup_timeout: float = STARTUP_TIMEOUT,
        max_line: int = MAX_LINE,
        max_result: int = MAX_RESULT,
    ) -> MCPServer:
        """A server started as a subprocess speaking MCP on its stdin/stdout.

        Each start-up step must be answered within ``startup_timeout``
        seconds; a stdout line longer than ``max_line`` bytes ends the
        connection; a result's text is cut to ``max_result`` characters."""
        label = name or _label([command, *args])
        bounds = Bounds(max_line)
        server: MCPServer

        @contextlib.asynccontextmanager
        async def connect() -> AsyncIterator[Any]:
            # The server's stderr is its own untrusted text: captured in a file
            # (never written raw to the caller's terminal) and quoted, as data,
            # in what a failure says.
            with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
                server._errlog = errlog
                try:
                    async with bounded_stdio(
                        command, args, env=env, cwd=cwd, errlog=errlog, bounds=bounds
                    ) as streams:
                        yield streams
                finally:
                    server._errlog = None

        server = cls(
            label,
            connect,
            timeout=timeout,
            startup_timeout=startup_timeout,
            max_result=max_result,
            bounds=bounds,
        )
        return server

    @classmethod
    def http(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        name: str | None = None,
        timeout: float | None = DEFAULT_MCP_TIMEOUT,
    ) -> MCPServer:
        """A server at a streamable HTTP endpoint (``headers`` may hold its
        token; they are sent to that server only)."""
        from urllib.parse import urlsplit

        from mcp.client.streamable_http import streamable_http_client

        label = name or urlsplit(url).hostname or url
        given = dict(headers or {})

        @contextlib.asynccontextmanager
        async def connect() -> AsyncIterator[Any]:
            import httpx2

            async with (
                httpx2.AsyncClient(headers=given, timeout=httpx2.Timeout(30.0, read=300.0)) as http,
                streamable_http_client(url, http_client=http) as streams,
            ):
                yield streams

        return cls(label, connect, timeout=timeout)

    @classmethod
    def parse(cls, spec: str, *, timeout: float | None = DEFAULT_MCP_TIMEOUT) -> MCPServer:
        """A server from a command line (``'uvx some-server --flag'``) or an
        ``http(s)://`` URL, as the CLI's ``--mcp`` takes it."""
        import shlex

        if spec.startswith(("http://", "https://")):
            return cls.http(spec, timeout=timeout)
        words = shlex.split(spec)
        if not words:
            raise ValueError("an MCP server needs a command or a URL")
        return cls.stdio(words[0], words[1:], timeout=timeout)

    # -- lifetime ----------------------------------------------------------------

    async def __aenter__(self) -> MCPServer:
        from mcp.client.session import ClientSession

        stack = contextlib.AsyncExitStack()
        try:
            read, write, *_ = await stack.enter_async_context(self._connect())
            session = await stack.enter_async_context(ClientSession(read, write))
            with self._step("initialize"):
                await session.initialize()
            with self._step("tools/list"):
                listed = await _list_tools(session)
        except BaseException as exc:
            last = self._last_stderr_line()  # before the stack closes the server's stderr file
            failure: BaseException = exc
            try:
                await stack.aclose()
            except Exception as closing:  # noqa: BLE001 - it is the failure itself
                # The HTTP transport's task group cancels the setup when the
                # connection fails, then raises that failure as it closes:
                # the setup only saw the cancellation.
                failure = closing
            if not isinstance(failure, Exception):
                raise
            why = self._why(failure, last)
            raise MCPServerError(f"MCP server {self.name!r} could not be started: {why}") from (
                failure
            )
        self._stack = stack
        self.session = session
        self.tools = [MCPTool(self, t) for t in listed]
        return self

    @contextlib.contextmanager
    def _step(self, step: str) -> Iterator[None]:
        """A start-up step, bounded by :attr:`startup_timeout`: a server that
        never answers is an error naming the step, not a hang."""
        try:
            with anyio.fail_after(self.startup_timeout):
                yield
        except TimeoutError:
            if self._bounds.failure is not None:
                raise MCPServerError(self._bounds.failure) from None
            raise MCPServerError(f"no answer to {step} within {self.startup_timeout} s") from None

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        stack, self._stack, self.session = self._stack, None, None
        if stack is not None:
            try:
                await stack.aclose()
            except Exception as error:  # noqa: BLE001 - a dead server's transport may fail to close
                if self.failure is None:
                    self.failure = (
                        f"MCP server {self.name!r} did not close cleanly: {_reason(error)}"
                    )

    def __enter__(self) -> MCPServer:
        from anyio.from_thread import start_blocking_portal

        self._portal_cm = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        try:
            self._sync_cm = self._portal.wrap_async_context_manager(self)
            self._sync_cm.__enter__()
        except BaseException:
            self._portal_cm.__exit__(None, None, None)
            self._portal = None
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if self._sync_cm is not None:
                self._sync_cm.__exit__(exc_type, exc, tb)
        finally:
            self._sync_cm = None
            portal_cm, self._portal, self._portal_cm = self._portal_cm, None, None
            if portal_cm is not None:
                portal_cm.__exit__(None, None, None)

    def __repr__(self) -> str:
        return f"MCPServer({self.name!r}, tools={[t.name for t in self.tools]!r})"


class MCPTool:
    """One tool of a connected :class:`MCPServer`, as a tool of the loop."""

    def __init__(self, server: MCPServer, tool: Any) -> None:
        self.server = server
        self.name: str = tool.name
        schema: JSONValue = msgspec.convert(tool.input_schema, JSONValue)
        self.spec = ToolSpec(tool.name, tool.description or "", schema)
        hints = tool.annotations
        # The server's own word that a call may be repeated (read-only tools can).
        self.idempotent = bool(
            hints is not None and (hints.idempotent_hint or hints.read_only_hint)
        )
        self.timeout = server.timeout

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
        server = self.server
        if server.session is None:
            return ToolOutcome(f"MCP server {server.name!r} is not connected", is_error=True)
        try:
            result = await server.session.call_tool(self.name, given)
        except Exception as exc:  # noqa: BLE001 - told to the model, kept for the caller
            from mcp.shared.exceptions import MCPError

            if isinstance(exc, MCPError) and not _is_closed(exc):
                # The server answered with a protocol error: the server lives on.
                return ToolOutcome(f"MCP error from {server.name}: {exc}", is_error=True)
            server.failure = (
                f"MCP server {server.name!r} stopped during a call of {self.name}: "
                f"{server._why(exc)}"
            )
            return ToolOutcome(server.failure, is_error=True)
        return result_outcome(result, server.max_result)

    def __repr__(self) -> str:
        return f"MCPTool({self.server.name}.{self.name})"


async def _list_tools(session: Any) -> list[Any]:
    from mcp.types import PaginatedRequestParams

    tools: list[Any] = []
    cursor = None
    while True:
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        if len(tools) > MAX_TOOLS:
            raise ValueError(f"it lists more than {MAX_TOOLS} tools")
        cursor = page.next_cursor
        if not cursor:
            return tools


def _label(words: Sequence[str]) -> str:
    import shlex

    text = shlex.join(words)
    return text if len(text) <= 60 else text[:59] + "…"


def _is_closed(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "closed" in text or "terminated" in text


def _reason(exc: BaseException) -> str:
    """``Type: text`` of an error; of a group, of the errors it holds (a task
    group's wrapper says nothing of what failed)."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_reason(inner) for inner in exc.exceptions)
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _image(data: str, media_type: str) -> ImageBlock | None:
    """An MCP image as an image block (None when its bytes or type are not
    an image elelem can send: then it is kept as a payload)."""
    try:
        return ImageBlock.from_bytes(base64.b64decode(data, validate=True), media_type)
    except (ValueError, DecodeError):
        return None


def _size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except ValueError:
        return len(data)


def result_outcome(result: Any, max_result: int = MAX_RESULT) -> ToolOutcome:
    """An MCP ``CallToolResult`` as the tool result the model is sent; text
    past ``max_result`` characters is cut, and the text says so."""
    lines: list[str] = []
    kept: list[JSONValue] = []
    attachments: list[ImageBlock] = []
    for block in result.content:
        kind = getattr(block, "type", None)
        if kind == "text":
            lines.append(block.text)
        elif kind == "image" and (image := _image(block.data, block.mime_type)) is not None:
            attachments.append(image)
        elif kind in ("image", "audio"):
            lines.append(f"[{kind} {block.mime_type}, {_size(block.data)} bytes]")
            kept.append(block.model_dump(mode="json", by_alias=True, exclude_none=True))
        elif kind == "resource_link":
            mime = f" ({block.mime_type})" if block.mime_type else ""
            lines.append(f"[resource {block.name} <{block.uri}>{mime}]")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if text is not None:
                lines.append(f"[resource <{resource.uri}>]\n{text}")
            else:
                mime = f" {resource.mime_type}" if resource.mime_type else ""
                lines.append(f"[resource <{resource.uri}>{mime}, {_size(resource.blob)} bytes]")
                kept.append(block.model_dump(mode="json", by_alias=True, exclude_none=True))
        else:
            raw = block.model_dump(mode="json", by_alias=True, exclude_none=True)
            lines.append(msgspec.json.encode(raw).decode())
    if not lines and result.structured_content is not None:
        lines.append(msgspec.json.encode(result.structured_content).decode())
    payloads = (ProviderPayload(MCP_PROVIDER, CONTENT_FORMAT, None, kept),) if kept else ()
    text = "\n".join(lines)
    if len(text) > max_result:
        text = (
            f"{text[:max_result]}\n[elelem: the result was cut to its first {max_result} of "
            f"{len(text)} characters]"
        )
    return ToolOutcome(text, bool(result.is_error), payloads, tuple(attachments))


__all__ = [
    "CONTENT_FORMAT",
    "DEFAULT_MCP_TIMEOUT",
    "MAX_RESULT",
    "MAX_TOOLS",
    "MCP_PROVIDER",
    "STARTUP_TIMEOUT",
    "MCPServer",
    "MCPServerError",
    "MCPTool",
    "result_outcome",
]
