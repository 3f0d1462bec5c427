"""``elelem keys``: save provider API keys in a file only you can read."""

from __future__ import annotations

import os
import sys

import click

from elelem.cli.default_model import credential_status
from elelem.cli.exits import EXIT_USAGE, Failure, debug_option, guarded
from elelem.providers import load_catalog
from elelem.providers.keys import keys_path, load_keys, remove_key, save_key
from elelem.render import sanitize_line


@click.group("keys")
def keys_group() -> None:
    """Saved API keys (the provider's environment variable still wins)."""


@keys_group.command("set")
@click.argument("provider")
@click.option("--value", hidden=True, help="The key (prefer the prompt or stdin: argv is visible).")
@debug_option
@guarded
def keys_set(provider: str, value: str | None) -> None:
    """Save the key of PROVIDER: typed at a prompt without echo, or read from stdin."""
    load_catalog().get(provider)  # an unknown provider is an error naming the known ones
    if value is None:
        if sys.stdin is not None and sys.stdin.isatty():
            value = click.prompt(f"{provider} key", hide_input=True, err=True)
        else:
            value = sys.stdin.read() if sys.stdin is not None else ""
    path = save_key(provider, value)
    click.echo(f"saved the {provider} key in {sanitize_line(str(path))}", err=True)


@keys_group.command("list")
@debug_option
@guarded
def keys_list() -> None:
    """Which providers have a key and where it comes from (never the values)."""
    env = os.environ
    catalog = load_catalog(env=env)
    saved = load_keys(keys_path(env))
    for name in catalog.names():
        # The one answer `providers` reads too; the wording is this list's.
        status = credential_status(catalog, name, env)
        if status.kind == "key" and status.source == "keys file":
            where = f"set (keys file {sanitize_line(str(keys_path(env)))})"
        elif status.kind == "key":
            where = f"set ({status.source})" + (
                "; a saved key is overridden" if name in saved else ""
            )
        elif status.kind == "cloud":
            where = "not set: the cloud's credentials are used (see `elelem providers`)"
        elif status.kind == "signing":
            where = f"not set: AWS credentials are used ({status.source})"
        elif status.kind == "none needed":
            where = "no key needed"
        else:
            where = "not set"
        sys.stdout.write(f"{name}  {where}\n")
    unknown = sorted(set(saved) - set(catalog.names()))
    for name in unknown:
        sys.stdout.write(sanitize_line(f"{name}  saved, but no such provider") + "\n")


@keys_group.command("path")
@debug_option
@guarded
def keys_path_command() -> None:
    """Print where saved keys live."""
    sys.stdout.write(sanitize_line(str(keys_path())) + "\n")


@keys_group.command("remove")
@click.argument("provider")
@debug_option
@guarded
def keys_remove(provider: str) -> None:
    """Forget the saved key of PROVIDER."""
    if not remove_key(provider):
        raise Failure(f"no key saved for {provider}", EXIT_USAGE)
    click.echo(f"removed the {provider} key", err=True)


__all__ = ["keys_group"]
