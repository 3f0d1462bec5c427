"""User provider endpoints from a TOML config file.

The file (``$ELELEM_CONFIG``, else ``config.toml`` in the user config folder)
may hold other sections; ``[providers.<name>]`` tables and the ``[aliases]``
table are read here::

    [providers.local]
    compatible = "openai"            # or "openai-responses", "anthropic"
    base_url = "http://127.0.0.1:8000/v1"
    api_key_env = "LOCAL_API_KEY"    # optional; key_env also takes a list
    headers = { "x-team" = "blue" }  # optional

    [aliases]
    fast = "groq:llama-3.1-8b-instant"
    local = "local:qwen2.5"

    [providers.anthropic]            # a built-in: override some fields
    base_url = "https://proxy.example/anthropic"

A table may name ``shape`` directly instead of ``compatible``, and set
``auth_header``, ``auth_scheme``, ``key_required``, ``region`` (the
default for a ``{region}`` in the base URL, e.g. ``[providers.bedrock]
region = "eu-west-1"``; ``AWS_REGION`` still wins), ``project`` and
``location`` (Vertex AI: ``[providers.vertex] project = "my-project"``;
``GOOGLE_CLOUD_PROJECT`` and ``GOOGLE_CLOUD_LOCATION`` still win),
``cloud`` and ``token_scope`` (a provider of its own on Vertex AI or Azure,
see :mod:`elelem.providers.clouds`), ``dialect``: the
Chat Completions conventions the endpoint speaks (how reasoning is sent
back, the token-limit field, effort, web search, caching, structured
output), named by the provider whose conventions they are (any provider
that speaks Chat Completions, and ``openai``:
:data:`elelem.shapes.openai_chat.DIALECTS` lists them, derived from the
provider records), and ``conventions``: a table of those conventions set
one by one (the fields of :class:`elelem.shapes.openai_chat.Dialect`), over
the named dialect's or the default::

    [providers.my-deepseek]          # a proxy in front of DeepSeek
    compatible = "openai"
    base_url = "https://llm.example/deepseek/v1"
    dialect = "deepseek"             # reasoning_content passed back, json_object only

    [providers.my-server]            # a compatible server of its own
    compatible = "openai"
    base_url = "http://127.0.0.1:8000/v1"
    conventions = { reasoning_replay = "think-tags", max_tokens_field = "max_completion_tokens" }

Without either an endpoint gets the conventions of its own name's record,
else the default (reasoning echoed in the field it arrived in).  Unknown keys and
wrong types are errors that name the file, the table and the key.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec
import platformdirs

from elelem.errors import ConfigError
from elelem.providers.catalog import COMPATIBLE, Catalog, ProviderSpec, shape_of
from elelem.providers.keys import keys_path
from elelem.reading import ReadRefused, read_file

_STR_KEYS = (
    "compatible",
    "shape",
    "base_url",
    "auth_header",
    "auth_scheme",
    "region",
    "dialect",
    "cloud",
    "project",
    "location",
    "token_scope",
)
_KNOWN = {
    *_STR_KEYS,
    "key_env",
    "api_key_env",
    "headers",
    "key_required",
    "secret_headers",
    "conventions",
}


def config_path(env: Mapping[str, str] | None = None) -> Path:
    """Where the config file is: ``$ELELEM_CONFIG`` or the user config folder."""
    env = os.environ if env is None else env
    explicit = env.get("ELELEM_CONFIG")
    if explicit:
        return Path(explicit)
    return Path(platformdirs.user_config_dir("elelem")) / "config.toml"


MAX_CONFIG_BYTES = 1024 * 1024
"""The largest config file read."""


def read_config(file: Path) -> dict[str, Any] | None:
    """The parsed TOML of the config ``file``, or None when there is none.

    A path that exists but is not a file (a directory), an unreadable file
    and text that is not UTF-8 TOML are :class:`~elelem.errors.ConfigError` errors.
    """
    if not file.exists():
        return None
    if not file.is_file():
        raise ConfigError(f"{file}: the config path is not a file")
    try:
        return tomllib.loads(read_file(file, MAX_CONFIG_BYTES).decode("utf-8"))
    except ReadRefused as exc:
        raise ConfigError(f"{file}: cannot read the config file: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read the config file: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{file}: not valid TOML: nested too deeply to read") from None


def named_config_missing(env: Mapping[str, str] | None = None) -> ConfigError | None:
    """The error for a file ``$ELELEM_CONFIG`` names that does not exist (a
    typo must not run without the config it meant), else None.  The command
    raises it (exit 2); the library, given its environment explicitly, reads
    a missing file as no config."""
    env = os.environ if env is None else env
    named = env.get("ELELEM_CONFIG")
    if not named or Path(named).exists():
        return None
    return ConfigError(
        f"ELELEM_CONFIG names {named}, which does not exist: create it, or unset "
        "ELELEM_CONFIG to use the default config file"
    )


def load_catalog(path: Path | None = None, env: Mapping[str, str] | None = None) -> Catalog:
    """The registered providers (built-in and plugins') plus the config
    file's ``[providers]`` (if the file exists; a file given as ``path``
    must)."""
    catalog = Catalog()
    file = path if path is not None else config_path(env)
    data = read_config(file)
    if data is not None:
        apply_config(catalog, data, origin=str(file))
    elif path is not None:
        raise ConfigError(f"{file}: no such config file")
    catalog.keys_file = keys_path(env)
    return catalog


TOP_LEVEL = ("aliases", "model", "providers")
"""The config file's top-level keys and tables: any other is an error."""


