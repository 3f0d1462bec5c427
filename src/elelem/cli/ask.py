"""``elelem ask`` (one question) and ``elelem chat`` (a conversation at the prompt)."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click
import msgspec

from elelem.cli.attachments import (
    MAX_IMAGES,
    attach_option,
    piped_stdin,
    prompt_and_attachments,
    save_audio,
    save_images,
    user_message,
)
from elelem.cli.console import make_renderer
from elelem.cli.default_model import default_model, is_test_model
from elelem.cli.exits import (
    EXIT_LIMIT,
    EXIT_PROVIDER,
    EXIT_USAGE,
    Failure,
    debug_option,
    describe,
    guarded,
)
from elelem.cli.flags import (
    continue_option,
    hosted_tools,
    limit_options,
    limits_of,
    model_options,
    timeouts_of,
)
from elelem.cli.json_out import ndjson_line
from elelem.cli.options import (
    SchemaMismatch,
    check_answer,
    context_editing,
    generation_options,
    schema_output,
)
from elelem.cli.safety import command_catalog
from elelem.cli.store import store_from_env
from elelem.cli.terminal import quiet_terminal
from elelem.cli.tools import Toolset, skill_named, tool_options
from elelem.cli.turns import Decisions, Waiting, json_observer, render_observer, run_turn
from elelem.client.preflight import preflight
from elelem.conversation import Conversation, ConversationNotFound, Store
from elelem.conversation.events import ResponseRecord, ServerRequest
from elelem.conversation.projections import add_usage
from elelem.conversation.store import new_conversation_id
from elelem.errors import ConfigError, StreamError, TransportError
from elelem.providers import Catalog, Target
from elelem.providers.costs import events_cost
from elelem.providers.fallback import Fallback
from elelem.providers.middleware import PromptCaching, wrap
from elelem.providers.protocol import Model, resolved_address
from elelem.render import Renderer, sanitize, sanitize_line
from elelem.transport import Timeouts
from elelem.turns.drive import TurnResult
from elelem.turns.engine import run_events
from elelem.turns.limits import UsageLimitExceeded, UsageLimits
from elelem.turns.pending import AWAITING_APPROVAL, AWAITING_RESULTS
from elelem.vocabulary import (
    CacheTTL,
    GenerationOptions,
    HostedTool,
    JsonSchemaOutput,
    Message,
    Usage,
)
from elelem.vocabulary.drop import ADJUSTED
from elelem.vocabulary.registry import RecordTable
from elelem.wire import ModelRequest


@dataclass
class Session:
    """What one ``ask`` or ``chat`` talks to and how it shows the answers."""

    conversation: Conversation
    catalog: Catalog
    target: Target | Model
    renderer: Renderer | None
    system: str | None
    tools: tuple[HostedTool, ...]
    options: GenerationOptions
    toolset: Toolset | None = None
    timeouts: Timeouts | None = None
    streamed: bool = True
    """False with ``--no-stream``: each request asks for the whole answer at once."""
    stored: bool = True
    """False for a new conversation until its first request is about to go
    out: a command that fails before then leaves the store as it was."""
    cache: str | None = None
    """``--cache [TTL]``: the prompt cache around every model the session uses."""
    extract: bool = False
    """``-x``/``--xl``: nothing is shown while the answer streams (the
    command prints a code block of it afterwards)."""
    limits: UsageLimits | None = None
    """``--max-requests``, ``--max-output-tokens``, …: each turn's usage limits."""
    began: int = 0
    """How many events the conversation held when the latest answer began:
    a run that appended none had not begun (its turn is an earlier run's)."""

    @property
    def model(self) -> str:
        """The ``provider:model`` the session talks to (an alias resolved)."""
        return resolved_address(self.target)

    def _store_new(self) -> None:
        """Create the new conversation in the store, under the id it was
        given when the session opened (and the chat has shown)."""
        conv = self.conversation
        conv.store.create(id=conv.id)
        self.stored = True

    def begun_turn(self) -> int | None:
        """The turn of the run the latest answer began, None while it has
        appended nothing (it never began: nothing of it to count)."""
        conv = self.conversation
        return conv.turn if len(conv.events) > self.began else None

    def close_answer(self, early: str | None = None) -> None:
        """End the answer on the screen however the run ended: ``early``
        (how a limit, Ctrl-C or an error stopped it) closes what was shown
        of it; then the usage line under it, counted and priced by
        :func:`run_usage`'s rule.  The line comes even when nothing was
        shown: a run can spend before its first chunk (the sampling an MCP
        server had served during an approved call), and what it spent is
        said (docs/cli.md, "Usage limits")."""
        renderer = self.renderer
        if renderer is None:
            return
        if early is not None and renderer.active:
            renderer.cut(early)
        turn = self.begun_turn()
        if turn is not None:
            conv = self.conversation
            renderer.set_usage(run_usage(conv, turn).shown)
            renderer.cost = events_cost(run_events(conv, turn)).describe()
        else:
            renderer.set_usage(None)
        renderer.end_answer()

    def answer(self, text: str | Message | None, resume: Decisions | None = None) -> TurnResult:
        """One turn: stream the answer into the log and onto the screen (or
        as NDJSON).  Ctrl-C and stream errors end the answer showing what
        arrived (the log keeps it too), then propagate.  ``resume`` continues
        a run that stopped for approvals or results instead."""
        renderer = self.renderer
        output = self.options.output
        schema = output.schema if isinstance(output, JsonSchemaOutput) else None
        if renderer is not None:
            observe = render_observer(renderer)
        elif schema is not None or self.extract:
            # --schema --json: the object alone, once it is checked; -x: the code.
            observe = quiet_observer
        else:
            observe = json_observer()
        self.warn_before(text)
        self.began = len(self.conversation.events)
        waiting = Waiting(self.target.provider) if renderer is not None else None
        if waiting is not None:
            observe = waiting.until_first(observe)
        try:
            with quiet_terminal():
                result = run_turn(
                    self.conversation,
                    self.target,
                    text,
                    observe,
                    catalog=self.catalog,
                    renderer=renderer,
                    system=self.system,
                    hosted_tools=self.tools,
                    options=self.options,
                    toolset=self.toolset,
                    timeouts=self.timeouts,
                    streamed=self.streamed,
                    before_first_send=None if self.stored else self._store_new,
                    resume=resume,
                    limits=self.limits,
                )
        except UsageLimitExceeded as exc:
            if waiting is not None:
                waiting.stop()
            self.limit_reached(exc)
            raise Failure(f"{exc} (what the turn did is kept)", EXIT_LIMIT) from None
        except KeyboardInterrupt:
            if waiting is not None:
                waiting.stop()
            self.close_answer("interrupted: kept what arrived")
            raise
        except StreamError as exc:
            if waiting is not None:
                waiting.stop()
            self.close_answer("stopped by an error: kept what arrived")
            hint = LOCAL_HINTS.get(str(self.target.provider))
            if (
                hint is not None
                and isinstance(exc, TransportError)
                and "before a response" in exc.message
            ):
                raise Failure(f"{describe(exc)} ({hint})", EXIT_PROVIDER) from None
            raise
        finally:
            if waiting is not None:
                waiting.stop()  # any other way out: the spinner never outlives the turn
        if result.end == "max-steps" and self.toolset is not None:
            # The answer stops short: say why, whatever the output form.
            click.echo(
                f"elelem: stopped at --max-steps {self.toolset.max_steps}: "
                "the last calls were not run",
                err=True,
            )
        dropped = dropped_of(result)
        if renderer is not None:
            self.close_answer()
            if dropped:
                renderer.notice(dropped_line(dropped))
        elif dropped and schema is None:
            sys.stdout.write(ndjson_line(dropped_event(result.turn, dropped)) + "\n")
        if schema is not None:
            try:
                value = check_answer(result.text, schema)
            except SchemaMismatch as exc:
                raise Failure(
                    f"{exc} (the answer is kept in the conversation)", EXIT_PROVIDER
                ) from None
            if renderer is None:
                sys.stdout.write(ndjson_line(value) + "\n")
        elif renderer is None and not self.extract:
            self.write_turn_line(result)
        return result

    def write_turn_line(self, result: TurnResult) -> None:
        """The ``--json`` line that ends a turn: how it ended, what it used."""
        line = {
            "type": "turn",
            "conversation": self.conversation.id,
            "turn": result.turn,
            "end": result.end,
            "usage": turn_usage(self.conversation, result),
        }
        sys.stdout.write(ndjson_line(line) + "\n")

    def limit_reached(self, exc: UsageLimitExceeded) -> None:
        """End the answer a usage limit stopped as any early end
        (:meth:`close_answer`), and with ``--json`` write the turn line (end
        ``usage-limit``) as a turn that ended otherwise does."""
        if self.renderer is not None:
            self.close_answer(f"stopped by the usage limit {exc.limit}")
            return
        result = exc.result
        schema = isinstance(self.options.output, JsonSchemaOutput)
        if isinstance(result, TurnResult) and not self.extract and not schema:
            self.write_turn_line(result)

    def warn_before(self, text: str | Message | None) -> None:
        """Tell what the model catalog expects this turn to hit
        (:mod:`elelem.client.preflight`): one ``elelem: warning:`` line each on
        stderr, or with ``--json`` a ``warning`` event each on stdout."""
        history = list(self.conversation.history())
        if isinstance(text, Message):
            history.append(text)
        elif text:
            history.append(Message.user(text))
        request = ModelRequest(
            model=self.target.model,
            messages=tuple(history),
            system=self.system,
            hosted_tools=self.tools,
            options=self.options,
        )
        toolset = self.toolset
        asked = toolset is not None and bool(toolset.tools or toolset.servers)
        events = (
            self.renderer is None
            and not self.extract
            and not isinstance(self.options.output, JsonSchemaOutput)
        )
        for warning in preflight(
            str(self.target.provider), self.target.model, request, tools_asked=asked
        ):
            if events:  # --json: a structured line among the stream's events
                line = {"type": "warning", **msgspec.to_builtins(warning)}
                sys.stdout.write(ndjson_line(line) + "\n")
            else:
                click.echo(f"elelem: warning: {sanitize_line(warning.message)}", err=True)


