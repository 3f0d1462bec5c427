"""What every conversation command shares: exit statuses, error reporting,
the console, the store, and the options that choose a model and its tools."""

from __future__ import annotations

import functools
import json
import math
import os
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import Any, ParamSpec, TypeVar

import click
from rich.console import Console

from elelem.cli.safety import scrub_error, secrets_in_force
from elelem.conversation import ConversationNotFound, Store, StoreError, open_store
from elelem.conversation.sqlbase import SQLStore
from elelem.errors import (
    EXTRA_MODULES,
    BlobError,
    ConfigError,
    ElelemError,
    StreamError,
    UnsupportedError,
    error_line,
    install_line,
)
from elelem.home import home_dir
from elelem.providers import Catalog, config_path
from elelem.providers.config import read_config
from elelem.providers.models import DEFAULT_MODELS
from elelem.reading import ReadRefused, read_file, read_stream, too_large
from elelem.render import Renderer, RenderOptions, sanitize_line
from elelem.transport import Timeouts
from elelem.vocabulary import CodeExecution, HostedTool, Skill, WebFetch, WebSearch, XSearch
from elelem.vocabulary.json import TOO_DEEP, JSONValue

EXIT_OK = 0
EXIT_PROVIDER = 1
EXIT_USAGE = 2
EXIT_STORE = 3
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130

EXIT_STATUSES = (
    "Exit statuses: 0 success; 1 the provider or the stream failed (the reply so far is kept); "
    "2 bad usage or configuration (unknown provider or model, missing API key, unknown "
    "conversation, unreadable file); 3 the conversation store failed (cannot open, import "
    "refused); 70 an internal error (a bug: please report it with --debug output); "
    "130 interrupted (Ctrl-C; the reply so far is kept)."
)


class Finite(click.FloatRange):
    """A :class:`click.FloatRange` that also refuses ``nan`` and ``inf``:
    ``nan`` passes every range comparison, so a range alone lets it through."""

    what = "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite {self.what}", param, ctx)
        return number


class Seconds(Finite):
    """A number of seconds, 0 or more, finite (0 already says "never"
    wherever a timeout or pause may be off), and nothing past
    :data:`threading.TIMEOUT_MAX` (some 292 years), which a thread's wait
    cannot take (``demo --pace 1e308`` killed the serving thread and ended
    the stream early)."""

    what = "number of seconds"

    def __init__(self) -> None:
        super().__init__(min=0, max=threading.TIMEOUT_MAX)


SECONDS = Seconds()


