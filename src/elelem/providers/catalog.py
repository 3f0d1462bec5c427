"""The provider catalog: name -> shape, base URL, key variable and auth header.

Base URLs follow each provider's official SDK convention, so the SDK's own
base-URL variable means the same thing here: ``ANTHROPIC_BASE_URL`` and
Google's ``GOOGLE_GEMINI_BASE_URL`` stop before the API version (the shape's
path carries ``/v1/messages`` or ``v1beta/...``); OpenAI-style base URLs end
in the version (``.../v1``) and the shape appends ``responses`` or
``chat/completions``.  Every provider also honours
``ELELEM_<PROVIDER>_BASE_URL`` (upper-cased, non-alphanumerics as ``_``),
which wins over the SDK variable.

A base URL may hold ``{region}`` (Amazon Bedrock's
``https://bedrock-runtime.{region}.amazonaws.com``): the provider's
``region_env`` variables fill it (``AWS_REGION``, then
``AWS_DEFAULT_REGION``, as the AWS SDKs read them), else its ``region``.

A provider with ``sigv4_service`` (Bedrock) also takes AWS IAM credentials:
when none of its ``key_env`` variables is set, ``AWS_ACCESS_KEY_ID`` and
``AWS_SECRET_ACCESS_KEY`` (plus ``AWS_SESSION_TOKEN`` for temporary
credentials) sign each request with Signature Version 4.  Only these
variables are read: no ``~/.aws`` file, profile or instance metadata.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import msgspec

from elelem.errors import ConfigError, UnsupportedError
from elelem.providers.clouds import Signers, cloud_endpoint, spec_endpoint
from elelem.providers.keys import load_keys
from elelem.providers.models import resolve_address
from elelem.shapes.registry import shape_named
from elelem.transport.endpoint import Endpoint
from elelem.transport.sigv4 import SigV4Signer
from elelem.vocabulary import ProviderId, ProviderRecord, provider_record, provider_records
from elelem.vocabulary.builtin_providers import BUILTIN_RECORDS
from elelem.wire import Shape

_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]*")
_SHAPE_NAME = re.compile(r"[a-z][a-z0-9_]*")
# An AWS region is a DNS label (us-east-1, eu-central-2, us-gov-west-1): it is
# pasted into a host name, so nothing else may pass.
_REGION = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
_PATH_PART = re.compile(r"[A-Za-z0-9_-]+")


def _valid_url(url: str) -> bool:
    """An http(s) URL with a host and, if any, a port in range."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