LOCAL_HINTS: Mapping[str, str] = RecordTable(lambda r: r.connect_hint or None)
"""What to check when a provider's server refuses the connection (its
record's ``connect_hint``: the local servers' start commands)."""


@dataclass(frozen=True)
class RunUsage:
    """What a run used, as the CLI reports it when the run ends, however it
    ended: the one count of the ``--json`` turn line and of the usage line
    under the answer (whose cost prices the same events)."""

    run: Usage
    """The run's own responses (an interrupted one's usage so far included)."""
    sampling: Usage
    """The sampling its MCP servers had served during the run."""
    reported: bool
    """Whether any of them reported usage at all."""

    @property
    def total(self) -> Usage:
        """Both counts together."""
        return add_usage(self.run, self.sampling)

    @property
    def shown(self) -> Usage | None:
        """What the usage line says: :attr:`total`, or None (no line) when
        nothing reported usage."""
        return self.total if self.reported else None


def run_usage(conversation: Conversation, turn: int) -> RunUsage:
    """What the run going on in ``turn`` used, read from the log (so a run
    a limit, Ctrl-C or an error ended is counted as one that completed):
    for ``approve`` and ``resume`` the continued run from its decision on,
    not what the run did before it stopped.  The events its usage limits
    count (:func:`~elelem.turns.engine.run_events`), and that its cost
    prices (:func:`~elelem.providers.costs.events_cost`)."""
    run, sampling, reported = Usage(), Usage(), False
    for event in run_events(conversation, turn):
        body = event.body
        if isinstance(body, ResponseRecord):
            run = add_usage(run, body.usage or Usage())
        elif isinstance(body, ServerRequest):
            sampling = add_usage(sampling, body.usage or Usage())
        else:
            continue
        reported = reported or body.usage is not None
    return RunUsage(run, sampling, reported)