class Failure(ElelemError, click.ClickException):
    """A failure reported as one ``elelem: …`` line on stderr with its exit status."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        # click declares exit_code on the class; each failure carries its own.
        self.__dict__["exit_code"] = exit_code

    def show(self, file: Any = None) -> None:
        """One sanitized line: messages may quote provider or file text."""
        click.echo(f"elelem: {sanitize_line(self.format_message())}", err=True, file=file)


def exit_status(exc: BaseException) -> int:
    """The documented exit status for an error."""
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    if isinstance(exc, StreamError):
        return EXIT_PROVIDER
    if isinstance(exc, StoreError) and not isinstance(exc, ConversationNotFound):
        return EXIT_STORE
    if isinstance(exc, BlobError):
        # A blob the log references is missing from the store or corrupt.
        return EXIT_STORE
    return EXIT_USAGE


def describe(exc: BaseException) -> str:
    """The one-line message for an error (:func:`elelem.errors.error_line`)."""
    return error_line(exc)


P = ParamSpec("P")
R = TypeVar("R")


def debug_enabled() -> bool:
    """True with ``--debug`` (or ``ELELEM_DEBUG=1``): errors show their traceback."""
    ctx = click.get_current_context(silent=True)
    flag = bool(ctx and ctx.find_root().meta.get("elelem.debug"))
    return flag or os.environ.get("ELELEM_DEBUG", "") not in ("", "0")


def guarded(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn elelem's typed errors into one line and an exit status; with
    ``--debug`` let them through with their traceback."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            check_text_params()
            return fn(*args, **kwargs)
        except click.ClickException:
            raise
        except BrokenPipeError:
            # The reader went away (`elelem log | head`): nothing left to say.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            raise SystemExit(EXIT_OK) from None
        except (ElelemError, OSError, KeyboardInterrupt) as exc:
            if debug_enabled():
                scrub_error(exc)  # the traceback shows its text: no secret, no escape
                raise
            if isinstance(exc, KeyboardInterrupt):
                note = " (a tool still running was abandoned)" if tools_running() else ""
                raise Failure(f"interrupted{note}", EXIT_INTERRUPTED) from None
            scrub_error(exc)
            raise Failure(describe(exc), exit_status(exc)) from None
        except ModuleNotFoundError as exc:
            extra = EXTRA_MODULES.get((exc.name or "").partition(".")[0])
            if extra is None or debug_enabled():
                raise
            what = f"{click.get_current_context().command_path} needs the {extra} extra"
            raise Failure(
                f"{what} ({exc.name} is not installed): {install_line(extra)}", EXIT_USAGE
            ) from None
        except Exception as exc:
            # A bug of ours: still one line (the traceback is one --debug away).
            scrub_error(exc)
            if debug_enabled():
                raise
            message = f"internal error: {type(exc).__name__}: {exc} (--debug shows the traceback)"
            raise Failure(message, EXIT_INTERNAL) from exc

    return wrapper


TOOL_THREAD = "AnyIO worker thread"
"""The name of the threads a sync tool (or a blocking call) runs in."""


def tools_running(grace: float = 0.2) -> list[threading.Thread]:
    """The worker threads still running a sync tool once the turn is over
    (cancelled calls are abandoned, not stopped: Python cannot stop a
    thread).  An idle worker ends when its event loop does: each is given
    ``grace`` seconds to."""
    busy = [t for t in threading.enumerate() if t.name == TOOL_THREAD and not t.daemon]
    for thread in busy:
        thread.join(grace / len(busy))
    return [t for t in busy if t.is_alive()]


def leave(status: int) -> None:
    """End the process with ``status``.  A tool still running (abandoned by
    Ctrl-C) would keep the interpreter waiting for its thread at exit, where
    a second Ctrl-C prints a traceback: with one, the process ends at once
    (what is stored is committed already), saying so unless ``interrupted``
    was said with it."""
    if tools_running():
        if status != EXIT_INTERRUPTED:
            click.echo("elelem: a tool still running was abandoned", err=True)
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(status)


def max_bytes_option(default: int, what: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """``--max-bytes N``: the most of ``what`` (an input file) that is read."""
    return click.option(
        "--max-bytes",
        # Bounded so a read of that size can be asked for at all.
        type=click.IntRange(min=1, max=2**62),
        default=default,
        show_default=True,
        help=f"Refuse {what} larger than this.",
    )


def debug_option(fn: Callable[P, R]) -> Callable[P, R]:
    """``--debug``: show tracebacks instead of one-line errors."""

    def remember(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
        if value:
            ctx.find_root().meta["elelem.debug"] = True
        return value

    return click.option(
        "--debug",
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=remember,
        help="Show the full traceback of an error.",
    )(fn)


def make_console(stderr: bool = False) -> Console:
    """A console on stdout (or stderr); rich decides whether it is a terminal."""
    return Console(stderr=stderr, highlight=False, soft_wrap=False)


def store_from_env(*, persist: bool = True) -> Store:
    """The store: ``$ELELEM_STORE`` (a URL or path), else the default SQLite
    file under ``$ELELEM_HOME`` or the user data folder; with ``persist``
    False an in-memory store (``--no-store``)."""
    if not persist:
        return open_store("sqlite:///:memory:")
    url = os.environ.get("ELELEM_STORE") or None
    try:
        store = open_store(url)
    except OSError as exc:
        raise StoreError(f"cannot open the conversation store: {describe(exc)}") from None
    if isinstance(store, SQLStore):
        # Nothing secret at rest: a key echoed in any channel is redacted
        # before the event is written.
        store.redactor = secrets_in_force()
    return store


DEFAULT_MODEL_FILE = "default-model.txt"
"""The file in elelem's home ``elelem models default MODEL`` writes."""


def saved_default_model(env: Mapping[str, str] | None = None) -> str | None:
    """The model ``elelem models default MODEL`` saved, or None."""
    path = home_dir(env) / DEFAULT_MODEL_FILE
    try:
        saved = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    return saved or None


def config_model(env: Mapping[str, str]) -> str | None:
    """The config file's ``model``, or None."""
    path = config_path(env)
    data = read_config(path)
    if data is None:
        return None
    model = data.get("model")
    if model is not None and not isinstance(model, str):
        raise ConfigError(f"{path}: 'model' must be a string like anthropic:claude-sonnet-4-5")
    return model


