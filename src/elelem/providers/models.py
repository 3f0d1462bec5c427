"""What ``-m`` may name: ``provider:model``, a bare provider, a known model id,
or an alias — and the tables behind them.

:func:`resolve_address` is the one place a model address becomes a
``(provider, model)`` pair.  Its rules, in order:

1. an alias (the config file's ``[aliases]`` first, then :data:`ALIASES`)
   stands for its target, which is then resolved by the rules below;
2. ``provider:model`` when the part before the first colon is a provider of
   the catalog (model names may hold colons: ``ollama:llama3.2:3b``);
3. a bare provider name takes that provider's default model
   (:data:`DEFAULT_MODELS`);
4. a model id listed in :data:`KNOWN_MODELS` (``claude-sonnet-4-5``,
   ``gpt-5``, Bedrock's ``anthropic.claude-…-v1:0``) goes to its provider.

Anything else is a :class:`~elelem.errors.ConfigError` that says which
forms are accepted.  The tables are offline knowledge: a provider serves
models that are not listed (pass them as ``provider:model``), and
``elelem models --remote`` asks the provider itself.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Protocol

from elelem.errors import ConfigError
from elelem.vocabulary.registry import RecordTable

DEFAULT_MODELS: Mapping[str, str] = RecordTable(lambda r: r.default_model or None)
"""The model a provider gets when only the provider is named (its record's
``default_model``); the order is the order in which the CLI looks for a
provider whose key is set."""

KNOWN_MODELS: Mapping[str, tuple[str, ...]] = RecordTable(lambda r: r.models or None)
"""Model ids known offline, per provider (each record's ``models``; the
first provider listing an id is its home: a bare id resolves there)."""


ALIASES: Mapping[str, str] = RecordTable(
    build=lambda records: {
        alias: f"{record.name}:{model}"
        for record in records
        for alias, model in record.aliases.items()
    }
)
"""Built-in aliases (each record's ``aliases``, as ``provider:model``); the
config file's ``[aliases]`` table adds to them and wins."""


class ProviderNames(Protocol):
    """What resolution needs of a catalog: its provider names."""

    def __contains__(self, name: object) -> bool: ...

    def names(self) -> list[str]: ...


def model_home(model: str) -> str | None:
    """The provider whose :data:`KNOWN_MODELS` lists ``model`` first, or None."""
    for provider, models in KNOWN_MODELS.items():
        if model in models:
            return provider
    return None


def resolve_address(
    address: str, providers: ProviderNames, aliases: Mapping[str, str] | None = None
) -> tuple[str, str]:
    """``address`` as ``(provider, model)`` by the rules of this module.

    ``providers`` is the catalog (anything answering ``name in providers``);
    ``aliases`` the config file's ``[aliases]`` (they win over the built-ins).
    Raises :class:`~elelem.errors.ConfigError` for an empty address, a bare
    provider without a default model, an unknown provider before a colon, or
    a name that is none of the accepted forms.
    """
    text = address.strip()
    if not text:
        raise ConfigError("the model must not be empty (e.g. -m anthropic:claude-sonnet-4-5)")
    table = {**ALIASES, **(aliases or {})}
    target = table.get(text)
    if target is not None:
        if target in table:
            # One level only: an alias of an alias would hide a typo behind a loop.
            raise ConfigError(f"alias {text!r} names another alias ({target!r}); name a model")
        return _resolve_plain(target, providers, origin=f"alias {text!r}")
    return _resolve_plain(text, providers, origin=None)


def _resolve_plain(text: str, providers: ProviderNames, *, origin: str | None) -> tuple[str, str]:
    provider, sep, model = text.partition(":")
    if sep and provider in providers:
        if not model:
            raise ConfigError(f"model {text!r} names no model after {provider + ':'!r}")
        return provider, model
    if not sep and text in providers:
        default = DEFAULT_MODELS.get(text)
        if default is None:
            raise ConfigError(
                f"provider {text!r} has no default model: name one as {text}:MODEL "
                f"(`elelem models --remote {text}` lists what it serves)"
            )
        return text, default
    home = model_home(text)
    if home is not None and home in providers:
        return home, text
    where = f"{origin} stands for {text!r}, which" if origin else f"model {text!r}"
    if sep:
        known = ", ".join(sorted(providers.names()))
        prefix = f"{where}: " if origin else ""
        raise ConfigError(f"{prefix}unknown provider {provider!r} (known: {known})")
    raise ConfigError(
        f"{where} is not provider:model, a provider, a known model (`elelem models`) "
        "or an alias (`elelem aliases`)"
    )


def known_models(provider: str | None = None) -> Iterator[tuple[str, str]]:
    """``(provider, model)`` for every known model (of ``provider`` when given)."""
    for name, models in KNOWN_MODELS.items():
        if provider is None or name == provider:
            for model in models:
                yield name, model


def aliases_in_force(aliases: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every alias and its target: the built-ins overlaid by ``aliases``, sorted."""
    return dict(sorted({**ALIASES, **(aliases or {})}.items()))


__all__ = [
    "ALIASES",
    "DEFAULT_MODELS",
    "KNOWN_MODELS",
    "ProviderNames",
    "aliases_in_force",
    "known_models",
    "model_home",
    "resolve_address",
]