def turn_usage(conversation: Conversation, result: TurnResult) -> dict[str, Any]:
    """The ``usage`` of the ``--json`` turn line (:func:`run_usage`): the
    run's own responses' (``run``), the sampling its MCP servers had served
    during the run (``sampling``), and both (``total``)."""
    used = run_usage(conversation, result.turn)
    usages = {"run": used.run, "sampling": used.sampling, "total": used.total}
    return {name: msgspec.to_builtins(usage) for name, usage in usages.items()}


def dropped_of(result: TurnResult) -> list[Any]:
    """What the turn's requests left out, every response's in order, each once
    (a record's drops whose ``where`` starts with ``response`` are the
    assembler's, not the request's)."""
    seen: list[Any] = []
    for record in result.responses:
        for drop in record.dropped:
            if str(getattr(drop, "where", "")).startswith("response"):
                continue
            if drop not in seen:
                seen.append(drop)
    return seen


def _drop_text(drop: Any) -> str:
    return str(getattr(drop, "description", drop))


def dropped_line(dropped: list[Any]) -> str:
    """The one line under an answer saying what its requests did not send,
    then what they sent changed (an ``adjusted`` record: a cache lifetime
    capped, a named system sent as a desktop)."""
    changed = [d for d in dropped if getattr(d, "why", None) == ADJUSTED]
    left_out = [d for d in dropped if getattr(d, "why", None) != ADJUSTED]
    parts = [
        f"{label}: " + "; ".join(_drop_text(d) for d in drops)
        for label, drops in (("not sent", left_out), ("sent changed", changed))
        if drops
    ]
    return " · ".join(parts)