class ProviderSpec(ProviderRecord, frozen=True):
    """One provider: its :class:`~elelem.vocabulary.ProviderRecord` (how to
    reach it, which wire shape it speaks, its conventions and models) with
    the methods that resolve its base URL, region, key and endpoint.

    ``key_env`` lists the variables that may hold the API key (the first one
    set wins); ``key_required`` False lets local servers run without one.
    ``base_url_env`` lists the official SDK's base-URL variables.
    ``region_env`` lists the variables that may name the region a
    ``{region}`` in the base URL stands for (the first one set wins), and
    ``region`` is the default.  ``sigv4_service`` (e.g. ``bedrock``) names
    the AWS service to sign for with IAM credentials when no key is set.
    ``dialect`` names the provider whose conventions a shape with dialects
    (Chat Completions, :data:`elelem.shapes.openai_chat.DIALECTS`: every
    provider that speaks it) speaks to this one, and ``conventions`` sets
    them field by field over it; with neither, the provider gets the
    conventions of its own record, else the default.
    """

    @property
    def override_env(self) -> str:
        """``ELELEM_<PROVIDER>_BASE_URL`` for this provider."""
        return "ELELEM_" + re.sub(r"[^A-Z0-9]", "_", self.name.upper()) + "_BASE_URL"

    def resolve_base_url(self, env: Mapping[str, str]) -> str:
        """The base URL in force: ELELEM override, then SDK variable, then
        default; a ``{region}`` in it filled by :meth:`resolve_region`."""
        url = self.base_url
        for var in (self.override_env, *self.base_url_env):
            value = env.get(var, "").strip()
            if value:
                if not _valid_url(value):
                    raise ConfigError(f"{var} must be an http:// or https:// URL")
                url = value
                break
        if "{region}" in url:
            url = url.replace("{region}", self.resolve_region(env))
        for name, var in self.path_env.items():
            if "{" + name + "}" in url:
                value = env.get(var, "").strip()
                if not _PATH_PART.fullmatch(value):
                    raise ConfigError(
                        f"provider {self.name}: its base URL needs {{{name}}}: set {var} "
                        "(letters, digits, '-' and '_')"
                    )
                url = url.replace("{" + name + "}", value)
        return url

    def resolve_region(self, env: Mapping[str, str]) -> str:
        """The region: the first variable of ``region_env`` set, else ``region``.

        Raises :class:`~elelem.errors.ConfigError` naming the variable when
        the value is not a region name, or when no region is known.
        """
        for var in self.region_env:
            value = env.get(var, "").strip()
            if value:
                if not _REGION.fullmatch(value):
                    raise ConfigError(
                        f"{var} must be a region name such as us-east-1 (lower-case letters, "
                        "digits and '-')"
                    )
                return value
        if not self.region:
            where = " or ".join(self.region_env) if self.region_env else "region"
            raise ConfigError(f"provider {self.name}: its base URL needs a region: set {where}")
        return self.region

    def resolve_key(
        self, env: Mapping[str, str], api_key: str | None = None, stored: str | None = None
    ) -> str | None:
        """The API key: ``api_key`` if given, else the first variable of
        ``key_env`` set, else ``stored`` (saved by ``elelem keys set``).

        Raises :class:`~elelem.errors.ConfigError` naming the variable (never a
        value) when a required key is missing.
        """
        key = self._find_key(env, api_key, stored)
        if key is None and self.key_required:
            raise self._missing_key()
        return key

    def key_source(
        self, env: Mapping[str, str], api_key: str | None = None, stored: str | None = None
    ) -> str | None:
        """Where the key in force comes from (``"api_keys"``, ``"$VAR"`` or
        ``"keys file"``), never the key itself; None when none is set."""
        if api_key:
            return "api_keys"
        for var in self.key_env:
            if env.get(var, "").strip():
                return f"${var}"
        return "keys file" if stored else None

    def _find_key(
        self, env: Mapping[str, str], api_key: str | None, stored: str | None = None
    ) -> str | None:
        if api_key:
            return api_key
        for var in self.key_env:
            value = env.get(var, "").strip()
            if value:
                return value
        return stored or None

    def key_hint(self) -> str:
        """How to give this provider its key, both ways: saved with ``elelem
        keys set`` or from its environment variable (AWS credentials too for a
        signing provider)."""
        where = " or ".join(self.key_env) if self.key_env else "api_key"
        hint = f"run 'elelem keys set {self.name}' or set {where}"
        if self.sigv4_service:
            hint += f", or {_AWS_ID} and {_AWS_SECRET} (optionally {_AWS_TOKEN})"
        return hint

    def _missing_key(self) -> ConfigError:
        return ConfigError(f"provider {self.name} needs an API key: {self.key_hint()}")

    def resolve_signer(self, env: Mapping[str, str]) -> SigV4Signer | None:
        """A SigV4 signer from the AWS credential variables, or None when
        this provider does not sign or no credential variable is set.

        Raises :class:`~elelem.errors.ConfigError` naming the variable that
        is missing when only half of a key pair is set.
        """
        if not self.sigv4_service:
            return None
        key_id, secret, token = (env.get(v, "").strip() for v in _AWS_VARS)
        if not key_id and not secret:
            return None
        if not key_id or not secret:
            have, lack = (_AWS_ID, _AWS_SECRET) if key_id else (_AWS_SECRET, _AWS_ID)
            raise ConfigError(f"provider {self.name}: {have} is set but {lack} is not")
        return SigV4Signer(
            key_id,
            secret,
            token or None,
            region=self.resolve_region(env),
            service=self.sigv4_service,
        )

    def endpoint(
        self, env: Mapping[str, str], api_key: str | None = None, stored: str | None = None
    ) -> Endpoint:
        """The transport endpoint for this provider under ``env``: the API key
        when one is given, set or ``stored``, else (for a SigV4 provider) AWS
        credentials."""
        key = self._find_key(env, api_key, stored)
        signer = self.resolve_signer(env) if key is None else None
        if key is None and signer is None and self.key_required:
            raise self._missing_key()
        return spec_endpoint(self, self.resolve_base_url(env), key, signer)

    def secret_header_values(self) -> tuple[str, ...]:
        """The values of the headers :attr:`secret_headers` names."""
        wanted = {name.lower() for name in self.secret_headers}
        return tuple(v for k, v in self.headers.items() if k.lower() in wanted)


