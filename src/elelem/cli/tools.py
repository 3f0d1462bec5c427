"""The tool options of ``elelem ask`` and ``elelem chat``: tools that run.

``--functions FILE.py`` makes every public function defined in that file a
tool (as simonw/llm does); ``--tool module:function`` one function of an
importable module; ``--mcp 'COMMAND ARGS'`` or ``--mcp URL`` a local MCP
server's tools (each option repeatable); ``--memory DIR``, ``--shell`` and
``--computer-use MODULE:OBJECT`` (on the screen ``--computer-environment``
names) the provider's memory, shell and computer-use tools, executed here
(shell and computer actions only with approval).  With any of them the turn is a
tool loop, bounded by ``--max-steps``; ``--approve`` asks y/n on the terminal
before each call.  Each call shows as one sanitized status line on stderr:
``called get_weather(city="Paris") → 18°C``.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import importlib.util
import inspect
import os
import re
import shutil
import sys
import textwrap
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, ParamSpec, TypeVar

import click

from elelem.cli.asking import confirm
from elelem.cli.elicit import TerminalElicitor
from elelem.cli.exits import EXIT_USAGE, Failure
from elelem.client import Client
from elelem.conversation import Conversation
from elelem.errors import MCPServerError
from elelem.render import sanitize, sanitize_line
from elelem.render.lines import call_arguments
from elelem.tools import Computer, ComputerTool, FunctionTool, MemoryTool, ShellTool
from elelem.tools.mcp_stdio import STARTUP_TIMEOUT
from elelem.turns.limits import UsageLimits
from elelem.turns.sampling import recording_requests
from elelem.turns.toolloop import MAX_STEPS, ApprovalRequest, Approver, ToolLoop
from elelem.vocabulary import ComputerUse, Skill, ToolCallBlock, ToolResultBlock

if TYPE_CHECKING:
    from elelem.cli.sampling import TurnSampler
    from elelem.tools import MCPServer

P = ParamSpec("P")
R = TypeVar("R")

COMPUTER_ENVIRONMENTS = ("browser", "mobile", "desktop", "mac", "windows", "linux", "ubuntu")
"""The screens ``--computer-environment`` names: the environments of
:class:`~elelem.vocabulary.ComputerUse` (each wire's spelling, or its drop
record: docs/tools.md)."""

STATUS_LIMIT = 120
"""Longest a status line's arguments or result may be before it is cut."""


functions_option = click.option(
    "--functions",
    "function_files",
    multiple=True,
    metavar="FILE.py",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Make every public function defined in FILE.py a tool (repeatable).",
)
"""``--functions FILE.py`` (of ``ask``, ``chat``, ``approve``, ``resume`` and
``serve``): read by :meth:`Toolset.from_params`."""


mcp_option = click.option(
    "--mcp",
    "mcp_specs",
    multiple=True,
    metavar="'COMMAND ARGS'|URL",
    help="Start a local MCP server (a command line) or connect to one (an http(s) "
    "URL) and give the model its tools (repeatable).",
)
"""``--mcp`` (of ``ask``, ``chat``, ``live``, ``approve``, ``resume`` and ``serve``)."""

mcp_sampling_option = click.option(
    "--mcp-sampling-model",
    metavar="MODEL",
    help="Serve each --mcp server's sampling requests (the server asking for a "
    "completion during a call) with MODEL (provider:model or an alias); without it "
    "they are refused.",
)
"""``--mcp-sampling-model`` (wherever ``--mcp`` is)."""