def dropped_event(turn: int, dropped: list[Any]) -> dict[str, Any]:
    """The ``--json`` line saying what the turn's requests did not send."""
    items = [d if isinstance(d, str) else msgspec.to_builtins(d) for d in dropped]
    return {"type": "dropped", "turn": turn, "dropped": items}


def quiet_observer(_chunk: object, _committed: object) -> None:
    """Shows nothing: the answer is printed whole once it is complete."""


def check_model(catalog: Catalog, model: str) -> Target | Fallback | Model:
    """Resolve ``model`` once for the command: an unknown provider, a shape
    not built yet, or a missing or malformed key (AWS credentials count for
    a signing provider, as in the library) fails here, before anything is
    stored.  A comma-separated list (``-m a,b``, or an alias to a list in
    the config file) is a :class:`~elelem.Fallback` of those models, each
    resolved now."""
    if is_test_model(model):
        from elelem.cli.testmodel import test_model  # deferred: the test model is rarely asked for

        return test_model()  # -m test: in-process, no key (elelem.cli.testmodel)
    address = catalog.aliases.get(model.strip(), model)
    if "," not in address:
        return catalog.target(model, os.environ)
    parts = [a.strip() for a in address.split(",")]
    if not all(parts):
        raise ConfigError(f"{model!r}: a list of models has an empty entry")
    return Fallback([catalog.target(a, os.environ) for a in parts])


CACHE_TTLS: dict[str, CacheTTL | None] = {"on": None, "5m": "5m", "1h": "1h", "24h": "24h"}
"""``--cache [TTL]`` values; ``on`` leaves the lifetime to the provider."""


