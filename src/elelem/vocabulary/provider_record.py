"""A provider as one record: everything elelem knows about it, in one value.

A :class:`ProviderRecord` says how to reach a provider (base URL, key
variables, auth header), which wire shape it speaks for each kind of
exchange, the conventions it wants on a shape with dialects, its models
(the default one, the ones known offline, aliases), and the names other
tables give it (the genai-prices id, the OpenTelemetry provider name).
Every name-keyed table of the library is derived from the registered
records (:func:`elelem.vocabulary.registry.provider_records`); nothing
else lists providers.  The built-in records are
:mod:`elelem.vocabulary.builtin_providers`, registered through
:func:`~elelem.vocabulary.registry.register_provider` as a plugin's are.

A record is pure data (strings, tuples, mappings), so it lives with the
vocabulary: a shape reads a provider's conventions from it without
importing the catalog, which builds its
:class:`~elelem.providers.ProviderSpec` (the record plus how to resolve a
key, a region and an endpoint) from it.

Model-family conventions are :class:`ModelProfile` values: a profile whose
``prefix`` starts a model id puts its ``conventions`` over the provider's
for that model, so a rule about a model family never sits in a provider's
table.
"""

from __future__ import annotations

from typing import Any

import msgspec


class ModelProfile(msgspec.Struct, frozen=True):
    """Conventions of one model family, merged over its provider's.

    ``prefix`` starts the model ids of the family (``zai-glm``);
    ``conventions`` are fields of the shape's dialect, as in
    :attr:`ProviderRecord.conventions`, which win for those models.
    """

    prefix: str
    conventions: dict[str, Any] = msgspec.field(default_factory=dict)


EXCHANGE_KINDS = (
    "chat",
    "embeddings",
    "batch",
    "count",
    "speech",
    "transcription",
    "models",
    "files",
)
"""The kinds of exchange a record may name a wire for in :attr:`ProviderRecord.kinds`."""


class ProviderRecord(msgspec.Struct, frozen=True):
    """One provider: how to reach it, what it speaks, what it serves.

    The first fields (through ``token_scope``) say how to reach it and are
    documented on :class:`~elelem.providers.ProviderSpec`, which is this
    record with the methods that resolve them.  The rest:

    ``conventions``: fields of the chat shape's dialect this provider wants
    (Chat Completions: ``reasoning_replay``, ``max_tokens_field``, ``cache``…,
    see :class:`elelem.shapes.openai_chat.Dialect`), over the conventions of
    ``dialect`` when that names another record, else over the shape's
    default; ``profiles`` the model families that differ.
    ``default_model`` is what a bare provider name resolves to; ``models``
    the ids known offline (the first record listing an id is its home);
    ``aliases`` short names for models of this provider (alias -> model).
    ``price_id`` is its id in genai-prices ("" looks it up by its API
    address); ``local`` marks a server on the user's own machine, which
    nothing prices.  ``telemetry_name`` is its ``gen_ai.provider.name``
    ("" sends its own name).  ``hosts`` are host names a recording of it may
    name beyond its base URL's.  ``kinds`` names, per exchange kind of
    :data:`EXCHANGE_KINDS` other than chat, the wire it speaks where that is
    not its chat shape's (``{"embeddings": "voyage", "batch": "openai"}``),
    and ``files`` the shape whose Files API it serves: named only where it
    has one, since most servers of a wire (the OpenAI-compatible ones above
    all) have no ``/files``;
    ``chat`` False marks a provider with no chat model (embeddings only),
    which the catalog does not list.
    """

    name: str
    shape: str
    base_url: str
    key_env: tuple[str, ...] = ()
    auth_header: str = "authorization"
    auth_scheme: str = "Bearer"
    base_url_env: tuple[str, ...] = ()
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    key_required: bool = True
    region_env: tuple[str, ...] = ()
    region: str = ""
    sigv4_service: str = ""
    dialect: str = ""
    secret_headers: tuple[str, ...] = ()
    """Names of ``headers`` whose values are secrets (redacted like the key),
    beyond those whose names say so (``authorization``, ``*-token``, …)."""
    path_env: dict[str, str] = msgspec.field(default_factory=dict)
    """Placeholders of the base URL's path other than ``{region}`` -> the
    variable that fills each (Cloudflare's ``{account_id}`` and
    ``{gateway_id}``); one that is unset is a ConfigError naming it."""
    cloud: str = ""
    """``vertex`` or ``azure``: the cloud's paths and credentials
    (:mod:`elelem.providers.clouds`); the key, when set, still wins."""
    project: str = ""
    """The Google Cloud project of a Vertex AI provider (``GOOGLE_CLOUD_PROJECT`` wins)."""
    location: str = ""
    """The Google Cloud location of a Vertex AI provider (``GOOGLE_CLOUD_LOCATION`` wins)."""
    token_scope: str = ""
    """The Entra ID scope an Azure provider asks tokens for."""
    conventions: dict[str, Any] = msgspec.field(default_factory=dict)
    profiles: tuple[ModelProfile, ...] = ()
    default_model: str = ""
    models: tuple[str, ...] = ()
    aliases: dict[str, str] = msgspec.field(default_factory=dict)
    price_id: str = ""
    local: bool = False
    telemetry_name: str = ""
    hosts: tuple[str, ...] = ()
    kinds: dict[str, str] = msgspec.field(default_factory=dict)
    chat: bool = True
    connect_hint: str = ""
    """What to check when its server refuses the connection (a local
    server's start command), shown after the error; "" shows none."""

    def profile_for(self, model: str | None) -> ModelProfile | None:
        """The profile of ``model``'s family (the longest prefix), or None."""
        if not model or not self.profiles:
            return None
        found = [p for p in self.profiles if model.startswith(p.prefix)]
        return max(found, key=lambda p: len(p.prefix)) if found else None


def record_problems(record: ProviderRecord) -> list[str]:
    """What is wrong with ``record`` as data (empty when nothing is): the
    checks that hold whatever shape it speaks; the shape checks its
    ``conventions`` when it binds them."""
    problems = []
    if record.default_model and record.default_model not in record.models:
        problems.append(f"default model {record.default_model!r} is not among its models")
    for alias, model in record.aliases.items():
        if not alias or not model:
            problems.append(f"alias {alias!r} -> {model!r} is empty")
    unknown = sorted(set(record.kinds) - set(EXCHANGE_KINDS))
    if unknown:
        problems.append(f"kinds {unknown} are not exchange kinds {list(EXCHANGE_KINDS)}")
    if record.local and record.price_id:
        problems.append("a local server has no price id")
    if record.dialect == record.name:
        problems.append("its dialect names itself (leave it empty)")
    return problems


__all__ = ["EXCHANGE_KINDS", "ModelProfile", "ProviderRecord", "record_problems"]