def tool_options(fn: Callable[P, R]) -> Callable[P, R]:
    """The options that give the model tools to run."""
    decorators = [
        functions_option,
        click.option(
            "--tool",
            "tool_refs",
            multiple=True,
            metavar="MODULE:FUNCTION",
            help="Make one function of an importable module a tool (repeatable).",
        ),
        mcp_option,
        click.option(
            "--mcp-startup-timeout",
            type=click.FloatRange(min=0, min_open=True),
            default=STARTUP_TIMEOUT,
            show_default=True,
            metavar="SECONDS",
            help="Seconds each --mcp server has for each start-up step (npx -y of a package "
            "not yet cached can need more).",
        ),
        mcp_sampling_option,
        click.option(
            "--mcp-instructions",
            is_flag=True,
            help="Put each --mcp server's instructions in the system prompt (the server's "
            "text, marked as such; off by default).",
        ),
        click.option(
            "--memory",
            "memory_dir",
            metavar="DIR",
            type=click.Path(file_okay=False, path_type=Path),
            help="Give the model the provider's memory tool (Anthropic), executed here and "
            "confined to DIR.",
        ),
        click.option(
            "--shell",
            "shell_tool",
            is_flag=True,
            help="Give the model the provider's shell tool (OpenAI Responses), run in the "
            "working folder; each call needs --approve (or --defer), else it is refused.",
        ),
        click.option(
            "--computer-use",
            "computer_ref",
            metavar="MODULE:OBJECT",
            help="Give the model the provider's computer-use tool (Anthropic, OpenAI, Gemini), its "
            "actions performed by OBJECT.act(arguments) -> PNG bytes of an importable module; "
            "each action needs --approve (or --defer), else it is refused.",
        ),
        click.option(
            "--computer-environment",
            type=click.Choice(COMPUTER_ENVIRONMENTS),
            help="The screen --computer-use operates (default browser): a desktop of a named "
            "system, or a screen the provider's tool cannot say, goes as another or is left "
            "out, reported under the answer.",
        ),
        click.option(
            "--max-steps",
            type=click.IntRange(min=0),
            default=MAX_STEPS,
            show_default=True,
            help="Run tools for at most this many steps of a turn.",
        ),
        click.option(
            "--approve",
            is_flag=True,
            help="Ask y/n on the terminal before each tool call.",
        ),
        click.option(
            "--defer",
            is_flag=True,
            help="Stop at the first tool step until `elelem approve ID` (or "
            "`elelem resume ID`) gives the approvals, in any later process.",
        ),
    ]
    for decorate in reversed(decorators):
        fn = decorate(fn)
    return fn


def functions_in(path: Path) -> list[FunctionTool]:
    """The tools of ``--functions FILE.py``: its public functions defined there
    (not imported into it), in file order; a function decorated with
    ``@elelem.tool(...)`` is taken as that tool, its settings kept."""
    name = f"elelem_functions_{abs(hash(path.resolve()))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise Failure(f"--functions {path}: not a Python file", EXIT_USAGE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and type hints look their module up
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise Failure(f"--functions {path}: {type(exc).__name__}: {exc}", EXIT_USAGE) from exc
    tools: list[FunctionTool] = []
    for key, value in vars(module).items():
        if key.startswith("_"):
            continue
        if isinstance(value, FunctionTool) and _defined_in(value.function, name):
            tools.append(value)
        elif inspect.isfunction(value) and value.__module__ == name:
            tools.append(_made(value, f"--functions {path}"))
    if not tools:
        raise Failure(f"--functions {path}: no public function defined there", EXIT_USAGE)
    return tools


def _defined_in(function: object, module: str) -> bool:
    return getattr(function, "__module__", None) == module


_SKILL = re.compile(r"(anthropic:)?([A-Za-z0-9][A-Za-z0-9_.-]*)(?:@([A-Za-z0-9][A-Za-z0-9_.-]*))?")


def skill_named(text: str) -> Skill:
    """The skill of ``--skill``: ``anthropic:pptx`` (the provider's own) or a
    Skills API id, with ``@VERSION`` to pin one."""
    found = _SKILL.fullmatch(text)
    if found is None:
        raise Failure(
            sanitize_line(
                f"--skill {text!r}: not anthropic:NAME or a skill id (@VERSION optional)"
            ),
            EXIT_USAGE,
        )
    return Skill(found[2], found[3], builtin=found[1] is not None)


def computer_named(ref: str) -> Computer:
    """The screen of ``--computer-use module:object``: an object with ``act``."""
    value = _imported(ref, "--computer-use", "OBJECT")
    if not callable(getattr(value, "act", None)):
        raise Failure(f"--computer-use {ref}: it has no act(arguments) method", EXIT_USAGE)
    computer: Computer = value
    return computer


def _computer(params: Mapping[str, Any]) -> list[ComputerTool]:
    """The computer-use tool of ``--computer-use`` on the screen
    ``--computer-environment`` names, or none."""
    environment = params.get("computer_environment")
    if not params.get("computer_ref"):
        if environment is not None:
            raise Failure(
                "--computer-environment names the screen of --computer-use MODULE:OBJECT: "
                "give both",
                EXIT_USAGE,
            )
        return []
    display = None if environment is None else ComputerUse(environment=environment)
    return [ComputerTool(computer_named(params["computer_ref"]), display=display)]


