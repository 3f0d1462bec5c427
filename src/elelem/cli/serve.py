"""``elelem serve``: the local web viewer of stored conversations, and chat.

It binds ``--host`` (127.0.0.1 by default) and ``--port`` (0: any free port),
prints the URL to open — carrying the access token (kept 0600 in elelem's
home, so the URL stays the same across restarts; ``--token`` gives another)
that every link of the app keeps; a request without it is refused — and
serves until Ctrl-C.
"""

from __future__ import annotations

import re
import socket
import threading
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from elelem.cli.default_model import default_model
from elelem.cli.exits import EXIT_USAGE, Failure, debug_option, guarded
from elelem.cli.flags import limit_options, limits_of
from elelem.cli.safety import secrets_in_force
from elelem.cli.store import store_from_env
from elelem.cli.testmodel import TEST_ADDRESS, TEST_MODEL_NAMES, is_test_model, test_model
from elelem.cli.tools import (
    Toolset,
    functions_option,
    mcp_option,
    mcp_sampling_option,
    run_scope,
)
from elelem.errors import ConfigError
from elelem.home import PRIVATE_FILE, create_private, home_dir, private_parent


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (a clear error when it cannot be had)."""
    if not host.strip():
        # The socket API reads "" as every interface: never by accident.
        raise ConfigError("--host is empty: give an address (0.0.0.0 for every interface)")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(64)
    return sock


TOKEN_FILE = "serve-token"
"""The file in elelem's home keeping ``elelem serve``'s access token (0600)."""

TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{16,128}")
"""What an access token may be: URL-safe as it is, and not guessable short."""


def serve_token(given: str | None, new: Callable[[], str]) -> str:
    """The access token: ``given`` (``--token``), else the one kept in
    elelem's home (made with ``new`` the first time, and whenever the file
    holds no token), so a URL printed before a restart still opens."""
    if given is not None:
        if not TOKEN_SHAPE.fullmatch(given):
            raise Failure("--token: give 16 to 128 of A-Z, a-z, 0-9, _ and -", EXIT_USAGE)
        return given
    path = home_dir() / TOKEN_FILE
    try:
        kept = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        kept = ""
    if TOKEN_SHAPE.fullmatch(kept):
        if path.stat().st_mode & 0o077:
            path.chmod(PRIVATE_FILE)  # a file loosened by hand holds a secret
        return kept
    token = new()
    private_parent(path)
    create_private(path)
    path.write_text(token + "\n", encoding="utf-8")
    return token


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8377,
    show_default=True,
    help="Port to listen on (0: any free port).",
)
@click.option("-m", "--model", help="The chat form's default model (provider:model).")
@click.option(
    "--token",
    "given_token",
    metavar="TOKEN",
    help="The access token the URL carries (default: one kept in elelem's home, so the "
    "URL stays the same from one start to the next).",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the URL in the browser.")
@click.option(
    "--temporal",
    metavar="HOST:PORT",
    default=None,
    help="The runs are durable on this Temporal server: Approve and Deny are sent to them.",
)
@functions_option
@mcp_option
@mcp_sampling_option
@limit_options
@debug_option
@guarded
def serve_command(
    host: str,
    port: int,
    model: str | None,
    given_token: str | None,
    open_browser: bool,
    temporal: str | None,
    function_files: tuple[Path, ...],
    mcp_specs: tuple[str, ...],
    mcp_sampling_model: str | None,
    **limit_params: Any,
) -> None:
    """Browse stored conversations (citations, hosted activity, reasoning) and
    chat with a configured provider, in the browser.  With --functions
    (or --mcp) the chat's model may call those tools (those servers'), each
    call run once the page's Approve is clicked (Deny refuses it), as for a
    run stopped by `ask --defer` or the library's approve="defer".  The
    --max-* options bound each chat run (a turn, or a resumed run) as they
    bound a turn of `chat`: a limit reached ends that run's answer with the
    limit's error."""
    limits = limits_of(limit_params)
    # Loaded first: a bad file is refused before the port is taken.
    toolset = Toolset.from_params(
        {
            "function_files": function_files,
            "mcp_specs": mcp_specs,
            "mcp_sampling_model": mcp_sampling_model,
        }
    )
    # The page cannot ask (its form is not built): a server's request for
    # input is declined, the reason kept with the request in the conversation.
    toolset.elicitor.interactive = False
    toolset.elicitor.declining = "elelem serve asks nobody (the page has no form for it)"
    # The servers connect before the port is taken, and stay until Ctrl-C.
    with toolset:
        import uvicorn

        from elelem.cli.worker import temporal_delivery
        from elelem.providers import load_catalog
        from elelem.providers.models import known_models
        from elelem.web.app import create_app, new_token
        from elelem.web.serving import is_loopback, server_config

        tools = toolset.loop(None).tools.values()
        sock = bind(host, port)
        try:
            catalog = load_catalog()
            if model is None:
                try:
                    model = default_model(catalog)
                except ConfigError:
                    model = None  # browsing needs no key; the chat form names one
            elif is_test_model(model):
                model = TEST_ADDRESS
            else:
                # An unknown provider or a malformed address is refused now, not
                # at the first chat message (browsing needs no key: none is checked).
                spec, name = catalog.resolve(model)
                model = f"{spec.name}:{name}"
            store = store_from_env()
        except BaseException:
            sock.close()
            raise
        try:
            token = serve_token(given_token, new_token)
        except BaseException:
            sock.close()
            raise
        bound_host, bound_port = sock.getsockname()[:2]
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        address = f"http://{shown}:{bound_port}/?token={token}"
        click.echo(f"elelem serve: open {address}")
        click.echo("(the token is needed by every request; Ctrl-C stops)")
        if open_browser:
            # Once the server listens (the socket is bound: a request waits for it).
            threading.Thread(target=webbrowser.open, args=(address,), daemon=True).start()
        catalog = load_catalog()
        models = [TEST_ADDRESS, *(f"{p}:{m}" for p, m in known_models() if p in catalog)]
        if not is_loopback(bound_host):
            click.echo(
                f"elelem serve: warning: listening on {shown}, which other machines can reach; "
                "whoever has the URL can read your conversations and chat with your keys",
                err=True,
            )
        app = create_app(
            store,
            token=token,
            model=model,
            redactor=secrets_in_force(),
            models=models,
            port=bound_port,
            tools=list(tools),
            in_process={name: test_model() for name in TEST_MODEL_NAMES},
            deliver=None if temporal is None else temporal_delivery(temporal),
            run_scope=run_scope(toolset, limits),
            limits=limits,
        )
        config = server_config(app)
        try:
            uvicorn.Server(config).run(sockets=[sock])
        finally:
            sock.close()
            store.close()


__all__ = ["TOKEN_FILE", "bind", "serve_command", "serve_token"]