def check_top_level(data: Mapping[str, Any], origin: str) -> None:
    """Raise :class:`~elelem.errors.ConfigError` naming ``origin`` (the file)
    and the first key or table the config file does not have (a misspelt
    ``modle`` or ``[alises]`` would otherwise be ignored without a word)."""
    for key in sorted(set(data) - set(TOP_LEVEL)):
        what = f"table [{key}]" if isinstance(data[key], dict) else f"key {key!r}"
        near = difflib.get_close_matches(key, TOP_LEVEL, n=1)
        hint = f"did you mean {near[0]!r}? " if near else ""
        raise ConfigError(f"{origin}: unknown {what} ({hint}known: {', '.join(TOP_LEVEL)})")


def apply_config(catalog: Catalog, data: Mapping[str, Any], *, origin: str = "config") -> None:
    """Add or amend providers from parsed TOML ``data`` (its ``providers`` table)."""
    check_top_level(data, origin)
    catalog.aliases.update(_aliases(data.get("aliases", {}), origin))
    providers = data.get("providers", {})
    if not isinstance(providers, dict):
        raise ConfigError(f"{origin}: [providers] must be a table")
    for name, table in providers.items():
        where = f"{origin}: [providers.{name}]"
        if not isinstance(table, dict):
            raise ConfigError(f"{where} must be a table")
        catalog.add(_spec(catalog, name, table, where))


def _aliases(table: object, origin: str) -> dict[str, str]:
    """The ``[aliases]`` table: a name is a model, or a list of models tried
    in turn (a fallback), kept comma-joined as ``-m a,b`` writes it."""
    if not isinstance(table, dict):
        raise ConfigError(f'{origin}: [aliases] must be a table of name = "provider:model"')
    out: dict[str, str] = {}
    for name, target in table.items():
        models = target if isinstance(target, list) else [target]
        if not models or not all(isinstance(m, str) and m.strip() and "," not in m for m in models):
            raise ConfigError(
                f'{origin}: [aliases] {name} must be a model such as "anthropic:claude-sonnet-4-5"'
                " or a list of them"
            )
        out[name] = ",".join(m.strip() for m in models)
    return out


def _spec(catalog: Catalog, name: str, table: dict[str, Any], where: str) -> ProviderSpec:
    unknown = sorted(set(table) - _KNOWN)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}")
    for key in _STR_KEYS:
        if key in table and not isinstance(table[key], str):
            raise ConfigError(f"{where}: {key} must be a string")
    changes: dict[str, Any] = {}
    if "compatible" in table:
        template = COMPATIBLE.get(table["compatible"])
        if template is None:
            raise ConfigError(f"{where}: compatible must be one of {', '.join(sorted(COMPATIBLE))}")
        base = msgspec.structs.replace(template, name=name, key_required=False)
    elif name in catalog:
        base = catalog.get(name)
    elif "shape" in table:
        base = ProviderSpec(name, table["shape"], "", key_required=False)
    else:
        raise ConfigError(f"{where}: a new provider needs compatible = ... or shape = ...")
    for key in _STR_KEYS[1:]:
        if key in table:
            changes[key] = table[key]
    if "key_env" in table and "api_key_env" in table:
        raise ConfigError(f"{where}: give key_env or api_key_env, not both")
    if "key_env" in table or "api_key_env" in table:
        field = "key_env" if "key_env" in table else "api_key_env"
        keys = table[field]
        if isinstance(keys, str):
            keys = [keys]
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise ConfigError(f"{where}: {field} must be a string or a list of strings")
        changes["key_env"] = tuple(keys)
        if "compatible" in table or name not in catalog:
            changes["key_required"] = bool(keys)  # a new endpoint needs a key once it names one
    if "key_required" in table:
        if not isinstance(table["key_required"], bool):
            raise ConfigError(f"{where}: key_required must be true or false")
        changes["key_required"] = table["key_required"]
    if "headers" in table:
        headers = table["headers"]
        if not isinstance(headers, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
        ):
            raise ConfigError(f"{where}: headers must be a table of strings")
        changes["headers"] = {**base.headers, **headers}
    if "secret_headers" in table:
        names = table["secret_headers"]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ConfigError(f"{where}: secret_headers must be a list of header names")
        changes["secret_headers"] = tuple(names)
    if "conventions" in table:
        fields = table["conventions"]
        if not isinstance(fields, dict) or not all(
            isinstance(v, str | bool | int) for v in fields.values()
        ):
            raise ConfigError(f"{where}: conventions must be a table of strings and booleans")
        changes["conventions"] = {**base.conventions, **fields}
    spec = msgspec.structs.replace(base, name=name, **changes)
    if not spec.base_url:
        raise ConfigError(f"{where}: base_url is required")
    for key in ("dialect", "conventions"):
        if key in table:
            try:
                shape_of(spec)  # the shape must have that dialect, and take those fields
            except ConfigError as exc:
                raise ConfigError(f"{where}: {key}: {exc}") from None
    return spec


__all__ = ["apply_config", "config_path", "load_catalog", "named_config_missing", "read_config"]
