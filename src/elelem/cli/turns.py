"""Running one turn of a stored conversation while showing it.

:func:`run_turn` runs the turn engine (which commits every block to the log
as it flushes), or the tool loop on it, with an ``on_chunk`` observer that
shows each stored chunk with what it committed: on the renderer
(:func:`render_observer`) or as the ``--json`` event stream
(:func:`json_observer`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import msgspec
from rich.console import Console
from rich.text import Text

from elelem.cli.json_out import ndjson_line
from elelem.cli.safety import current_redactor
from elelem.cli.tools import Toolset, show_call
from elelem.codec import to_builtins
from elelem.conversation import Conversation
from elelem.conversation.sqlbase import SQLStore
from elelem.errors import ConfigError
from elelem.providers import Catalog, Target
from elelem.providers.fallback import Fallback
from elelem.providers.files import FileUploader
from elelem.providers.middleware import Wrapped
from elelem.providers.protocol import Model
from elelem.redaction import Redactor
from elelem.render import Renderer, sanitize_line
from elelem.render.lines import retry_line
from elelem.stream import Chunk, Finish, ReasoningDelta, Retry, TextDelta
from elelem.transport import Timeouts
from elelem.turns.deferred import resume_flow
from elelem.turns.drive import ChunkObserver, TurnResult, drive
from elelem.turns.engine import Flow, TurnEngine, TurnOptions
from elelem.turns.limits import UsageLimits
from elelem.turns.toolloop import ApprovalRequest, tool_loop
from elelem.vocabulary import GenerationOptions, HostedTool, Message, Part
from elelem.wire import ModelRequest

if TYPE_CHECKING:
    from rich.status import Status

Decisions = tuple[Mapping[str, bool], Mapping[str, Any]]
"""Approvals and results by call id, for a resumed run."""

COMMAND_EVENTS: tuple[str, ...] = ("dropped", "turn", "warning")
"""The ``--json`` lines the command writes itself, beside the stream's chunks
(docs/cli.md documents each; a test keeps the two the same)."""


def run_turn(
    conversation: Conversation,
    target: Target | Model,
    text: str | Message | None,
    observe: ChunkObserver,
    *,
    catalog: Catalog,
    renderer: Renderer | None = None,
    system: str | None = None,
    hosted_tools: Sequence[HostedTool] = (),
    options: GenerationOptions | None = None,
    env: Mapping[str, str] | None = None,
    toolset: Toolset | None = None,
    timeouts: Timeouts | None = None,
    replaying: bool = False,
    streamed: bool = True,
    before_first_send: Callable[[], None] | None = None,
    resume: Decisions | None = None,
    limits: UsageLimits | None = None,
) -> TurnResult:
    """Send ``text`` in ``conversation`` to ``target`` (resolved once by the
    command, from ``catalog``, loaded once), showing each chunk to
    ``observe``; ``renderer`` (if any) follows the blocks in progress.
    Ctrl-C cancels the stream; the conversation keeps what arrived (marked
    incomplete) and ``KeyboardInterrupt`` is raised.  With an active
    ``toolset`` (``--functions``, ``--tool``, ``--mcp``) the turn is a tool
    loop, each call shown as a status line.  ``replaying`` (``demo``: a
    recording played back) makes the turn exactly one request: a paused
    response is not continued and a recoverable error not retried, since
    the recording holds the request that followed, if any, as its own
    interaction.  ``streamed`` False (``--no-stream``) asks for each answer
    non-streamed.

    The turn's first request is encoded once offline before anything is
    stored (:func:`check_first_request`): an attachment over the provider's
    limits, or content its wire cannot carry, fails with the log untouched;
    then ``before_first_send`` (the command's, storing a new conversation)
    runs.  ``resume`` (approvals and results by call id) continues a run
    that stopped awaiting them (``text`` is then None).  ``limits`` bound
    the turn (:mod:`elelem.turns.limits`), the sampling its MCP servers had
    served counted in them; going over one raises
    :class:`~elelem.turns.limits.UsageLimitExceeded`."""
    from elelem.client import Client

    turn_options: TurnOptions = {
        "on_chunk": observe,
        "system": system,
        "hosted_tools": hosted_tools,
        "options": options,
        "streamed": streamed,
        "limits": limits,
    }
    if replaying:
        turn_options["max_continuations"] = 0
        turn_options["recover"] = False
    uploader = file_uploader(conversation, env, replaying)
    if uploader is not None:
        turn_options["files"] = uploader
    flow: Flow[TurnResult]
    if resume is not None or (toolset is not None and toolset.active):
        toolset = toolset if toolset is not None else Toolset()
        approve, on_call = toolset.approver(), show_call
        if renderer is not None:
            if approve is not None and approve != "defer":
                approve = paused_before(renderer, approve)
            on_call = paused(renderer, show_call)
        loop = toolset.loop(approve)
        engine = TurnEngine.create(
            conversation, target, text, **loop.asking(turn_options, conversation.system)
        )
        if resume is not None:
            approvals, results = resume
            flow = resume_flow(
                engine, loop, loop.step, approvals, results,
                max_steps=toolset.max_steps, on_call=on_call,
            )  # fmt: skip
        else:
            flow = tool_loop(engine, loop, loop.step, max_steps=toolset.max_steps, on_call=on_call)
    else:
        engine = TurnEngine.create(conversation, target, text, **turn_options)
        flow = engine.run()
    if resume is None:
        check_first_request(engine)
    if before_first_send is not None:
        before_first_send()
    if renderer is not None:
        renderer.follow(lambda: engine.stream.open_parts() if engine.stream is not None else ())

    done: list[TurnResult] = []

    async def go() -> None:
        async with Client(env=env, catalog=catalog, timeouts=timeouts) as client:
            asking: contextlib.AbstractContextManager[None] = contextlib.nullcontext()
            if toolset is not None:
                # What an MCP server asks is asked (and sampled) on this loop.
                before = (lambda: _pause(renderer)) if renderer is not None else (lambda: None)
                loop = asyncio.get_running_loop()
                asking = toolset.asking_on(loop, client, conversation, before, limits)
            with asking:
                done.append(await drive(flow, client, conversation))

    # The result is handed over beside the task, not as its result:
    # asyncio.run ends by asking signal.getsignal, which formats the repr of
    # its SIGINT handler, whose task's repr holds the repr of its result
    # (the whole answer, once more).
    try:
        asyncio.run(go())
    finally:
        if uploader is not None:
            uploader.close()
    return done[0]


UPLOAD_FILES = "ELELEM_UPLOAD_FILES"
"""The variable that, set to ``1``, sends images and PDFs by provider file id
(opt-in: docs/cli.md, "Files by reference")."""


def file_uploader(
    conversation: Conversation, env: Mapping[str, str] | None, replaying: bool
) -> FileUploader | None:
    """The uploader of a turn when ``$ELELEM_UPLOAD_FILES`` is ``1`` and the
    store is a SQL store (None otherwise, and for a recording played back)."""
    value = (os.environ if env is None else env).get(UPLOAD_FILES, "")
    if value not in ("", "0", "1"):
        raise ConfigError(f"{UPLOAD_FILES} must be 1 or 0, not {value[:20]!r}")
    if value != "1" or replaying or not isinstance(conversation.store, SQLStore):
        return None
    return FileUploader(conversation.store)


_TERMINAL = threading.Lock()
"""One question or status line on the terminal at a time (calls run at once)."""

T = TypeVar("T")
P = ParamSpec("P")


def paused(renderer: Renderer, write: Callable[P, T]) -> Callable[P, T]:
    """``write`` (an approval question, a status line) with the renderer's
    live region paused first: the live redraw would otherwise erase a
    question the user must read and answer."""

    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        with _TERMINAL:
            renderer.pause()
            return write(*args, **kwargs)

    return call


def _pause(renderer: Renderer) -> None:
    with _TERMINAL:
        renderer.pause()


def paused_before(
    renderer: Renderer, ask: Callable[[ApprovalRequest], Awaitable[bool]]
) -> Callable[[ApprovalRequest], Awaitable[bool]]:
    """The async ``ask`` (an approval question) with the renderer's live
    region paused first, as :func:`paused` does for a sync writer."""

    async def call(request: ApprovalRequest) -> bool:
        with _TERMINAL:
            renderer.pause()
        return await ask(request)

    return call


def check_first_request(engine: TurnEngine) -> None:
    """Encode the request ``engine`` sends first, offline (nothing is stored
    or sent), so what the wire refuses to carry fails before the turn
    commits anything."""
    conversation = engine.conversation
    projection = conversation.project()
    messages = projection.messages
    text = engine.user_input
    if text is not None:
        messages = (*messages, Message.user(text) if isinstance(text, str) else text)
    arguments = {**engine.arguments(projection), "messages": messages}
    arguments["response_payloads"] = tuple(arguments["response_payloads"])
    if arguments["options"] is None:
        arguments["options"] = GenerationOptions()
    for target in _catalog_targets(engine.target):
        request = ModelRequest(model=target.model, now=datetime.now(UTC), **arguments)
        target.shape.encode_request(request, provider=target.provider)


def _catalog_targets(model: Target | Model) -> tuple[Target, ...]:
    """The catalog targets a request may go to: a fallback's each; a model
    answering in-process or through middleware has none to check offline."""
    if isinstance(model, Target):
        return (model,)
    if isinstance(model, Fallback):
        return tuple(t for t in model.targets if isinstance(t, Target))
    if isinstance(model, Wrapped) and not isinstance(model.inner, str):
        return _catalog_targets(model.inner)
    return ()


class Waiting:
    """A quiet ``waiting for anthropic…`` spinner on stderr, at a terminal
    only, from the request until the answer's first chunk (or the end)."""

    def __init__(self, provider: str) -> None:
        console = Console(stderr=True, highlight=False)
        self._status: Status | None = None
        if console.is_terminal:
            # Deferred: rich's Status (its live region, its spinners) shows at
            # a terminal only; an answer piped elsewhere never imports it.
            from rich.status import Status

            label = Text(f"waiting for {sanitize_line(provider)}…", style="dim")
            self._status = Status(label, console=console, spinner="dots")
            self._status.start()

    def stop(self) -> None:
        """Take the spinner away (again: nothing)."""
        status, self._status = self._status, None
        if status is not None:
            status.stop()

    def until_first(self, observe: ChunkObserver) -> ChunkObserver:
        """``observe``, the spinner stopped before the first chunk is shown."""

        def first(chunk: Chunk, committed: tuple[Part, ...]) -> None:
            self.stop()
            observe(chunk, committed)

        return first


def render_observer(renderer: Renderer) -> ChunkObserver:
    """Show chunks, with what they committed, on ``renderer``; a retry notice
    goes to stderr (``retrying in 1.0 s: rate limit``), beside the other
    status lines and out of the answer."""

    def observe(chunk: Chunk, committed: tuple[Part, ...]) -> None:
        if type(chunk) is Retry:
            sys.stderr.write(retry_line(chunk) + "\n")
            sys.stderr.flush()
        else:
            renderer.feed(chunk, committed)

    return observe


def json_observer(redactor: Redactor | None = None) -> ChunkObserver:
    """Write each chunk as one ASCII NDJSON line on stdout.

    Each line is redacted as it is written, but a key split across two text
    deltas would be in neither line whole: so the text of each block is held
    back until it is :attr:`~elelem.redaction.Redactor.echo_bound` characters
    from its end (and outside any echo still open), redacted, and written as
    the deltas' text; the rest goes out before the block's end.  Without a
    secret in force nothing is held."""
    redactor = redactor if redactor is not None else current_redactor()
    held: dict[tuple[type, object], str] = {}

    def write(chunk: Chunk) -> None:
        sys.stdout.write(ndjson_line(to_builtins(chunk)) + "\n")

    def release(key: tuple[type, object], text: str, final: bool) -> str:
        text = held.pop(key, "") + text
        cut = len(text) if final else len(text) - redactor.echo_bound
        for start, end in reversed(redactor.spans(text)):
            if start < cut < end or (not final and start < cut and end == len(text)):
                cut = start  # an echo across the cut (or maybe still growing) waits whole
        cut = max(cut, 0)
        if cut < len(text):
            held[key] = text[cut:]
        return redactor.redact(text[:cut])

    def observe(chunk: Chunk, _committed: tuple[Part, ...]) -> None:
        kind = type(chunk)
        if redactor and isinstance(chunk, (TextDelta, ReasoningDelta)):
            text = release((kind, chunk.index), chunk.text, False)
            if text:
                write(msgspec.structs.replace(chunk, text=text))
        else:
            for key in [k for k in held if kind is Finish or k[1] == getattr(chunk, "index", None)]:
                rest = release(key, "", True)
                if rest:
                    write(key[0](key[1], rest))
            write(chunk)
        sys.stdout.flush()

    return observe


__all__ = ["COMMAND_EVENTS", "check_first_request", "json_observer", "render_observer", "run_turn"]
