"""``elelem providers``: which providers are configured and which keys are missing."""

from __future__ import annotations

import os
import sys

import click

from elelem.cli.default_model import default_model, signing_credentials_set
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
        # The catalog's own answer, as `keys list` and every request read it:
        # a saved key counts.
        source = catalog.key_source(spec, env)
        if source is not None:
            key = f"key set ({source.removeprefix('$')})"
        elif spec.cloud:
            key = _CLOUD_AUTH.get(spec.cloud, spec.cloud)
            if spec.key_env:
                key += f" (or set {' or '.join(spec.key_env)})"
        elif not spec.key_required:
            key = "no key needed"
        elif signing_credentials_set(catalog, name, env):
            key = "AWS credentials set (AWS_ACCESS_KEY_ID)"
        else:
            # Both ways, short enough for a table column (the error says more).
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
