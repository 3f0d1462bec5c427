"""An MCP server's requests for the user's input, asked in the terminal
during ``elelem ask`` and ``chat`` (MCP 2025-11-25, "Elicitation").

A form (``mode: form``) is offered first (``fill in its form? [y/N]``:
Enter or ``n`` declines), then asked field by field, each as its JSON
schema says: text, a number or whole number (within its bounds), yes/no,
one of a list (``enum`` or ``oneOf``), several of a list (an ``array`` of
them, comma-separated); Enter keeps a field's default, or leaves an
optional field out; a field whose answer does not fit is asked again.  A
URL (``mode: url``) is shown, sanitized, with its site, and opened in the
browser only when the user says so; a URL that is not plainly an http(s)
link (control characters, another scheme, a host a browser reads
otherwise) is never opened, and the request is declined.  Ctrl-C at any
question cancels the request (``cancel``: dismissed), and the turn goes
on; end of input cancels too.  Everything the server wrote is shown
sanitized; a choice is typed as shown and sent as the server spelled it.

The questions are read on the turn's event loop in the main thread, as
:func:`elelem.cli.tools.confirm` reads an approval: the MCP connection's
own loop (a background thread) hands each request over.  Without a
terminal on stdin, every request is declined (a non-interactive run).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

import click

from elelem.cli.asking import YES, confirm, read_line
from elelem.cli.terminal import echoing_terminal
from elelem.errors import ElelemError
from elelem.render import sanitize_line
from elelem.render.sanitize import safe_url
from elelem.tools.mcp_asks import ElicitAnswer, Elicitation
from elelem.vocabulary import JSONValue


class FieldError(ElelemError):
    """An answer that does not fit its field (the field is asked again)."""


class TerminalElicitor:
    """The ``elicit`` callback of the CLI's MCP servers (see the module
    docs).  :meth:`asking_on` binds it to the running turn's loop; outside a
    turn, or without a terminal, it declines."""

    def __init__(
        self, interactive: bool, declining: str = "no terminal on stdin to ask on"
    ) -> None:
        self.interactive = interactive
        self.declining = declining
        """Why a request is declined when the user cannot be asked (recorded)."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._before: Callable[[], None] = _nothing
        self._lock: asyncio.Lock | None = None

    @contextlib.contextmanager
    def asking_on(
        self,
        loop: asyncio.AbstractEventLoop,
        lock: asyncio.Lock,
        before: Callable[[], None] = lambda: None,
    ) -> Iterator[None]:
        """Ask on ``loop`` (the turn's) while the block runs, one question
        at a time with the approvals (``lock``), calling ``before`` before
        each (the renderer pauses its live region)."""
        self._loop, self._lock, self._before = loop, lock, before
        try:
            yield
        finally:
            self._loop, self._lock, self._before = None, None, _nothing

    async def __call__(self, request: Elicitation) -> ElicitAnswer:
        loop = self._loop
        if not self.interactive:
            return ElicitAnswer("decline", reason=self.declining)
        if loop is None:
            return ElicitAnswer("decline", reason="asked while no turn was running")
        if asyncio.get_running_loop() is loop:
            return await self._ask(request)
        # The connection's loop waits while the turn's loop asks.
        asked = asyncio.run_coroutine_threadsafe(self._ask(request), loop)
        return await asyncio.wrap_future(asked)

    async def _ask(self, request: Elicitation) -> ElicitAnswer:
        assert self._lock is not None
        async with self._lock:
            self._before()
            with echoing_terminal(), _ctrl_c_cancels() as cancelled:
                asking = asyncio.ensure_future(ask_elicitation(request))
                either: set[asyncio.Future[Any]] = {asking, cancelled}
                try:
                    await asyncio.wait(either, return_when="FIRST_COMPLETED")
                finally:
                    # Ctrl-C, or the call given up: the question's reader of
                    # stdin is removed before anything else reads it.
                    if not asking.done():
                        asking.cancel()
                        await asyncio.wait({asking})
                if not asking.cancelled():
                    return asking.result()
                click.echo("", err=True)
                click.echo("cancelled", err=True)
                return ElicitAnswer("cancel")