def key_is_set(catalog: Catalog, name: str, env: Mapping[str, str]) -> bool:
    """Whether provider ``name`` has its key (or needs none); for a SigV4
    provider (Bedrock), AWS credentials count as its key."""
    spec = catalog.get(name)
    if not spec.key_required or catalog.key_source(spec, env) is not None:
        return True
    return signing_credentials_set(catalog, name, env)


def signing_credentials_set(catalog: Catalog, name: str, env: Mapping[str, str]) -> bool:
    """Whether provider ``name`` signs with AWS credentials and both halves are set."""
    spec = catalog.get(name)
    return bool(spec.sigv4_service) and all(
        env.get(v, "").strip() for v in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
    )


def default_model(catalog: Catalog, env: Mapping[str, str] | None = None) -> str:
    """The model to use when none is named: ``$ELELEM_MODEL``, else ``model``
    in the config file, else the one ``elelem models default MODEL`` saved,
    else the first provider whose key is set."""
    env = os.environ if env is None else env
    chosen = env.get("ELELEM_MODEL") or config_model(env) or saved_default_model(env)
    if chosen:
        return chosen
    for name, model in DEFAULT_MODELS.items():
        if name in catalog and catalog.get(name).key_required and key_is_set(catalog, name, env):
            return f"{name}:{model}"
    raise ConfigError(
        "no model given and no provider key set: pass -m provider:model "
        "or set a key such as ANTHROPIC_API_KEY (see `elelem providers`)"
    )


def hosted_tools(
    web_search: bool,
    web_fetch: bool,
    code_execution: bool,
    x_search: bool = False,
    skills: tuple[Skill, ...] = (),
) -> tuple[HostedTool, ...]:
    """The neutral hosted tools the flags ask for (a skill asks for code execution)."""
    tools: list[HostedTool] = []
    if web_search:
        tools.append(WebSearch())
    if x_search:
        tools.append(XSearch())
    if web_fetch:
        tools.append(WebFetch())
    if code_execution or skills:
        tools.append(CodeExecution(skills=skills))
    return tuple(tools)


def model_options(fn: Callable[P, R]) -> Callable[P, R]:
    """The options of commands that talk to a model."""
    decorators = [
        click.option(
            "-m",
            "--model",
            metavar="MODEL",
            help="provider:model (anthropic:claude-sonnet-4-5), a provider (its default "
            "model), a known model id (`elelem models`) or an alias (`elelem aliases`); "
            "default: $ELELEM_MODEL, the config file's model, else the first provider "
            "whose key is set.",
        ),
        click.option("-s", "--system", metavar="TEXT", help="A system prompt for this turn."),
        click.option("--web-search", is_flag=True, help="Let the provider search the web."),
        click.option("--x-search", is_flag=True, help="Let xAI search posts on X (Responses)."),
        click.option("--web-fetch", is_flag=True, help="Let the provider fetch web pages."),
        click.option("--code-execution", is_flag=True, help="Let the provider run code."),
        click.option(
            "--skill",
            "skills",
            multiple=True,
            metavar="SKILL",
            help="Load an Agent Skill into the code-execution container (anthropic:pptx for "
            "Anthropic's own, else a Skills API id; @VERSION pins one); implies --code-execution.",
        ),
        click.option("--max-tokens", type=click.IntRange(min=1), help="Cap the answer's length."),
        click.option(
            "-o",
            "--option",
            "option_pairs",
            type=(str, str),
            multiple=True,
            metavar="KEY VALUE",
            help="A generation option: temperature, top-p, max-tokens, seed, stop (repeatable), "
            "tool-choice, reasoning-effort, reasoning-budget, or extra.NAME (a provider body "
            "field; VALUE as JSON).",
        ),
        click.option(
            "--effort",
            type=click.Choice(["minimal", "low", "medium", "high"]),  # options.EFFORTS
            help="How hard the model should reason (each provider's reasoning-effort field).",
        ),
        click.option(
            "--schema",
            metavar="SCHEMA",
            help="Answer as JSON of this schema: 'name, age int, bio: a short bio' "
            "(types str, int, float, bool) or a JSON Schema file; the answer is validated.",
        ),
        click.option(
            "--cache",
            is_flag=False,
            flag_value="on",
            default=None,
            type=click.Choice(["on", "5m", "1h", "24h"]),  # ask.CACHE_TTLS
            metavar="[5m|1h|24h]",
            help="Ask the provider to cache the prompt prefix (for at least this long, if "
            "given); what it cannot honour is left out and noted in the turn's record.",
        ),
        click.option(
            "--context-editing",
            metavar="clear-tool-uses[,clear-thinking]",
            help="Let the provider clear old tool results and/or earlier reasoning from the "
            "prompt it reads (Anthropic); the log keeps everything, and a provider without "
            "it notes the option as left out in the turn's record.",
        ),
        click.option(
            "--json",
            "as_json",
            is_flag=True,
            help="Write the stream as NDJSON events on stdout instead of rendering it.",
        ),
        click.option("--no-store", is_flag=True, help="Keep this conversation in memory only."),
        click.option(
            "--no-stream",
            is_flag=True,
            help="Ask for the whole answer at once (not streamed) and show it when it has "
            "arrived; it is stored as a streamed one is.",
        ),
        click.option(
            "--timeout",
            type=SECONDS,
            metavar="SECONDS",
            help=f"Give up on an answer after this long in all (default {Timeouts.total:g}; "
            "0: never).",
        ),
        click.option(
            "--idle-timeout",
            type=SECONDS,
            metavar="SECONDS",
            help=f"Give up when the provider sends nothing for this long (default "
            f"{Timeouts.idle:g}; 0: never).",
        ),
    ]
    for decorate in reversed(decorators):
        fn = decorate(fn)
    return display_options(fn)


