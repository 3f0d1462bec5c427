"""``elelem providers``: which providers are configured and which keys are missing."""

from __future__ import annotations

import os
import sys

import click

from elelem.cli.default_model import credential_status, default_model
from elelem.cli.exits import debug_option, guarded
from elelem.errors import ConfigError, UnsupportedError
from elelem.providers import load_catalog, load_shape
from elelem.render import sanitize_line

_CLOUD_AUTH = {"vertex": "Google credentials (ADC)", "azure": "Entra ID credential"}
"""How a cloud provider without a key authenticates."""


@click.command("providers")
@debug_option
@guarded
def providers_command() -> None:
    """List the providers, their wire shape, key status and base URL."""
    env = os.environ
    catalog = load_catalog(env=env)
    rows = []
    for name in catalog.names():
        spec = catalog.get(name)
        # The one answer `keys list` and the default model read too; the
        # wording is this table's (short enough for a column).
        status = credential_status(catalog, name, env)
        if status.kind == "key" and status.source is not None:
            key = f"key set ({status.source.removeprefix('$')})"
        elif status.kind == "cloud" and status.source is not None:
            key = _CLOUD_AUTH.get(status.source, status.source)
            if spec.key_env:
                key += f" (or set {' or '.join(spec.key_env)})"
        elif status.kind == "none needed":
            key = "no key needed"
        elif status.kind == "signing":
            key = f"AWS credentials set ({status.source})"
        else:
            # Both ways (the error says more).
            key = f"missing: elelem keys set {name}, or {' or '.join(spec.key_env)}"
            if spec.sigv4_service:
                key += " or AWS credentials"
        try:
            load_shape(spec.shape)
            shape = spec.shape
        except UnsupportedError:
            shape = f"{spec.shape} (not built yet)"
        try:
            url = spec.resolve_base_url(env)
        except ConfigError:
            url = spec.base_url  # its placeholders unfilled: what to set shows in the URL
        rows.append((name, shape, key, sanitize_line(url)))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    out = sys.stdout
    for row in rows:
        cells = [row[i].ljust(widths[i]) for i in range(3)]
        out.write("  ".join([*cells, row[3]]) + "\n")
    try:
        chosen = sanitize_line(default_model(catalog, env))
    except ConfigError:
        chosen = "none (set a provider key, $ELELEM_MODEL, or pass -m provider:model)"
    out.write(f"\ndefault model: {chosen}\n")


__all__ = ["providers_command"]
