"""``elelem models`` (what each provider serves) and ``elelem aliases``."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import click
import httpx2

from elelem.cli.common import debug_option, guarded
from elelem.cli.inspect import ndjson_line
from elelem.providers import Catalog, load_catalog
from elelem.providers.capabilities import as_record, model_info, with_remote
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


@click.command("models")
@click.argument("provider", required=False)
@click.option("--remote", is_flag=True, help="Ask the provider's model-list endpoint.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per model (NDJSON).")
@debug_option
@guarded
def models_command(provider: str | None, remote: bool, as_json: bool) -> None:
    """List known models (of PROVIDER), offline; --remote asks the provider.

    Each line is the address to pass to -m, then `default` for a provider's
    default model and the aliases that name it.  With --json each model's
    limits and capabilities come too (context window, max output tokens,
    modalities, tools, reasoning, structured output, deprecation, and the
    source of each); with --remote, what the provider reports wins.
    """
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


__all__ = ["aliases_command", "models_command"]