def _nothing() -> None:
    """No renderer to pause."""


@contextlib.contextmanager
def _ctrl_c_cancels() -> Iterator[asyncio.Future[None]]:
    """A future set by Ctrl-C while the block runs (in the main thread; in
    another, a future never set), with the SIGINT handler put back after:
    Ctrl-C at a server's question dismisses the question, not the turn."""
    loop = asyncio.get_running_loop()
    pressed: asyncio.Future[None] = loop.create_future()
    if threading.current_thread() is not threading.main_thread():
        yield pressed
        return
    previous = signal.getsignal(signal.SIGINT)

    def press() -> None:
        if not pressed.done():
            pressed.set_result(None)

    loop.add_signal_handler(signal.SIGINT, press)
    try:
        yield pressed
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        signal.signal(signal.SIGINT, previous)


async def ask_elicitation(request: Elicitation) -> ElicitAnswer:
    """Ask the user one :class:`Elicitation` on the terminal (stderr for the
    questions, stdin for the answers); end of input cancels."""
    server = sanitize_line(request.server)
    if request.mode == "url":
        return await _ask_url(server, request)
    click.echo(f"MCP server {server} asks: {sanitize_line(request.message)}", err=True)
    fields = request.schema.get("properties")
    fields = fields if isinstance(fields, dict) else {}
    required = request.schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    count = f"{len(fields)} field{'s' if len(fields) != 1 else ''}"
    if not await confirm(f"fill in its form ({count})?", verdicts=("", "declined")):
        return ElicitAnswer("decline")
    content: dict[str, JSONValue] = {}
    for name, spec in fields.items():
        value = await _ask_field(str(name), spec if isinstance(spec, dict) else {}, name in needed)
        if value is _CANCEL:
            return ElicitAnswer("cancel")
        if value is not _LEFT_OUT:
            content[str(name)] = value
    click.echo(f"sent to {server}", err=True)
    return ElicitAnswer("accept", content)


async def _ask_url(server: str, request: Elicitation) -> ElicitAnswer:
    url = request.url or ""
    shown = sanitize_line(url)
    click.echo(
        f"MCP server {server} asks you to open a URL: {sanitize_line(request.message)}", err=True
    )
    safe = safe_url(url)
    if safe is None or safe != url:
        click.echo(f"  {shown}", err=True)
        click.echo("not a plain http(s) link: elelem does not open it (declined)", err=True)
        return ElicitAnswer("decline")
    click.echo(f"  {shown}  (site: {urlsplit(url).hostname})", err=True)
    if not await confirm("open it in the browser?", verdicts=("opening", "declined")):
        return ElicitAnswer("decline")
    import webbrowser  # deferred: it imports subprocess and shlex, for a rare URL ask

    webbrowser.open(url)
    return ElicitAnswer("accept")


_CANCEL = object()
_LEFT_OUT = object()


async def _ask_field(name: str, spec: Mapping[str, Any], required: bool) -> object:
    """One field's value (:data:`_LEFT_OUT` for an optional field left
    empty, :data:`_CANCEL` at end of input)."""
    label = sanitize_line(str(spec.get("title") or name))
    hint = field_hint(spec)
    about = sanitize_line(str(spec.get("description", "")))
    parts = [p for p in (hint, about) if p]
    default = spec.get("default")
    tail = f" [{_shown(default)}]" if "default" in spec else (" (required)" if required else "")
    question = f"  {label}{' (' + '; '.join(parts) + ')' if parts else ''}{tail}: "
    while True:
        click.echo(question, nl=False, err=True)
        line = await read_line(sys.stdin.fileno())
        if line is None:
            click.echo("", err=True)
            return _CANCEL
        text = line.strip()
        if not text:
            if "default" in spec:
                return default
            if not required:
                return _LEFT_OUT
            click.echo("  Error: this field is required", err=True)
            continue
        try:
            return field_value(spec, text)
        except FieldError as exc:
            click.echo(f"  Error: {exc}", err=True)