def function_named(ref: str) -> FunctionTool:
    """The tool of ``--tool module:function``."""
    value = _imported(ref, "--tool", "FUNCTION")
    if isinstance(value, FunctionTool):
        return value
    if not callable(value):
        module_name, _, attr = ref.partition(":")
        raise Failure(f"--tool {ref}: {module_name} has no function {attr!r}", EXIT_USAGE)
    return _made(value, f"--tool {ref}")


def _imported(ref: str, option: str, what: str) -> Any:
    """The attribute ``ref`` (``module:attribute``) names, or a usage error."""
    module_name, _, attr = ref.partition(":")
    if not module_name or not attr:
        raise Failure(f"{option} {ref}: write MODULE:{what}", EXIT_USAGE)
    # The working folder is where `--tool tools:fn` is looked for first, as
    # `python -m` would (the console script's path holds only its own folder).
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise Failure(f"{option} {ref}: cannot import {module_name}: {exc}", EXIT_USAGE) from exc
    value = getattr(module, attr, None)
    if value is None:
        raise Failure(f"{option} {ref}: {module_name} has no {what.lower()} {attr!r}", EXIT_USAGE)
    return value


def _made(function: Callable[..., Any], where: str) -> FunctionTool:
    try:
        return FunctionTool(function)
    except TypeError as exc:
        raise Failure(f"{where}: {exc}", EXIT_USAGE) from exc


