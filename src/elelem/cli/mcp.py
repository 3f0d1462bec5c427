"""``elelem mcp``: look at an MCP server without a model.

``elelem mcp tools SERVER`` connects to a server (a command line or an
``http(s)://`` URL, as ``--mcp`` takes it), says which revision it speaks
and lists its tools (and those not offered, with the reason); each
``--call NAME JSON`` then calls one tool with those arguments and prints the
result.  A server that asks for input is answered as ``--elicit`` says:
``decline`` (the default: nobody is asked), ``defaults`` (accept every form
with its fields' defaults) — the command is also the MCP conformance
suite's client under test.  Everything the server sent is shown sanitized.
It fails (status 1) when the server cannot be reached or stops, and (2)
when a ``--call`` names no tool the server offers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, TypeVar

import click

from elelem.cli.exits import EXIT_PROVIDER, EXIT_USAGE, Failure, guarded
from elelem.errors import MCPServerError
from elelem.render.sanitize import sanitize, sanitize_line
from elelem.tools.base import ToolOutcome

ELICIT_CHOICES = ("decline", "defaults")

P = ParamSpec("P")
R = TypeVar("R")


@click.group("mcp")
def mcp_group() -> None:
    """Look at MCP servers: their tools, and a call of one."""


def client_options(fn: Callable[P, R]) -> Callable[P, R]:
    """``--client-id`` and ``--client-secret``: a client the authorization
    server registered beforehand (the secret is best given in the
    environment, ``ELELEM_MCP_CLIENT_SECRET``); ``--client-metadata-url``:
    a client ID metadata document you publish."""
    fn = click.option(
        "--client-metadata-url",
        metavar="HTTPS-URL",
        help="Sign in as the client your client ID metadata document at this URL describes "
        "(where the authorization server takes one).",
    )(fn)
    fn = click.option(
        "--client-secret",
        envvar="ELELEM_MCP_CLIENT_SECRET",
        help="Its secret (or ELELEM_MCP_CLIENT_SECRET).",
    )(fn)
    return click.option("--client-id", help="Sign in as this client, registered beforehand.")(fn)


@mcp_group.command("tools")
@click.argument("server")
@click.option(
    "--call",
    "calls",
    nargs=2,
    multiple=True,
    metavar="NAME JSON",
    help="Call tool NAME with the JSON object of arguments (repeatable).",
)
@click.option(
    "--elicit",
    type=click.Choice(ELICIT_CHOICES),
    default="decline",
    show_default=True,
    help="How a server's request for input is answered.",
)
@click.option(
    "--protocol",
    default="auto",
    show_default=True,
    help="auto (the newest both sides speak), legacy (the initialize handshake), "
    "or a 2026 revision.",
)
@click.option(
    "--startup-timeout",
    type=float,
    default=30.0,
    show_default=True,
    help="Seconds the server has for each start-up step.",
)
@click.option(
    "--login",
    is_flag=True,
    help="Sign in (OAuth, in the browser) when the server asks for it.",
)
@client_options
@guarded
def tools_command(
    server: str,
    calls: tuple[tuple[str, str], ...],
    elicit: str,
    protocol: str,
    startup_timeout: float,
    login: bool,
    client_id: str | None,
    client_secret: str | None,
    client_metadata_url: str | None,
) -> None:
    """List the tools of SERVER, then make each --call."""
    from elelem.tools.mcp import MCPServer
    from elelem.tools.mcp_asks import accept_defaults, decline

    if not (math.isfinite(startup_timeout) and startup_timeout > 0):
        raise Failure(f"--startup-timeout takes seconds above 0, not {startup_timeout}", EXIT_USAGE)
    options: dict[str, Any] = {}
    if login and server.startswith(("http://", "https://")):
        options["auth"] = _oauth(server, client_id, client_secret, client_metadata_url)
    try:
        connection = MCPServer.parse(
            server,
            elicit=accept_defaults if elicit == "defaults" else decline,
            protocol=protocol,
            startup_timeout=startup_timeout,
            **options,
        )
    except ValueError as exc:
        raise Failure(f"{server!r}: {exc}", EXIT_USAGE) from exc
    try:
        with connection:
            _describe(connection)
            unmade = [name for name, arguments in calls if not _call(connection, name, arguments)]
    except MCPServerError as exc:
        raise Failure(str(exc), EXIT_PROVIDER) from None
    if connection.failure is not None:
        raise Failure(connection.failure, EXIT_PROVIDER)
    if unmade:
        raise Failure(f"{len(unmade)} call(s) not made: {', '.join(unmade)}", EXIT_USAGE)


@mcp_group.command("login")
@click.argument("url")
@client_options
@guarded
def login_command(
    url: str, client_id: str | None, client_secret: str | None, client_metadata_url: str | None
) -> None:
    """Sign in to the MCP server at URL (OAuth, in the browser; the code
    comes back to 127.0.0.1) and keep the login for --mcp URL."""
    from elelem.tools.mcp import MCPServer
    from elelem.tools.mcp_auth import has_login

    if not url.startswith(("http://", "https://")):
        raise Failure(f"{url!r}: a login is for an http(s) URL", EXIT_USAGE)
    auth = _oauth(url, client_id, client_secret, client_metadata_url)
    try:
        with MCPServer.parse(url, auth=auth) as connection:
            count = len(connection.tools)
    except MCPServerError as exc:
        raise Failure(str(exc), EXIT_PROVIDER) from None
    if not has_login(url):
        click.echo(f"{sanitize_line(url)} asked for no sign-in ({count} tools)")
        return
    click.echo(f"signed in to {sanitize_line(url)} ({count} tools)")


@mcp_group.command("logout")
@click.argument("target", metavar="ISSUER|URL")
@guarded
def logout_command(target: str) -> None:
    """Forget the logins kept for an authorization server (ISSUER, as
    `elelem mcp list` shows it: every server signed in through it, and its
    client registration) or for the one MCP server at URL."""
    from elelem.tools.mcp_auth import logout

    gone = logout(target)
    if not gone:
        raise Failure(f"no login kept for {target} (elelem mcp list shows them)", EXIT_USAGE)
    for url in gone:
        click.echo(f"signed out of {sanitize_line(url)}")


@mcp_group.command("list")
@guarded
def list_command() -> None:
    """The MCP servers with a kept login, under the authorization server
    (issuer) each signed in through."""
    from elelem.tools.mcp_auth import logins

    for issuer, urls in logins().items():
        click.echo(sanitize_line(issuer) if issuer else "(issuer not known yet)")
        for url in urls:
            click.echo(f"  {sanitize_line(url)}")


def _oauth(
    url: str, client_id: str | None, client_secret: str | None, client_metadata_url: str | None
) -> Any:
    """The OAuth provider for ``url``; a client option the SDK refuses (an
    empty client id, a metadata URL that is not https) is a usage failure."""
    from elelem.tools.mcp_auth import oauth

    try:
        return oauth(
            url,
            interactive=True,
            client_id=client_id,
            client_secret=client_secret,
            client_metadata_url=client_metadata_url,
        )
    except ValueError as exc:  # pydantic's ValidationError is one
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise Failure(f"{url!r}: the client options: {sanitize_line(first)}", EXIT_USAGE) from None


def _describe(server: Any) -> None:
    click.echo(f"{sanitize_line(server.name)} speaks MCP {server.protocol_version}")
    for tool in server.tools:
        summary = (tool.spec.description or "").strip().splitlines()[:1]
        click.echo(f"  {sanitize_line(tool.name)}  {sanitize_line(' '.join(summary))}".rstrip())
    for name, why in server.skipped.items():
        click.echo(f"  ({sanitize_line(name)} not offered: {sanitize_line(why)})")


def _call(server: Any, name: str, arguments: str) -> bool:
    """Make one call and print its result (an error result is the tool's
    answer, shown as such); False when there is no such tool."""
    import anyio

    tool = next((t for t in server.tools if t.name == name), None)
    if tool is None:
        click.echo(f"{sanitize_line(name)}: no such tool on this server", err=True)
        return False
    outcome = anyio.run(tool.call, arguments)
    mark = "error" if outcome.is_error else "result"
    click.echo(f"{sanitize_line(name)} {mark}: {sanitize(outcome.content)}")
    for image in outcome.attachments:
        click.echo(f"  [image {image.media_type}]")
    return True


def prompt_of(servers: Sequence[Any], spec: str) -> ToolOutcome:
    """The prompt ``--mcp-prompt 'SERVER:NAME KEY=VALUE …'`` names, from one
    of the connected ``servers`` (SERVER: the name it gives itself, its
    label, or its place among the ``--mcp`` options, from 1)."""
    import shlex

    usage = "--mcp-prompt takes 'SERVER:NAME [KEY=VALUE]...'"
    try:
        words = shlex.split(spec)
    except ValueError as exc:  # an unclosed quote
        raise Failure(f"{usage}, not {spec!r}: {exc}", EXIT_USAGE) from None
    if not words or ":" not in words[0]:
        raise Failure(f"{usage}, not {spec!r}", EXIT_USAGE)
    where, _, name = words[0].rpartition(":")
    arguments: dict[str, str] = {}
    for word in words[1:]:
        key, given, value = word.partition("=")
        if not given:
            raise Failure(f"{usage}: {word!r} is not KEY=VALUE", EXIT_USAGE)
        arguments[key] = value
    found = [
        s for place, s in enumerate(servers, 1) if where in (s.name, s.server_name, str(place))
    ]
    if not found:
        known = ", ".join(repr(s.server_name or s.name) for s in servers) or "none (give --mcp)"
        raise Failure(f"--mcp-prompt: no MCP server {where!r} (servers: {known})", EXIT_USAGE)
    try:
        outcome: ToolOutcome = found[0].prompt_sync(name, arguments)
    except MCPServerError as exc:
        raise Failure(str(exc), EXIT_PROVIDER) from None
    return outcome


__all__ = ["mcp_group", "prompt_of"]