def _choices(spec: Mapping[str, Any]) -> list[tuple[str, JSONValue, str]] | None:
    """(typed as, sent as, title) of a single-select field, else None."""
    if isinstance(spec.get("enum"), list):
        names = spec.get("enumNames")
        titles = names if isinstance(names, list) else []
        return [
            (sanitize_line(str(v)), v, sanitize_line(str(titles[i])) if i < len(titles) else "")
            for i, v in enumerate(spec["enum"])
        ]
    for key in ("oneOf", "anyOf"):
        options = spec.get(key)
        if isinstance(options, list) and all(isinstance(o, dict) and "const" in o for o in options):
            return [
                (sanitize_line(str(o["const"])), o["const"], sanitize_line(str(o.get("title", ""))))
                for o in options
            ]
    return None


def _listed(choices: list[tuple[str, JSONValue, str]]) -> str:
    return ", ".join(f"{typed} ({title})" if title else typed for typed, _, title in choices)


def field_hint(spec: Mapping[str, Any]) -> str:
    """What a field takes, in words (``whole number 1..12``, ``yes/no``, …)."""
    kind = spec.get("type")
    if kind == "array" and isinstance(spec.get("items"), dict):
        items = _choices(spec["items"])
        if items is not None:
            return f"any of: {_listed(items)}; comma-separated"
    choices = _choices(spec)
    if choices is not None:
        return f"one of: {_listed(choices)}"
    if kind in ("number", "integer"):
        word = "whole number" if kind == "integer" else "number"
        low, high = spec.get("minimum"), spec.get("maximum")
        if low is not None or high is not None:
            word += f" {'' if low is None else low}..{'' if high is None else high}"
        return word
    if kind == "boolean":
        return "yes/no"
    return ""


def field_value(spec: Mapping[str, Any], text: str) -> JSONValue:
    """The value typed for a field, as its schema types it; :class:`FieldError`
    naming what does not fit."""
    kind = spec.get("type")
    if kind == "array" and isinstance(spec.get("items"), dict):
        items = _choices(spec["items"])
        if items is not None:
            return [_chosen(items, word.strip()) for word in text.split(",") if word.strip()]
    choices = _choices(spec)
    if choices is not None:
        return _chosen(choices, text)
    if kind == "boolean":
        if text.lower() in YES or text.lower() == "true":
            return True
        if text.lower() in ("n", "no", "false"):
            return False
        raise FieldError("answer yes or no")
    if kind in ("number", "integer"):
        return _number(spec, text, whole=kind == "integer")
    low, high = spec.get("minLength"), spec.get("maxLength")
    if isinstance(low, int) and len(text) < low:
        raise FieldError(f"at least {low} characters")
    if isinstance(high, int) and len(text) > high:
        raise FieldError(f"at most {high} characters")
    return text


def _chosen(choices: list[tuple[str, JSONValue, str]], typed: str) -> JSONValue:
    for shown, value, _ in choices:
        if typed == shown:
            return value
    raise FieldError(f"one of: {', '.join(shown for shown, _, _ in choices)}")


def _number(spec: Mapping[str, Any], text: str, *, whole: bool) -> int | float:
    try:
        value: int | float = int(text)
    except ValueError:
        if whole:
            raise FieldError("a whole number") from None
        try:
            value = float(text)
        except ValueError:
            raise FieldError("a number") from None
    if not math.isfinite(value):
        raise FieldError("a finite number")
    low, high = spec.get("minimum"), spec.get("maximum")
    if isinstance(low, (int, float)) and value < low:
        raise FieldError(f"at least {low}")
    if isinstance(high, (int, float)) and value > high:
        raise FieldError(f"at most {high}")
    return value


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return sanitize_line(str(value))


__all__ = ["FieldError", "TerminalElicitor", "ask_elicitation", "field_hint", "field_value"]