def timeouts_of(params: Mapping[str, Any]) -> Timeouts:
    """The transport timeouts ``--timeout`` and ``--idle-timeout`` ask for."""
    timeouts = Timeouts()
    if params.get("timeout") is not None:
        timeouts = replace(timeouts, total=params["timeout"])
    if params.get("idle_timeout") is not None:
        timeouts = replace(timeouts, idle=params["idle_timeout"])
    return timeouts


def display_options(fn: Callable[P, R]) -> Callable[P, R]:
    """``--reasoning`` and ``--citations``: how an answer is shown."""
    fn = click.option(
        "--citations",
        type=click.Choice(["short", "full"]),
        default="short",
        show_default=True,
        help="Footnotes only, or with the quoted excerpts.",
    )(fn)
    return click.option(
        "--reasoning",
        type=click.Choice(["hidden", "summary", "full"]),
        default="summary",
        show_default=True,
        help="How much of the model's reasoning to show.",
    )(fn)


def continue_option(fn: Callable[P, R]) -> Callable[P, R]:
    """``-c/--continue [ID]``: the latest conversation, or the one named."""
    return click.option(
        "-c",
        "--continue",
        "continue_",
        is_flag=False,
        flag_value="last",
        default=None,
        metavar="[ID]",
        help="Continue a conversation: the latest, or the one with this id (or id prefix).",
    )(fn)


def make_renderer(reasoning: str, citations: str, console: Console | None = None) -> Renderer:
    """A renderer on stdout with the display options of the command line."""
    options = RenderOptions(reasoning=reasoning, citations=citations)  # type: ignore[arg-type]
    return Renderer(console or make_console(), options)


def check_text_params() -> None:
    """Every text option and argument of the running command is valid
    Unicode: an argument's bytes that were not UTF-8 (which Python keeps as
    lone surrogates) are a usage :class:`Failure` naming the option, before
    the command does anything.  Paths are left alone: a file name need not be
    UTF-8."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return
    for param in ctx.command.params:
        if not isinstance(param.type, click.types.StringParamType):
            continue
        value = ctx.params.get(param.name or "")
        if isinstance(value, str):
            values: tuple[str, ...] = (value,)
        elif isinstance(value, tuple):
            values = tuple(
                v for item in value for v in (item if isinstance(item, tuple) else (item,))
            )
        else:
            continue
        if param.nargs == -1:
            values = (" ".join(values),)  # one text, as the command joins it
        name = _param_name(param)
        for text in values:
            if isinstance(text, str):
                utf8_text(text, name)
    for param in ctx.command.params:
        value = ctx.params.get(param.name or "")
        items = value if isinstance(value, tuple) else (value,)
        for item in items:
            for one in item if isinstance(item, tuple) else (item,):
                if isinstance(one, (str, os.PathLike)) and "\x00" in os.fspath(one):
                    # No command line can carry one (argv strings end at
                    # NUL); a caller in-process can, and open() refuses it.
                    raise Failure(f"{_param_name(param)}: a NUL byte in the value", EXIT_USAGE)


def _param_name(param: click.Parameter) -> str:
    return f"the {param.name}" if isinstance(param, click.Argument) else param.opts[-1]


def utf8_text(text: str, what: str) -> str:
    """``text`` if it is valid Unicode text; a usage :class:`Failure` naming
    ``what`` if it holds lone surrogates (bytes of an argument that were not
    UTF-8, which Python keeps as such)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise Failure(
            f"{what} is not valid UTF-8 text (at character {exc.start + 1})", EXIT_USAGE
        ) from None
    return text