@dataclass
class Toolset:
    """The tools a command line asks for, and the loop options; a context
    manager that keeps its MCP servers running while it is open."""

    tools: list[Any] = field(default_factory=list)
    servers: list[MCPServer] = field(default_factory=list)
    max_steps: int = MAX_STEPS
    approve: bool = False
    defer: bool = False
    elicitor: TerminalElicitor = field(default_factory=lambda: TerminalElicitor(False))
    """Asks the user what an MCP server asks (bound to a turn by :meth:`asking_on`)."""
    sampler: TurnSampler | None = None
    """``--mcp-sampling-model``: serves the servers' sampling requests in a turn."""
    _stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    _questions: asyncio.Lock | None = None

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> Toolset:
        """The toolset of the :func:`tool_options` of a command line."""
        tools: list[Any] = []
        for path in params.get("function_files", ()):
            tools.extend(functions_in(path))
        for ref in params.get("tool_refs", ()):
            tools.append(function_named(ref))
        if params.get("memory_dir") is not None:
            tools.append(MemoryTool(params["memory_dir"]))
        if params.get("shell_tool"):
            tools.append(ShellTool(Path.cwd()))
        tools.extend(_computer(params))
        servers = []
        elicitor = TerminalElicitor(interactive=sys.stdin.isatty())
        sampling = params.get("mcp_sampling_model")
        sampler = None
        if sampling is not None:
            # Deferred: sampling serves MCP servers' requests with a second
            # model (the client, the turn engine); a plain ask never needs it.
            from elelem.cli.sampling import TurnSampler, sampling_target

            sampler = TurnSampler(sampling_target(sampling))
        for spec in params.get("mcp_specs", ()):
            # Deferred: the MCP client (its transports, notes, results) is
            # imported only when a server is asked for, not at every ask.
            from elelem.tools import MCPServer

            try:
                servers.append(
                    MCPServer.parse(
                        spec,
                        startup_timeout=params.get("mcp_startup_timeout", STARTUP_TIMEOUT),
                        use_instructions=bool(params.get("mcp_instructions")),
                        elicit=elicitor,
                        sample=sampler,
                    )
                )
            except ValueError as exc:
                raise Failure(f"--mcp {spec!r}: {exc}", EXIT_USAGE) from exc
        approve = bool(params.get("approve"))
        if approve and not sys.stdin.isatty():
            raise Failure("--approve asks on a terminal, and stdin is not one", EXIT_USAGE)
        defer = bool(params.get("defer"))
        if approve and defer:
            raise Failure("--approve asks now and --defer later: give one of them", EXIT_USAGE)
        return cls(
            tools, servers, params.get("max_steps", MAX_STEPS), approve, defer, elicitor, sampler
        )

    @property
    def active(self) -> bool:
        """Whether the turn is a tool loop."""
        return bool(self.tools or self.servers)

    def __enter__(self) -> Toolset:
        if self.servers:
            # The mcp extra, looked for first: a missing one is the command's
            # one line naming its install (a ModuleNotFoundError, see
            # guarded), not a server that "could not be started".
            importlib.import_module("mcp")
        for server in self.servers:
            try:
                self._stack.enter_context(server)
            except MCPServerError as exc:
                self._stack.close()
                raise Failure(sanitize_line(str(exc)), EXIT_USAGE) from None
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()
        for server in self.servers:
            # What the SDK warned of about the connection, as elelem reports it.
            for note in server.notes:
                if note.startswith(("warning:", "error:", "critical:")):
                    line = f"MCP server {server.name}: {note}"
                    click.echo(f"elelem: {sanitize_line(line)}", err=True)
            if server.failure is not None:
                click.echo(f"elelem: {sanitize_line(server.failure)}", err=True)

    def all_tools(self) -> list[Any]:
        """The functions and every connected server, for :func:`elelem.run`."""
        return [*self.tools, *self.servers]

    def loop(self, approve: Approver | Literal["defer"] | None) -> ToolLoop:
        """The tool loop over :meth:`all_tools`, asking ``approve``; two tools
        of one name (a server's and a function's) are a usage error, not a
        crash."""
        try:
            return ToolLoop(self.all_tools(), approve=approve)
        except ValueError as exc:
            raise Failure(
                f"{exc} (each of --functions, --tool and --mcp needs its own names)", EXIT_USAGE
            ) from None

    def approver(
        self,
    ) -> Callable[[ApprovalRequest], Awaitable[bool]] | Literal["defer"] | None:
        """The ``--approve`` callback, ``"defer"`` for ``--defer`` (None without either)."""
        if self.defer:
            return "defer"
        if not self.approve:
            return None

        # Calls run at once; questions (approvals, servers' requests for
        # input, see asking_on) one by one.  A lock a turn: each turn has
        # its own event loop.
        one_at_a_time = self._questions = asyncio.Lock()

        async def ask(request: ApprovalRequest) -> bool:
            async with one_at_a_time:
                return await ask_approval(request)

        return ask

    @contextlib.contextmanager
    def asking_on(
        self,
        loop: asyncio.AbstractEventLoop,
        client: Client,
        conversation: Conversation,
        before: Callable[[], None] = lambda: None,
        limits: UsageLimits | None = None,
    ) -> Iterator[None]:
        """While a turn of ``conversation`` runs on ``loop`` with ``client``:
        each request a server makes is recorded in the conversation log
        (:func:`~elelem.turns.sampling.recording_requests`); what a server asks
        is asked in the terminal (:mod:`elelem.cli.elicit`), one question at
        a time with the approvals, ``before`` called first (the renderer
        pauses its live region); its sampling requests are served
        (:mod:`elelem.cli.sampling`) within the turn's ``limits``."""
        lock, self._questions = self._questions or asyncio.Lock(), None
        with contextlib.ExitStack() as serving:
            serving.enter_context(recording_requests(self.servers, conversation, loop))
            serving.enter_context(self.elicitor.asking_on(loop, lock, before))
            if self.sampler is not None:
                approve = None
                if self.approve:

                    async def approve(question: str) -> bool:
                        async with lock:
                            before()
                            return await confirm(question)

                serving.enter_context(
                    self.sampler.serving_on(loop, client, approve, limits, conversation)
                )
            yield


@contextlib.contextmanager
def asking_in_background(
    toolset: Toolset, conversation: Conversation, env: Mapping[str, str]
) -> Iterator[None]:
    """:meth:`Toolset.asking_on` for a command whose steps run on no event
    loop that outlasts them (``live``): a loop of its own in a thread, with
    an async client of ``env``, serves the servers' sampling and records
    their requests in ``conversation`` while the block runs.  Without MCP
    servers, nothing is started."""
    if not toolset.servers:
        yield
        return
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="elelem-mcp-requests", daemon=True)
    thread.start()
    try:
        client = Client(env=env)
        asyncio.run_coroutine_threadsafe(client.__aenter__(), loop).result()
        try:
            with toolset.asking_on(loop, client, conversation):
                yield
        finally:
            asyncio.run_coroutine_threadsafe(client.__aexit__(None, None, None), loop).result()
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()