def cached(target: Target | Model, flag: str | None) -> Target | Model:
    """``target`` with the prompt cache of ``--cache [TTL]`` around it (the
    :class:`~elelem.providers.middleware.PromptCaching` middleware)."""
    return target if flag is None else wrap(target, PromptCaching(ttl=CACHE_TTLS[flag]))


def open_session(store: Store, ref: str | None, params: Mapping[str, Any]) -> Session:
    """The session the command line asks for (the options of
    :func:`~elelem.cli.flags.model_options`): the conversation (``ref``
    continues one, None starts one) and the model to use: the one given,
    else the conversation's, else the default."""
    catalog = command_catalog()
    model: str | None = params["model"]
    if model is not None and not model.strip():
        raise Failure("-m/--model is empty: give provider:model or an alias", EXIT_USAGE)
    if ref is None:
        target = check_model(catalog, model or default_model(catalog))
        # Stored only once its first request is about to go out (see Session.stored).
        conversation = Conversation(store, new_conversation_id())
    else:
        # Deferred: the history commands' module (its Markdown export, its
        # event lines) is needed by a continued conversation only.
        from elelem.cli.history import resolve_conversation

        conversation = Conversation.open(store, resolve_conversation(store, ref))
        target = check_model(catalog, model or conversation.info.model or default_model(catalog))
    renderer = None
    if not params["as_json"]:
        renderer = make_renderer(params["reasoning"], params["citations"])
    return Session(
        conversation,
        catalog,
        cached(target, params["cache"]),
        renderer,
        params["system"],
        hosted_tools(
            params["web_search"],
            params["web_fetch"],
            params["code_execution"],
            params["x_search"],
            tuple(skill_named(skill) for skill in params["skills"]),
        ),
        generation_options(
            params["option_pairs"],
            max_tokens=params["max_tokens"],
            effort=params["effort"],
            show_reasoning=reasoning_asked(),
            base={
                "output": schema_output(params["schema"]),
                "context_editing": context_editing(params["context_editing"]),
            },
        ),
        Toolset.from_params(params),
        timeouts_of(params),
        streamed=not params["no_stream"],
        stored=ref is not None,
        cache=params["cache"],
        limits=limits_of(params),
    )


