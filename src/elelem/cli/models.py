"""``elelem models`` (what each provider serves) and ``elelem aliases``."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import click
import httpx2

from elelem.cli.default_model import (
    DEFAULT_MODEL_FILE,
    config_model,
    default_model,
    saved_default_model,
)
from elelem.cli.exits import debug_option, guarded
from elelem.cli.json_out import ndjson_line
from elelem.cli.testmodel import TEST_ADDRESS, is_test_model
from elelem.home import create_private, home_dir, private_parent
from elelem.providers import Catalog, load_catalog
from elelem.providers.capabilities import as_record, model_info, with_remote
from elelem.providers.config import config_path
from elelem.providers.listing import RemoteModel, list_remote_models
from elelem.providers.models import DEFAULT_MODELS, aliases_in_force, known_models
from elelem.render import sanitize_line


def _aliases_of(catalog: Catalog) -> dict[str, list[str]]:
    """Target address -> the aliases that name it."""
    found: dict[str, list[str]] = {}
    for alias, target in aliases_in_force(catalog.aliases).items():
        found.setdefault(target, []).append(alias)
    return found


async def _remote(catalog: Catalog, provider: str) -> list[RemoteModel]:
    spec = catalog.get(provider)
    endpoint = catalog.endpoint(spec, os.environ)
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(30.0)) as http:
        return await list_remote_models(spec.shape, endpoint, http)


def _default(model: str | None) -> None:
    """``elelem models default [MODEL]``: say the model used when none is
    named (and where that comes from), or save MODEL as it."""
    catalog = load_catalog()
    if model is None:
        for where, value in (
            ("$ELELEM_MODEL", os.environ.get("ELELEM_MODEL")),
            (f"the config file {config_path()}", config_model(os.environ)),
            (str(home_dir() / DEFAULT_MODEL_FILE), saved_default_model()),
        ):
            if value:
                click.echo(f"{sanitize_line(value)}\t(from {sanitize_line(where)})")
                return
        click.echo(f"{default_model(catalog)}\t(the first provider whose key is set)")
        return
    if is_test_model(model):
        address = TEST_ADDRESS
    else:
        spec, name = catalog.resolve(model.strip())  # an unknown provider is refused now
        address = f"{spec.name}:{name}"
    path = home_dir() / DEFAULT_MODEL_FILE
    private_parent(path)
    create_private(path)
    path.write_text(address + "\n", encoding="utf-8")
    click.echo(f"default model: {sanitize_line(address)}")
    if os.environ.get("ELELEM_MODEL") or config_model(os.environ):
        click.echo(
            "elelem: warning: $ELELEM_MODEL or the config file's model still wins over it",
            err=True,
        )


@click.command("models")
@click.argument("provider", required=False)
@click.argument("model", required=False)
@click.option("--remote", is_flag=True, help="Ask the provider's model-list endpoint.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per model (NDJSON).")
@debug_option
@guarded
def models_command(provider: str | None, model: str | None, remote: bool, as_json: bool) -> None:
    """List known models (of PROVIDER), offline; --remote asks the provider.
    `elelem models default` says the model used when none is named, and
    `elelem models default MODEL` saves MODEL as it.

    Each line is the address to pass to -m, then `default` for a provider's
    default model and the aliases that name it.  With --json each model's
    limits and capabilities come too (context window, max output tokens,
    modalities, tools, reasoning, structured output, deprecation, and the
    source of each); with --remote, what the provider reports wins.
    """
    if provider == "default":
        _default(model)
        return
    if model is not None:
        raise click.UsageError(f"got an extra argument {model!r}: give one PROVIDER")
    catalog = load_catalog()
    if provider is not None:
        catalog.get(provider)  # an unknown provider is an error naming the known ones
    if remote:
        if provider is None:
            raise click.UsageError("--remote needs a PROVIDER (e.g. elelem models --remote openai)")
        listed = asyncio.run(_remote(catalog, provider))
        rows = [(provider, m.id, m.name, m.reported) for m in listed]
    else:
        rows = [(p, m, None, {}) for p, m in known_models(provider) if p in catalog]
    aliases = _aliases_of(catalog)
    out = sys.stdout
    for name, model, display, reported in rows:
        address = f"{name}:{model}"
        default = DEFAULT_MODELS.get(name) == model
        named = aliases.get(address, [])
        if as_json:
            record: dict[str, Any] = {"provider": name, "model": model, "address": address}
            record |= {"default": default, "aliases": named}
            if display is not None:
                record["name"] = display
            # What the model can take: the provider's own report over the catalog's.
            info = with_remote(model_info(name, model), reported)
            record |= {k: v for k, v in as_record(info).items() if k not in ("provider", "model")}
            out.write(ndjson_line(record) + "\n")
            continue
        notes = (["default"] if default else []) + [f"alias {a}" for a in named]
        if display:
            notes.insert(0, display)
        suffix = f"  ({sanitize_line(', '.join(notes))})" if notes else ""
        out.write(sanitize_line(address) + suffix + "\n")


@click.command("aliases")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: alias -> model.")
@debug_option
@guarded
def aliases_command(as_json: bool) -> None:
    """List model aliases: built in, and the config file's [aliases] (which win)."""
    catalog = load_catalog()
    table = aliases_in_force(catalog.aliases)
    if as_json:
        sys.stdout.write(ndjson_line(dict(table)) + "\n")
        return
    width = max((len(a) for a in table), default=0)
    for alias, target in table.items():
        origin = "  (config)" if alias in catalog.aliases else ""
        name = sanitize_line(alias)
        sys.stdout.write(f"{name.ljust(width)}  {sanitize_line(target)}{origin}\n")


@click.group("config")
def config_group() -> None:
    """The config file (aliases, providers, headers, the default model)."""


@config_group.command("path")
@debug_option
@guarded
def config_path_command() -> None:
    """Print where the config file is read from ($ELELEM_CONFIG, else the
    user config folder), whether or not it exists yet."""
    path = config_path()
    click.echo(sanitize_line(str(path)))
    if not path.exists():
        click.echo("elelem: (it does not exist yet)", err=True)


__all__ = ["aliases_command", "config_group", "models_command"]
