"""MCP servers as tools of the loop, through the official ``mcp`` SDK's client.

:class:`MCPServer` connects to one server over stdio (:meth:`MCPServer.stdio`,
a subprocess elelem starts), Streamable HTTP (:meth:`MCPServer.http`) or the
older HTTP+SSE transport (:meth:`MCPServer.sse`), and its tools become
:class:`MCPTool`\\ s, with the server's schemas as given.  The SDK's client
(``mcp.client.Client``) negotiates the newest revision both sides speak:
2026-07-28 (stateless, ``server/discover``) or, with an older server, the
``initialize`` handshake of 2025-11-25 or 2025-06-18.  elelem declares itself
(``clientInfo`` ``elelem``), the roots it offers (the working folder unless
told otherwise) and, when given an ``elicit`` callback, elicitation.

The connection's lifetime is a context manager: ``async with`` on the
caller's event loop, or ``with`` (the connection then lives on a loop of its
own in a background thread, for :func:`elelem.run_sync` and the CLI)::

    async with MCPServer.stdio("python", ["weather_server.py"]) as weather:
        await elelem.run(conv, client, model, "Weather in Paris?", tools=[weather])

The connection runs in a task of its own, so a transport that fails (a
Streamable HTTP server that dies) ends that task and never cancels the
caller's: a call in flight gets an error result saying what happened, the
caller :attr:`MCPServer.failure` (every later call fails at once with it),
and leaving the ``with`` is clean.  A 404 for an older revision's session
(the server restarted) starts a new session and sends the call again, once.
A server's ``notifications/tools/list_changed`` re-lists its tools (for the
next run).  Progress a server reports on a call extends the call's timeout.
A server that has resources gets one more tool, ``read_resource`` (after
the ``prefix``), for the model to read one by the URI a result's
``resource_link`` names.  A tool the server runs only as a task (``execution.taskSupport: required``)
is not offered; :attr:`MCPServer.skipped` says why.  What the SDK logs about
a connection and what the server logs are kept in :attr:`MCPServer.notes`
(untrusted text), never written to the terminal.

See :mod:`elelem.tools.mcp_result` for how a result is mapped.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import logging
import math
import os
import tempfile
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio

from elelem.errors import MCPServerError
from elelem.tools.base import ToolOutcome
from elelem.tools.mcp_asks import (
    Elicit,
    ServerAsked,
)
from elelem.tools.mcp_http import MAX_BODY, HTTPNotes, legacy_sse, streamable_http
from elelem.tools.mcp_notes import error_reason
from elelem.tools.mcp_result import CONTENT_FORMAT, MAX_RESULT, MCP_PROVIDER, result_outcome
from elelem.tools.mcp_sampling import Sample
from elelem.tools.mcp_server_requests import ServerRequests
from elelem.tools.mcp_stdio import MAX_LINE, STARTUP_TIMEOUT, Bounds, bounded_stdio
from elelem.tools.mcp_tool import MCPResourceReader, MCPTool

DEFAULT_MCP_TIMEOUT = 60.0

MAX_TOOLS = 1000
"""The most tools one MCP server may list: each is a spec in every request
(50,000 would be megabytes of them), and a pager that never ends must end."""


GRACE = 5.0
"""Seconds a connection has to close (its session ended, its process stopped)."""


_SERVER: contextvars.ContextVar[MCPServer | None] = contextvars.ContextVar(
    "elelem_mcp_server", default=None
)


class _Notes(logging.Handler):
    """The SDK's log records, kept as notes of the server whose connection
    logged them (its task's context says which), never printed raw."""

    def emit(self, record: logging.LogRecord) -> None:
        server = _SERVER.get()
        if server is not None:
            server.note(f"{record.levelname.lower()}: {record.getMessage()}")


_SDK_LOG = logging.getLogger("mcp")
if not any(isinstance(h, _Notes) for h in _SDK_LOG.handlers):
    # A handler of its own also keeps Python's last-resort handler from
    # writing the SDK's warnings raw to stderr.
    _SDK_LOG.addHandler(_Notes(logging.INFO))
    if _SDK_LOG.level == logging.NOTSET:
        _SDK_LOG.setLevel(logging.INFO)


def _client_info() -> Any:
    from importlib.metadata import PackageNotFoundError, version

    from mcp.types import Implementation

    try:
        mine = version("elelem")
    except PackageNotFoundError:  # a source tree that was never installed
        mine = "0"
    return Implementation(name="elelem", version=mine)


class MCPServer(ServerRequests):
    """One MCP server connection (see the module docs).  Build it with
    :meth:`stdio`, :meth:`http` or :meth:`sse`; :attr:`tools` is filled once
    connected.

    ``roots`` are the folders the server is told it may work in (default:
    the working folder at connection time); ``prefix`` is put before each
    tool's name as the model sees it (two servers with a tool of one name);
    ``elicit`` answers the server's requests for user input
    (:mod:`elelem.tools.mcp_asks`); ``protocol`` is ``"auto"`` (the newest
    revision both sides speak), ``"legacy"`` (the ``initialize`` handshake
    only) or a 2026 revision to speak without asking; ``sample`` serves the
    server's sampling requests (:mod:`elelem.tools.mcp_sampling`; without it
    sampling is not declared, and refused); ``use_instructions``
    puts the server's ``instructions`` in the system prompt of every run
    that has its tools (:meth:`system_note`), off by default: they are the
    server's text, untrusted."""

    def __init__(
        self,
        name: str,
        connect: Callable[[], contextlib.AbstractAsyncContextManager[Any]],
        *,
        timeout: float | None = DEFAULT_MCP_TIMEOUT,
        startup_timeout: float = STARTUP_TIMEOUT,
        max_result: int = MAX_RESULT,
        roots: Sequence[str | os.PathLike[str]] | None = None,
        prefix: str = "",
        elicit: Elicit | None = None,
        protocol: str = "auto",
        use_instructions: bool = False,
        sample: Sample | None = None,
        bounds: Bounds | None = None,
        http: HTTPNotes | None = None,
    ) -> None:
        self.name = name
        self._connect = connect
        self.timeout = timeout
        self.startup_timeout = startup_timeout
        self.max_result = max_result
        self.roots = None if roots is None else [Path(r) for r in roots]
        self.prefix = prefix
        self.elicit = elicit
        self.protocol = protocol
        self.use_instructions = use_instructions
        self.sample = sample
        self._bounds = bounds or Bounds()
        self._http = http
        self.tools: list[MCPTool] = []
        self.skipped: dict[str, str] = {}
        self.failure: str | None = None
        self.instructions: str | None = None
        self.protocol_version: str | None = None
        self.server_name: str | None = None
        self.notes: list[str] = []
        self.dropped_notes = 0
        self.client: Any = None
        self.on_request: Callable[[ServerAsked], None] | None = None
        """Told of each request the server made of the client, once answered
        (on the connection's event loop: hand it over, never block)."""
        self._step = "the handshake"
        self._commands: Any = None
        self._renewed: anyio.Event | None = None
        self._calls: set[anyio.CancelScope] = set()
        self._tasks: Any = None
        self._portal: Any = None
        self._portal_cm: Any = None
        self._sync_cm: Any = None
        self._errlog: Any = None
        self._last_words = ""

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
        max_line: int = MAX_LINE,
        **options: Any,
    ) -> MCPServer:
        """A server started as a subprocess speaking MCP on its stdin/stdout.

        Each start-up step must be answered within ``startup_timeout``
        seconds; a stdout line longer than ``max_line`` bytes ends the
        connection; a result's text is cut to ``max_result`` characters.
        ``options`` are those of the constructor."""
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
                    server._last_words = server._last_stderr_line()
                    server._errlog = None

        server = cls(label, connect, bounds=bounds, **options)
        return server

    @classmethod
    def http(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        name: str | None = None,
        max_body: int = MAX_BODY,
        auth: Any = None,
        **options: Any,
    ) -> MCPServer:
        """A server at a Streamable HTTP endpoint (``headers`` may hold its
        token; they are sent to that server only; ``auth`` is an
        ``httpx2.Auth``, such as :func:`elelem.tools.mcp_auth.oauth`).  A
        JSON reply longer than ``max_body`` bytes fails the request it
        answers."""
        return cls._remote(streamable_http, url, headers, name, max_body, auth, options)

    @classmethod
    def sse(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        name: str | None = None,
        max_body: int = MAX_BODY,
        auth: Any = None,
        **options: Any,
    ) -> MCPServer:
        """A server at an HTTP+SSE endpoint (the transport older servers
        still serve, usually at ``/sse``)."""
        return cls._remote(legacy_sse, url, headers, name, max_body, auth, options)

    @classmethod
    def _remote(
        cls,
        transport: Callable[[str, HTTPNotes, Mapping[str, str], Any], Any],
        url: str,
        headers: Mapping[str, str] | None,
        name: str | None,
        max_body: int,
        auth: Any,
        options: Mapping[str, Any],
    ) -> MCPServer:
        notes = HTTPNotes(url, max_body)
        given = dict(headers or {})
        return cls(
            name or _host(url), lambda: transport(url, notes, given, auth), http=notes, **options
        )

    @classmethod
    def parse(cls, spec: str, **options: Any) -> MCPServer:
        """A server from a command line (``'uvx some-server --flag'``) or an
        ``http(s)://`` URL (one whose path ends in ``/sse``: the HTTP+SSE
        transport), as the CLI's ``--mcp`` takes it; a URL with a kept login
        (``elelem mcp login``) signs in with it."""
        import shlex
        from urllib.parse import urlsplit

        if spec.startswith(("http://", "https://")):
            from elelem.tools.mcp_auth import has_login, oauth

            if "auth" not in options and has_login(spec):
                options = {**options, "auth": oauth(spec, interactive=False)}
            if urlsplit(spec).path.rstrip("/").endswith("/sse"):
                return cls.sse(spec, **options)
            return cls.http(spec, **options)
        words = shlex.split(spec)
        if not words:
            raise ValueError("an MCP server needs a command or a URL")
        return cls.stdio(words[0], words[1:], **options)

    # -- lifetime ----------------------------------------------------------------

    async def __aenter__(self) -> MCPServer:
        # The extra is checked here, before the server starts: a missing one
        # is the caller's ModuleNotFoundError (the CLI names the install
        # line for it), not a server that "could not be started".
        importlib.import_module("mcp.client")
        tasks = anyio.create_task_group()
        await tasks.__aenter__()
        try:
            failure = await tasks.start(self._hold)
        except BaseException:
            tasks.cancel_scope.cancel()
            await tasks.__aexit__(None, None, None)
            raise
        if failure is not None:
            await tasks.__aexit__(None, None, None)
            raise failure
        self._tasks = tasks
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        tasks, self._tasks = self._tasks, None
        if tasks is None:
            return
        await self._command("close")
        # A transport that never closes is cut off.
        tasks.cancel_scope.deadline = anyio.current_time() + 3 * GRACE
        await tasks.__aexit__(None, None, None)

    async def _command(self, what: str) -> None:
        commands = self._commands
        if commands is not None:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await commands.send(what)

    async def _hold(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        """The connection's own task: it opens the SDK client, serves the
        commands (re-list, renew the session, close) and, however the
        connection ends, records why instead of raising into the caller."""
        _SERVER.set(self)  # the SDK's log lines of this connection are this server's notes
        send, receive = anyio.create_memory_object_stream[str](8)
        self._commands = send
        started = False
        try:
            while True:
                outcome = await self._session(receive, started, task_status)
                started = True
                if outcome != "renew":
                    return
        finally:
            self._commands = None
            send.close()
            receive.close()
            for scope in list(self._calls):
                scope.cancel()
            if self._renewed is not None:
                self._renewed.set()

    async def _session(self, commands: Any, started: bool, task_status: Any) -> str:
        """One session: ``"renew"`` when another must follow, else ``"end"``."""
        self._last_words = ""
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + self.startup_timeout) as startup:
                async with self._open() as client:
                    await self._absorb(client)
                    startup.deadline = math.inf
                    self.client = client
                    if not started:
                        started = True
                        task_status.started(None)
                    elif self._renewed is not None:
                        self._renewed.set()
                    what = await self._serve(client, commands)
                    if what != "lost":
                        return what
            if startup.cancelled_caught:
                raise MCPServerError(f"no answer to {self._step} within {self.startup_timeout} s")
            raise MCPServerError("the connection ended")
        except Exception as exc:  # noqa: BLE001 - told to the caller, never raised into its task
            why = self._why(exc)
            if not started:
                error = MCPServerError(f"MCP server {self.name!r} could not be started: {why}")
                error.__cause__ = exc
                task_status.started(error)
            elif self.failure is None:
                self.failure = f"MCP server {self.name!r} stopped: {why}"
            return "end"
        finally:
            self.client = None

    @contextlib.asynccontextmanager
    async def _open(self) -> AsyncIterator[Any]:
        from mcp.client import Client

        self._step = "the handshake"
        client = Client(
            self._connect(),
            mode=self.protocol,
            client_info=_client_info(),
            list_roots_callback=self._list_roots,
            logging_callback=self._logged,
            message_handler=self._message,
            elicitation_callback=self._elicited if self.elicit is not None else None,
            sampling_callback=self._sampled if self.sample is not None else None,
        )
        async with client:
            self.protocol_version = client.protocol_version
            info = client.server_info
            self.server_name = info.name if info is not None else None
            self.instructions = client.instructions
            yield client

    async def _absorb(self, client: Any) -> None:
        """List the server's tools (every page, fresh) into :attr:`tools`."""
        self._step = "tools/list"
        listed: list[Any] = []
        cursor = None
        while True:
            page = await client.list_tools(cursor=cursor, cache_mode="refresh")
            listed.extend(page.tools)
            if len(listed) > MAX_TOOLS:
                raise ValueError(f"it lists more than {MAX_TOOLS} tools")
            cursor = page.next_cursor
            if not cursor:
                break
        self.skipped = {t.name: _why_skipped(t) for t in listed if _why_skipped(t)}
        tools = [MCPTool(self, t) for t in listed if t.name not in self.skipped]
        if client.server_capabilities.resources is not None:
            tools.append(MCPResourceReader(self))
        self.tools = tools

    async def _serve(self, client: Any, commands: AsyncIterator[str]) -> str:
        async for what in commands:
            if what == "relist":
                await self._absorb(client)
            else:
                return what
        return "lost"  # pragma: no cover - the stream closes only with the task

    async def prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> ToolOutcome:
        """The server's prompt ``name`` filled with ``arguments``, as the text
        (and images) of one user message: its user messages' content mapped
        like a tool result's, joined.  A prompt with an assistant message is
        an :class:`MCPServerError` (a conversation to replay, not one message)."""
        if self._portal is not None:
            import anyio.to_thread

            return await anyio.to_thread.run_sync(
                self._portal.call, self._prompt, name, dict(arguments or {})
            )
        return await self._prompt(name, dict(arguments or {}))

    async def _prompt(self, name: str, arguments: dict[str, str]) -> ToolOutcome:
        from mcp.shared.exceptions import MCPError
        from mcp.types import CallToolResult

        if self.client is None:
            raise MCPServerError(self.failure or f"MCP server {self.name!r} is not connected")
        try:
            got = await self.client.get_prompt(name, arguments)
        except MCPError as exc:
            raise MCPServerError(f"MCP server {self.name!r}: prompt {name!r}: {exc}") from exc
        roles = sorted({m.role for m in got.messages} - {"user"})
        if roles:
            raise MCPServerError(
                f"MCP server {self.name!r}: prompt {name!r} has {', '.join(roles)} messages: "
                "elelem takes a prompt of user messages only"
            )
        content = [m.content for m in got.messages]
        return result_outcome(CallToolResult(content=content), self.max_result)

    def prompt_sync(self, name: str, arguments: Mapping[str, str] | None = None) -> ToolOutcome:
        """:meth:`prompt` for the blocking lifetime (``with``)."""
        if self._portal is None:
            raise MCPServerError(f"MCP server {self.name!r} is not connected (with ...)")
        outcome: ToolOutcome = self._portal.call(self._prompt, name, dict(arguments or {}))
        return outcome

    def _session_lost(self) -> bool:
        return self._http is not None and self._http.session_lost

    async def renew(self) -> bool:
        """Start a new session (the server forgot the old one); True when
        the new session is up."""
        renewed = self._renewed
        if renewed is None or renewed.is_set():
            if self._http is not None:
                self._http.session_lost = False
            renewed = self._renewed = anyio.Event()
            await self._command("renew")
        await renewed.wait()
        return self.client is not None and self.failure is None

    # -- what the server sends ----------------------------------------------------

    async def _message(self, message: Any) -> None:
        from mcp.types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification):
            await self._command("relist")
        elif isinstance(message, Exception):
            self.note(f"transport: {error_reason(message)}")

    # -- the blocking lifetime ---------------------------------------------------

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


def _why_skipped(tool: Any) -> str:
    execution = getattr(tool, "execution", None)
    if execution is not None and execution.task_support == "required":
        return "it runs only as a task (execution.taskSupport: required), which elelem does not run"
    return ""


def _host(url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url).hostname or url


def _label(words: Sequence[str]) -> str:
    import shlex

    text = shlex.join(words)
    return text if len(text) <= 60 else text[:59] + "…"


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