def run_scope(
    toolset: Toolset, limits: UsageLimits | None = None
) -> Callable[[Conversation, Client], Any]:
    """The scope each chat run of ``elelem serve`` runs in (a
    :data:`~elelem.web.chat.RunScope`): the toolset's MCP servers' requests
    recorded in the run's conversation and their sampling served with the
    run's client, counted in the run's ``limits`` (:meth:`Toolset.asking_on`),
    one run at a time (the servers answer one run's requests at once)."""
    one_run: list[asyncio.Lock] = []  # made on the serving loop, at its first run

    @contextlib.asynccontextmanager
    async def scope(conversation: Conversation, client: Client) -> AsyncIterator[None]:
        if not toolset.servers:
            yield
            return
        if not one_run:
            one_run.append(asyncio.Lock())
        async with one_run[0]:
            loop = asyncio.get_running_loop()
            with toolset.asking_on(loop, client, conversation, limits=limits):
                yield

    return scope


def call_line(call: ToolCallBlock, result: ToolResultBlock | None = None) -> str:
    """``called get_weather(city="Paris") → 18°C``: one sanitized line."""
    pairs = call_arguments(call.arguments)
    args = call.arguments if pairs is None else ", ".join(f"{k}={v}" for k, v in pairs)
    line = f"called {sanitize_line(call.name)}({_cut(sanitize_line(args))})"
    if result is not None:
        outcome = _cut(sanitize_line(result.content))
        line += f" → error: {outcome}" if result.is_error else f" → {outcome}"
    return line


def _cut(text: str) -> str:
    return text if len(text) <= STATUS_LIMIT else text[: STATUS_LIMIT - 1] + "…"


def show_call(call: ToolCallBlock, result: ToolResultBlock) -> None:
    """The ``on_call`` observer of the CLI: one status line on stderr."""
    click.echo(call_line(call, result), err=True)


def approval_prompt(request: ApprovalRequest, width: int) -> str:
    """The question ``--approve`` asks: one line when the whole call fits in
    ``width`` columns, else every argument on lines of its own, wrapped to
    ``width``.  Never cut (what is approved is what is shown); sanitized,
    every shown character kept (no run of spaces folded)."""
    name = sanitize_line(request.name)
    where = f" on {sanitize_line(request.server)}" if request.server else ""
    given = call_arguments(request.arguments)
    if given is not None:
        pairs = [(sanitize_line(k), _visible(v)) for k, v in given]
        line = f"run {name}({', '.join(f'{k}={v}' for k, v in pairs)}){where}?"
        items = [f"{k} = {v}" for k, v in pairs]
    else:
        shown = _visible(request.arguments)
        line = f"run {name}({shown}){where}?"
        items = [f"arguments: {shown}"]
    if len(line) <= width:
        return line
    wrap = textwrap.TextWrapper(
        width=width,
        initial_indent="  ",
        subsequent_indent="    ",
        break_on_hyphens=False,
        drop_whitespace=False,  # the pieces join back to exactly the argument
    )
    body = [piece for item in items for piece in wrap.wrap(item)]
    return "\n".join([f"run {name}{where} with:", *body, "run it?"])


def _visible(text: str) -> str:
    """``text`` on one line, every character that is shown kept: controls
    removed by :func:`sanitize`, line breaks and tabs spelled as escapes."""
    return sanitize(text).replace("\n", "\\n").replace("\t", "\\t")


async def ask_approval(request: ApprovalRequest) -> bool:
    """Ask y/n on the terminal before a call runs (see :func:`approval_prompt`),
    reading the answer on the event loop (:func:`confirm`)."""
    width = shutil.get_terminal_size().columns
    return await confirm(approval_prompt(request, width))


__all__ = [
    "Toolset",
    "approval_prompt",
    "ask_approval",
    "asking_in_background",
    "call_line",
    "confirm",
    "function_named",
    "functions_in",
    "functions_option",
    "mcp_option",
    "mcp_sampling_option",
    "run_scope",
    "show_call",
    "tool_options",
]