def reasoning_asked() -> bool:
    """Whether ``--reasoning summary|full`` was given on the command line (not
    left at its default): then the request asks to see the reasoning."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return False
    given = ctx.get_parameter_source("reasoning") is click.core.ParameterSource.COMMANDLINE
    return given and ctx.params.get("reasoning") in ("summary", "full")


F = TypeVar("F", bound=Callable[..., Any])


def _folder_option(flag: str, help: str) -> Callable[[F], F]:
    """``flag`` FOLDER, the current folder unless given: where ``ask``
    writes a kind of generated file."""
    folder = click.Path(file_okay=False, path_type=Path)
    return click.option(flag, type=folder, default=Path("."), show_default=True, help=help)


@click.command("ask")
@click.argument("prompt", nargs=-1)
@continue_option
@attach_option
@_folder_option("--images-dir", "Where generated images are written.")
@_folder_option("--audio-out", "Where generated audio is written.")
@click.option(
    "-x",
    "--extract",
    is_flag=True,
    help="Print only the first fenced code block of the answer (all of it if it has none).",
)
@click.option("--xl", "--extract-last", "extract_last", is_flag=True, help="As -x, the last block.")
@model_options
@tool_options
@limit_options
@click.option(
    "--mcp-prompt",
    metavar="'SERVER:NAME [KEY=VALUE]...'",
    help="Start the question with a prompt of an --mcp server (SERVER: the name it gives "
    "itself, or its place among the --mcp options, from 1), filled with the values given.",
)
@debug_option
@guarded
def ask_command(
    prompt: tuple[str, ...],
    continue_: str | None,
    attachments: tuple[str, ...],
    images_dir: Path,
    audio_out: Path,
    extract: bool,
    extract_last: bool,
    **params: Any,
) -> None:
    """Ask one question (PROMPT, stdin, or both: piped text goes before the
    prompt) with any attachments, and show the answer as it streams."""
    if (extract or extract_last) and params["as_json"]:
        raise Failure("-x prints code, --json events: give one of them", EXIT_USAGE)
    store = store_from_env(persist=not params["no_store"])
    text = " ".join(prompt).strip()  # valid UTF-8: guarded checked every text option
    if continue_ not in (None, "last") and not text and continue_ is not None:
        # `ask -c "a question"`: click took the question as the id.  Only
        # text no id can be (it holds a space) is taken so: a mistyped id is
        # an error, never a prompt sent to the latest conversation.
        from elelem.cli.history import resolve_conversation  # deferred, as in open_session

        try:
            resolve_conversation(store, continue_)
        except ConversationNotFound:
            if not any(c.isspace() for c in continue_.strip()):
                raise Failure(
                    f"no conversation {continue_!r} in this store (to continue the latest "
                    f"with a one-word prompt, write: elelem ask -c last {continue_})",
                    EXIT_USAGE,
                ) from None
            text, continue_ = continue_, "last"
    text, blocks = prompt_and_attachments(text, attachments, piped_stdin())
    mcp_prompt = params.pop("mcp_prompt")
    if not text and not blocks and not mcp_prompt:
        raise Failure("nothing to ask: give a PROMPT or pipe it on stdin", EXIT_USAGE)
    extracting = extract or extract_last
    session = open_session(store, continue_, {**params, "as_json": params["as_json"] or extracting})
    session.extract = extracting
    with session.toolset or Toolset() as toolset:
        if mcp_prompt:
            # The server's prompt goes first, as piped text does; its images too.
            # Deferred: the mcp command's module imports the MCP client.
            from elelem.cli.mcp import prompt_of

            given = prompt_of(toolset.servers, mcp_prompt)
            text = f"{given.content}\n\n{text}" if text else given.content
            blocks = [*given.attachments, *blocks]
        result = session.answer(user_message(text, blocks))
    if extracting:
        code = extract_code(result.text, last=extract_last)
        sys.stdout.write(sanitize(code) + ("" if code.endswith("\n") else "\n"))
    stem = f"{session.conversation.id}-{result.turn}"
    parts = [p for m in result.messages for p in m.content]
    for what, save, where in (("image", save_images, images_dir), ("audio", save_audio, audio_out)):
        saved, skipped = save(parts, where, stem)
        for path in saved:
            click.echo(f"{what} saved to {sanitize_line(str(path))}", err=True)
        if skipped:
            click.echo(
                f"{skipped} more {what} files not saved (at most {MAX_IMAGES}); "
                "the conversation keeps them all",
                err=True,
            )
    if session.renderer is not None and not params["no_store"]:
        click.echo(f"conversation {sanitize_line(session.conversation.id)}", err=True)
    awaiting_line(session, result)


FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})[^\n]*\n(?P<code>.*?)^(?P=fence)[ \t]*$", re.M | re.S)
"""A fenced code block of Markdown (its info string, e.g. the language, skipped)."""


def extract_code(text: str, *, last: bool = False) -> str:
    """The first (``last``: the last) fenced code block's content in
    ``text``, else the whole text (as ``llm -x`` does)."""
    blocks = [m.group("code") for m in FENCE.finditer(text)]
    if not blocks:
        return text
    return blocks[-1] if last else blocks[0]


def awaiting_line(session: Session, result: TurnResult) -> None:
    """Say how to go on when the run stopped for approvals or results."""
    if result.end in (AWAITING_APPROVAL, AWAITING_RESULTS):
        command = "approve" if result.end == AWAITING_APPROVAL else "resume"
        ident = sanitize_line(session.conversation.id)
        click.echo(f"{result.end}: elelem {command} {ident}", err=True)


__all__ = ["Session", "ask_command", "check_model", "extract_code", "open_session"]