_AWS_ID, _AWS_SECRET, _AWS_TOKEN = _AWS_VARS = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
)


def spec_of(record: ProviderRecord) -> ProviderSpec:
    """The catalog's spec of ``record`` (the same fields)."""
    if isinstance(record, ProviderSpec):
        return record
    return ProviderSpec(**msgspec.structs.asdict(record))


BUILTIN: tuple[ProviderSpec, ...] = tuple(spec_of(r) for r in BUILTIN_RECORDS if r.chat)
"""The built-in providers (:mod:`elelem.vocabulary.builtin_providers`) the
catalog lists: every built-in record with a chat model."""


def registered_specs() -> tuple[ProviderSpec, ...]:
    """Every registered provider the catalog lists: the built-in ones and
    those plugins register (:func:`elelem.vocabulary.register_provider`)."""
    return tuple(spec_of(r) for r in provider_records() if r.chat)


COMPATIBLE: dict[str, ProviderSpec] = {
    "openai": ProviderSpec("", "openai_chat", ""),
    "openai-chat": ProviderSpec("", "openai_chat", ""),
    "openai-responses": ProviderSpec("", "openai_responses", ""),
    "anthropic": ProviderSpec(
        "", "anthropic_messages", "", auth_header="x-api-key", auth_scheme=""
    ),
}
"""Templates for user endpoints: ``compatible = "openai"`` (Chat Completions),
``"openai-responses"`` or ``"anthropic"`` (Messages)."""


PARKED_SHAPES: frozenset[str] = frozenset()
"""Shape packages whose requests are not built yet: their parsers read
recordings (tests, ``inspect`` refuses them by name), the catalog offers
none.  None now: Gemini's Interactions API was the last."""


def load_shape(name: str) -> Shape:
    """The shape registered as ``name`` (:mod:`elelem.shapes.registry`: the
    built-in ones, and every plugin's), imported on first use.

    A shape that is not built yet, or not registered, raises
    :class:`~elelem.errors.UnsupportedError` ("shape openai_chat is not
    supported yet"); an import error inside a shape that does exist
    propagates unchanged, since that is a bug to see.
    """
    if not _SHAPE_NAME.fullmatch(name):
        raise ConfigError(f"{name!r} is not a shape name")
    if name in PARKED_SHAPES:
        raise UnsupportedError(f"shape {name} is not supported yet")
    return shape_named(name)


def shape_of(spec: ProviderSpec) -> Shape:
    """The shape ``spec`` speaks, bound to its ``dialect`` if it names one.

    Raises :class:`~elelem.errors.ConfigError` for a dialect the shape does
    not know, or for a dialect on a shape that has none.
    """
    shape = load_shape(spec.shape)
    registered = provider_record(spec.name)
    if registered is not None and _same_conventions(registered, spec):
        return shape  # the shape finds them by the provider's name
    if spec.conventions:
        try:
            return shape.with_conventions(  # type: ignore[attr-defined,no-any-return]
                spec.conventions, dialect=spec.dialect, where=f"provider {spec.name}"
            )
        except AttributeError:
            raise ConfigError(
                f"provider {spec.name}: shape {spec.shape} has no conventions to set"
            ) from None
    if not spec.dialect:
        return shape
    bind = getattr(shape, "with_dialect", None)
    if bind is None:
        raise ConfigError(
            f"provider {spec.name}: shape {spec.shape} has no dialects (dialect = {spec.dialect!r})"
        )
    try:
        return bind(spec.dialect)  # type: ignore[no-any-return]
    except ConfigError as exc:
        raise ConfigError(f"provider {spec.name}: {exc}") from None