INPUT_LIMIT = 256 * 1024 * 1024
"""The most bytes a file of lines (``embed -i``, ``batch submit``) may
hold: above the largest batch file a provider takes (Anthropic 256 MB)."""


def input_lines(source: str, limit: int) -> Iterator[tuple[int, str]]:
    """``(number, text)`` of each line of the file ``source`` (``-``: stdin),
    read bounded: a FIFO, a device or a directory is refused before any byte
    is read, a file past ``limit`` (a command's ``--max-bytes``) by its
    size, a stream once it passes it.
    A usage :class:`Failure` names the input and why (bytes that are not
    UTF-8 text name their line: they are never guessed at)."""
    name = "stdin" if source == "-" else source
    try:
        data = read_stream(sys.stdin.buffer, limit) if source == "-" else read_file(source, limit)
    except ReadRefused as exc:
        told = " (--max-bytes)" if str(exc) == too_large(limit) else ""
        raise Failure(f"{name}: {exc}{told}", EXIT_USAGE) from None
    except OSError as exc:
        raise Failure(f"{name}: {exc.strerror or exc}", EXIT_USAGE) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = data.rfind(b"\n", 0, exc.start) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        raise Failure(
            f"{name} line {line} is not UTF-8 text"
            f" (byte 0x{data[exc.start]:02x} at offset {exc.start - start})",
            EXIT_USAGE,
        ) from None
    for number, piece in enumerate(text.split("\n"), start=1):
        yield number, piece.rstrip("\r")


def jsonl_row(text: str, number: int) -> JSONValue:
    """Line ``number`` of a JSONL input, decoded; a usage :class:`Failure`
    when it is not JSON, is nested past what can be decoded, or holds a
    lone surrogate."""
    try:
        value: JSONValue = json.loads(text)
        # A \ud800 escape decodes to a lone surrogate: not text, so nothing
        # can store or send it.
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except json.JSONDecodeError as exc:
        raise Failure(f"line {number} is not JSON: {exc.msg}", EXIT_USAGE) from None
    except RecursionError:
        raise Failure(f"line {number} is {TOO_DEEP}", EXIT_USAGE) from None
    except UnicodeEncodeError as exc:
        unit = exc.object[exc.start]
        raise Failure(
            f"line {number} holds a lone surrogate (U+{ord(unit):04X}), which is not text",
            EXIT_USAGE,
        ) from None
    return value


def stdin_text(limit: int) -> str | None:
    """The prompt piped on stdin (at most ``limit`` bytes of UTF-8 text, a
    usage :class:`Failure` otherwise), or None when stdin is a terminal."""
    if sys.stdin is None or sys.stdin.isatty():
        return None
    try:
        data = read_stream(sys.stdin.buffer, limit)
    except ReadRefused as exc:
        raise Failure(f"stdin: {exc}", EXIT_USAGE) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Failure(f"stdin is not UTF-8 text (byte {exc.start})", EXIT_USAGE) from None


__all__ = [
    "DEFAULT_MODELS",
    "DEFAULT_MODEL_FILE",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_PROVIDER",
    "EXIT_STATUSES",
    "EXIT_STORE",
    "EXIT_USAGE",
    "INPUT_LIMIT",
    "SECONDS",
    "TOOL_THREAD",
    "Failure",
    "Finite",
    "UnsupportedError",
    "config_model",
    "continue_option",
    "debug_enabled",
    "debug_option",
    "default_model",
    "describe",
    "display_options",
    "exit_status",
    "guarded",
    "hosted_tools",
    "input_lines",
    "jsonl_row",
    "key_is_set",
    "leave",
    "make_console",
    "make_renderer",
    "max_bytes_option",
    "model_options",
    "saved_default_model",
    "signing_credentials_set",
    "stdin_text",
    "store_from_env",
    "timeouts_of",
    "tools_running",
    "utf8_text",
]
