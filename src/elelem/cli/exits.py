"""How a command ends: the documented exit statuses, the one CLI error
(:class:`Failure`, one ``elelem: …`` line), :func:`guarded`, which turns
elelem's typed errors into that line and a status (``--debug`` lets the
traceback through), the check that every text argument is UTF-8, and
:func:`leave`, which ends a process a tool thread still holds."""

from __future__ import annotations

import functools
import os
import sys
import threading
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import click

from elelem.cli.safety import scrub_error
from elelem.conversation import ConversationNotFound, StoreError
from elelem.errors import (
    EXTRA_MODULES,
    BlobError,
    ElelemError,
    StreamError,
    error_line,
    install_line,
)
from elelem.render import sanitize_line

EXIT_OK = 0


EXIT_PROVIDER = 1


EXIT_USAGE = 2


EXIT_STORE = 3


EXIT_LIMIT = 4
"""A usage limit (``--max-requests``, ``--max-output-tokens``, …) ended the
turn; what it did until then is kept."""


EXIT_INTERNAL = 70


EXIT_INTERRUPTED = 130


EXIT_STATUSES = (
    "Exit statuses: 0 success; 1 the provider or the stream failed (the reply so far is kept); "
    "2 bad usage or configuration (unknown provider or model, missing API key, unknown "
    "conversation, unreadable file); 3 the conversation store failed (cannot open, import "
    "refused); 4 a usage limit (--max-requests, --max-output-tokens, ...) ended the turn "
    "(what it did is kept); 70 an internal error (a bug: please report it with --debug output); "
    "130 interrupted (Ctrl-C; the reply so far is kept)."
)


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