def _same_conventions(record: ProviderRecord, spec: ProviderRecord) -> bool:
    return (record.shape, record.dialect, record.conventions, record.profiles) == (
        spec.shape,
        spec.dialect,
        spec.conventions,
        spec.profiles,
    )


def parse_model(address: str) -> tuple[str, str]:
    """Split ``provider:model`` at the first colon (model names may hold colons).

    This is the strict form; :meth:`Catalog.resolve` also takes a bare
    provider, a known model id or an alias (:mod:`elelem.providers.models`)."""
    provider, sep, model = address.partition(":")
    if not sep or not provider or not model:
        raise ConfigError(
            f"model {address!r} must be addressed as provider:model (e.g. anthropic:claude-sonnet-4-5)"
        )
    return provider, model


class Catalog:
    """Providers by name: the built-ins plus any added in code or a config file."""

    def __init__(
        self,
        providers: Iterable[ProviderRecord] | None = None,
        aliases: Mapping[str, str] | None = None,
    ) -> None:
        self._providers: dict[str, ProviderSpec] = {}
        for spec in registered_specs() if providers is None else providers:
            self.add(spec)
        self.aliases: dict[str, str] = dict(aliases or {})
        """User aliases (the config file's ``[aliases]``), over the built-in ones."""
        self.keys_file: Path | None = None
        """The file of saved keys (:mod:`elelem.providers.keys`), read on the
        first key not found in the environment; None reads none."""
        self._stored: dict[str, str] | None = None
        self.credentials: dict[str, Any] = {}
        """Cloud credentials given in code, by provider name: a ``google.auth``
        credentials object (Vertex AI) or an Azure ``TokenCredential`` (Entra
        ID), used instead of the ones found in the environment."""
        self._signers: Signers = {}

    def stored_key(self, name: str) -> str | None:
        """The key saved for provider ``name`` in :attr:`keys_file`, if any."""
        if self.keys_file is None:
            return None
        if self._stored is None:
            self._stored = load_keys(self.keys_file)
        return self._stored.get(name)

    def _stored_unless_set(
        self, spec: ProviderSpec, env: Mapping[str, str], api_key: str | None
    ) -> str | None:
        # The environment wins, so a saved key is read only when it is needed
        # (and a bad keys file cannot break a run that names its key).
        if spec.key_source(env, api_key) is not None:
            return None
        return self.stored_key(spec.name)

    def endpoint(
        self, spec: ProviderSpec, env: Mapping[str, str], api_key: str | None = None
    ) -> Endpoint:
        """``spec``'s endpoint with its key from ``api_key``, ``env`` or the keys
        file; a cloud provider without a key gets its cloud's credentials
        (kept across calls, so a token is reused until it nears expiry)."""
        stored = self._stored_unless_set(spec, env, api_key)
        if spec.cloud:
            key = spec.resolve_key(env, api_key, stored)
            credential = self.credentials.get(spec.name)
            return cloud_endpoint(spec, env, key, self._signers, credential)
        return spec.endpoint(env, api_key, stored)

    def resolve_key(
        self, spec: ProviderSpec, env: Mapping[str, str], api_key: str | None = None
    ) -> str | None:
        """``spec``'s key from ``api_key``, ``env`` or the keys file (see
        :meth:`ProviderSpec.resolve_key`)."""
        return spec.resolve_key(env, api_key, self._stored_unless_set(spec, env, api_key))

    def key_source(
        self, spec: ProviderSpec, env: Mapping[str, str], api_key: str | None = None
    ) -> str | None:
        """Where ``spec``'s key comes from (see :meth:`ProviderSpec.key_source`)."""
        return spec.key_source(env, api_key, self._stored_unless_set(spec, env, api_key))

    def __repr__(self) -> str:
        return f"Catalog(providers={self.names()!r}, aliases={sorted(self.aliases)!r})"

    def add(self, spec: ProviderRecord) -> None:
        """Add (or replace) a provider (a record becomes its spec)."""
        spec = spec_of(spec)
        if not _NAME.fullmatch(spec.name):
            raise ConfigError(
                f"provider name {spec.name!r} must be lower-case letters, digits, '.', '_' or '-'"
            )
        if not _SHAPE_NAME.fullmatch(spec.shape):
            raise ConfigError(f"provider {spec.name}: {spec.shape!r} is not a shape name")
        if not _valid_url(spec.base_url):
            raise ConfigError(f"provider {spec.name}: base_url must be an http(s) URL")
        self._providers[spec.name] = spec

    def add_compatible(
        self,
        name: str,
        base_url: str,
        *,
        compatible: str = "openai",
        key_env: Iterable[str] = (),
        key_required: bool | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> ProviderSpec:
        """Add an OpenAI- or Anthropic-compatible endpoint by name and return it."""
        template = COMPATIBLE.get(compatible)
        if template is None:
            raise ConfigError(
                f"provider {name}: compatible must be one of {', '.join(sorted(COMPATIBLE))}"
            )
        keys = tuple(key_env)
        spec = msgspec.structs.replace(
            template,
            name=name,
            base_url=base_url,
            key_env=keys,
            key_required=bool(keys) if key_required is None else key_required,
            headers=dict(headers or {}),
        )
        self.add(spec)
        return spec

    def get(self, name: str) -> ProviderSpec:
        """The provider called ``name``."""
        spec = self._providers.get(name)
        if spec is None:
            known = ", ".join(sorted(self._providers))
            raise ConfigError(f"unknown provider {name!r} (known: {known})")
        return spec

    def names(self) -> list[str]:
        """Provider names, sorted."""
        return sorted(self._providers)

    def __contains__(self, name: object) -> bool:
        return name in self._providers

    def resolve(self, address: str) -> tuple[ProviderSpec, str]:
        """A model address -> (provider, model name): ``provider:model``, a
        bare provider (its default model), a known model id or an alias, by
        the rules of :func:`~elelem.providers.models.resolve_address`.  An
        address that is not text (a lone surrogate: bytes of a variable that
        were not UTF-8) is a :class:`~elelem.errors.ConfigError`."""
        try:
            address.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ConfigError(
                f"model {address!r} is not UTF-8 text (at character {exc.start + 1})"
            ) from None
        if "," in self.aliases.get(address.strip(), address):
            # A list is a fallback (`-m a,b`, or an alias to a list): only
            # what sends a chat request takes one (elelem.Fallback).
            raise ConfigError(
                f"model {address!r} names a list of models; this takes one "
                "(a list is a fallback, for chat requests: elelem.Fallback)"
            )
        provider, model = resolve_address(address, self, self.aliases)
        return self.get(provider), model

    def target(
        self, address: str, env: Mapping[str, str], api_keys: Mapping[str, str] | None = None
    ) -> Target:
        """Resolve ``provider:model`` once: the provider, the model name, its
        shape (imported on first use) and the endpoint under ``env``, with
        the key ``api_keys`` gives for the provider if any.

        Raises :class:`~elelem.errors.ConfigError` for an unknown provider, a
        bad address or a missing key, and :class:`~elelem.errors.UnsupportedError`
        for a shape not built yet.
        """
        spec, model = self.resolve(address)
        shape = shape_of(spec)
        key = api_keys.get(spec.name) if api_keys else None
        return Target(address, spec, model, shape, self.endpoint(spec, env, key))


@dataclass(frozen=True)
class Target:
    """A model address resolved once (:meth:`Catalog.target`) and passed down:
    everything a request to it needs, with no further catalog look-up.

    ``address`` is what the caller wrote (``anthropic:claude-sonnet-4-5``);
    ``model`` the model name sent on the wire.  The endpoint's repr hides its
    key, so this one's does too.
    """

    address: str
    spec: ProviderSpec
    model: str
    shape: Shape
    endpoint: Endpoint

    @property
    def provider(self) -> ProviderId:
        """The provider's name."""
        return ProviderId(self.spec.name)

    @property
    def resolved(self) -> str:
        """The ``provider:model`` the address resolved to
        (``anthropic:claude-sonnet-4-5`` for ``sonnet`` or ``anthropic``):
        what a conversation records, so its log names the model asked, not
        an alias whose meaning can change."""
        return f"{self.spec.name}:{self.model}"


__all__ = [
    "BUILTIN",
    "COMPATIBLE",
    "Catalog",
    "ProviderSpec",
    "Target",
    "load_shape",
    "parse_model",
    "registered_specs",
    "shape_of",
    "spec_of",
]
