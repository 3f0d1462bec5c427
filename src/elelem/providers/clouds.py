"""Models served by a cloud: Google Vertex AI and Microsoft Azure.

The clouds speak shapes elelem already has; what differs is where a request
goes and how it authenticates, so no parser is added:

- ``vertex`` (Gemini) and ``vertex-anthropic`` (Claude) send to
  ``{base}/v1/projects/{project}/locations/{location}/publishers/{google|anthropic}/models/{model}:{method}``.
  The base is ``https://{location}-aiplatform.googleapis.com``, or
  ``https://aiplatform.googleapis.com`` for the ``global`` location;
  ``ELELEM_VERTEX_BASE_URL`` / ``ELELEM_VERTEX_ANTHROPIC_BASE_URL`` replace
  it.  The project comes from the config file (``project``),
  ``GOOGLE_CLOUD_PROJECT`` (or ``GOOGLE_VERTEX_PROJECT``), else the
  credentials; the location from ``location``, ``GOOGLE_CLOUD_LOCATION``
  (or ``GOOGLE_VERTEX_LOCATION``), else ``global``.  Gemini keeps its
  ``:streamGenerateContent?alt=sse``, ``:generateContent`` and
  ``:countTokens`` methods; Claude is sent to ``:streamRawPredict`` (or
  ``:rawPredict``), the model named in the path and not the body, which
  carries ``anthropic_version: "vertex-2023-10-16"`` instead of the
  ``anthropic-version`` header; its token count goes to
  ``count-tokens:rawPredict``.  Credentials are Google's Application Default
  Credentials (:mod:`elelem.providers.cloud_credentials`); a Vertex
  *express mode* API key (``GOOGLE_VERTEX_API_KEY``) sends Gemini requests
  to ``{base}/v1/publishers/google/models/...`` with no project, as Google
  documents.
- ``azure`` (OpenAI Responses), ``azure-chat`` (Chat Completions) and
  ``azure-anthropic`` (Claude in Microsoft Foundry) use the shapes' own
  paths under the resource's v1 base URL: ``https://{resource}.openai.azure.com/openai/v1``
  (from ``AZURE_OPENAI_ENDPOINT`` or ``AZURE_RESOURCE_NAME``; models are
  deployment names) and ``https://{resource}.services.ai.azure.com/anthropic``
  (from ``ANTHROPIC_FOUNDRY_RESOURCE``).  An API key
  (``AZURE_OPENAI_API_KEY`` in the ``api-key`` header,
  ``ANTHROPIC_FOUNDRY_API_KEY`` in ``x-api-key``) wins; without one, Entra
  ID tokens for the provider's scope come from ``DefaultAzureCredential``.

Tokens are fetched and refreshed by one :class:`~elelem.transport.bearer.BearerSigner`
per credential, kept by the catalog across requests, so a conversation
reuses its token until it nears expiry.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any, Protocol
from urllib.parse import quote

import msgspec

from elelem.errors import ConfigError, UnsupportedError
from elelem.providers.cloud_credentials import (
    AzureTokenSource,
    GoogleTokenSource,
    azure_default_credential,
    google_credentials,
)
from elelem.transport.bearer import BearerSigner
from elelem.transport.endpoint import Endpoint, RequestSigner, Route
from elelem.vocabulary import ProviderId
from elelem.wire import EncodedRequest

VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16"
"""The ``anthropic_version`` Claude on Vertex AI takes in the body."""

VERTEX_GLOBAL = "https://aiplatform.googleapis.com"
"""Vertex AI's global endpoint (the built-in base URL of both Vertex providers)."""

PROJECT_ENV = ("GOOGLE_CLOUD_PROJECT", "GOOGLE_VERTEX_PROJECT")
LOCATION_ENV = ("GOOGLE_CLOUD_LOCATION", "GOOGLE_VERTEX_LOCATION")
DEFAULT_LOCATION = "global"
AZURE_ENDPOINT_ENV = ("AZURE_OPENAI_ENDPOINT",)
AZURE_RESOURCE_ENV = ("AZURE_RESOURCE_NAME", "AZURE_OPENAI_RESOURCE")
FOUNDRY_RESOURCE_ENV = ("ANTHROPIC_FOUNDRY_RESOURCE",)


class CloudSpec(Protocol):
    """What a cloud endpoint needs of a :class:`~elelem.providers.ProviderSpec`."""

    @property
    def name(self) -> str:
        """The provider's name."""

    @property
    def shape(self) -> str:
        """The wire shape the cloud serves (``gemini``, ``anthropic_messages``, …)."""

    @property
    def cloud(self) -> str:
        """Which cloud this is (``vertex``, ``azure``, …)."""

    @property
    def base_url(self) -> str:
        """The base URL as configured (it may hold the project and location)."""

    @property
    def project(self) -> str:
        """The cloud project, where the cloud has one."""

    @property
    def location(self) -> str:
        """The cloud region or location."""

    @property
    def token_scope(self) -> str:
        """The OAuth scope a fetched token is asked for."""

    @property
    def auth_header(self) -> str:
        """The header the credential goes in."""

    @property
    def auth_scheme(self) -> str:
        """The scheme before the credential in that header (``Bearer``), or empty."""

    @property
    def headers(self) -> dict[str, str]:
        """Extra headers every request carries."""

    @property
    def override_env(self) -> str:
        """The environment variable that overrides the base URL."""

    def resolve_base_url(self, env: Mapping[str, str]) -> str:
        """The base URL with its project and location filled in from ``env``."""

    def secret_header_values(self) -> tuple[str, ...]:
        """The values of this spec's headers that are secrets (for the redactor)."""


Signers = MutableMapping[tuple[str, ...], tuple[BearerSigner, str | None]]
"""Signers kept across requests, by credential, with the project ADC named."""


# -- routes ------------------------------------------------------------------------


def _model_segment(model: str) -> str:
    # Vertex model ids carry '@' (claude-sonnet-4-5@20250929): kept as is.
    return quote(model, safe="-._~@")


def vertex_gemini_route(prefix: str) -> Route:
    """Gemini API paths (``/v1beta/models/{m}:{method}``) moved under ``prefix``
    (``v1/projects/{p}/locations/{l}``, or ``v1`` in express mode)."""

    def route(encoded: EncodedRequest) -> EncodedRequest:
        path, sep, query = encoded.path.partition("?")
        _, found, rest = path.partition("/models/")
        if not found:
            raise UnsupportedError(f"vertex: no Vertex AI path for {encoded.path!r}")
        new = f"/{prefix}/publishers/google/models/{rest}" + (sep + query if sep else "")
        return msgspec.structs.replace(encoded, path=new)

    return route


def vertex_anthropic_route(prefix: str) -> Route:
    """Messages requests sent as Vertex AI's ``rawPredict`` calls (see the module)."""

    def route(encoded: EncodedRequest) -> EncodedRequest:
        path = encoded.path.rstrip("/")
        body = dict(encoded.body)
        headers = {k: v for k, v in encoded.headers.items() if k.lower() != "anthropic-version"}
        if path.endswith("/messages/count_tokens"):
            target = "count-tokens:rawPredict"
        elif path.endswith("/messages"):
            model = body.pop("model", None)
            if not isinstance(model, str) or not model:
                raise UnsupportedError("vertex-anthropic: the request names no model")
            method = "streamRawPredict" if encoded.stream else "rawPredict"
            target = f"{_model_segment(model)}:{method}"
        else:
            raise UnsupportedError(f"vertex-anthropic: no Vertex AI path for {encoded.path!r}")
        body["anthropic_version"] = VERTEX_ANTHROPIC_VERSION
        return msgspec.structs.replace(
            encoded,
            path=f"/{prefix}/publishers/anthropic/models/{target}",
            body=body,
            headers=headers,
        )

    return route


# -- Vertex AI -----------------------------------------------------------------------


def _first(env: Mapping[str, str], names: tuple[str, ...]) -> str:
    for name in names:
        value = env.get(name, "").strip()
        if value:
            return value
    return ""


def vertex_location(spec: CloudSpec, env: Mapping[str, str]) -> str:
    """The location: ``GOOGLE_CLOUD_LOCATION`` (or ``GOOGLE_VERTEX_LOCATION``),
    else the spec's ``location``, else ``global``."""
    location = _first(env, LOCATION_ENV) or spec.location or DEFAULT_LOCATION
    if not all(c.isalnum() or c == "-" for c in location) or location.startswith("-"):
        raise ConfigError(
            f"provider {spec.name}: the location {location!r} is not a Google Cloud location "
            "name such as us-central1 or global"
        )
    return location


def vertex_base_url(spec: CloudSpec, env: Mapping[str, str], location: str) -> str:
    """The override variable's URL or a config file's ``base_url``, else the
    host of ``location``."""
    chosen = spec.resolve_base_url(env)
    if chosen != VERTEX_GLOBAL:
        return chosen
    if location == "global":
        return VERTEX_GLOBAL
    return f"https://{location}-aiplatform.googleapis.com"


def google_signer(
    spec: CloudSpec, env: Mapping[str, str], signers: Signers, credential: Any = None
) -> tuple[BearerSigner, str | None]:
    """The signer of ``spec``'s Google credentials (``credential`` if given,
    else ADC), made once per credential and kept in ``signers``."""
    where = f"provider {spec.name}: Google credentials"
    if credential is not None:
        key: tuple[str, ...] = ("google", "given", str(id(credential)))
        if key not in signers:
            source = GoogleTokenSource(credential, where)
            signers[key] = (BearerSigner(source, where=where), None)
        return signers[key]
    named = env.get("GOOGLE_APPLICATION_CREDENTIALS", "").strip()
    key = ("google", "adc", named, env.get("CLOUDSDK_CONFIG", ""), env.get("HOME", ""))
    if key not in signers:
        credentials, project, _origin = google_credentials(env, where)
        signers[key] = (BearerSigner(GoogleTokenSource(credentials, where), where=where), project)
    return signers[key]


def vertex_parts(
    spec: CloudSpec,
    env: Mapping[str, str],
    key: str | None,
    signers: Signers,
    credential: Any = None,
) -> tuple[str, Route, BearerSigner | None]:
    """``(base URL, route, signer)`` of a Vertex AI provider: express mode
    with ``key`` (Gemini only), else Google credentials."""
    location = vertex_location(spec, env)
    base = vertex_base_url(spec, env, location)
    gemini = spec.shape == "gemini"
    if key is not None:
        if not gemini:
            raise ConfigError(
                f"provider {spec.name}: Vertex AI express mode API keys serve Gemini only; "
                "use Google credentials (GOOGLE_APPLICATION_CREDENTIALS or gcloud)"
            )
        return base, vertex_gemini_route("v1"), None
    signer, found_project = google_signer(spec, env, signers, credential)
    project = _first(env, PROJECT_ENV) or spec.project or found_project
    if not project:
        raise ConfigError(
            f"provider {spec.name}: no Google Cloud project: set GOOGLE_CLOUD_PROJECT "
            f"or project in [providers.{spec.name}]"
        )
    prefix = f"v1/projects/{quote(project, safe='')}/locations/{location}"
    route = vertex_gemini_route(prefix) if gemini else vertex_anthropic_route(prefix)
    return base, route, signer


def cloud_endpoint(
    spec: CloudSpec,
    env: Mapping[str, str],
    key: str | None,
    signers: Signers,
    credential: Any = None,
) -> Endpoint:
    """The endpoint of a cloud provider (``spec.cloud`` ``vertex`` or
    ``azure``): the API key when there is one, else the cloud's credentials
    (``credential`` if given)."""
    route: Route | None = None
    signer: BearerSigner | None = None
    if spec.cloud == "vertex":
        base, route, signer = vertex_parts(spec, env, key, signers, credential)
    elif spec.cloud == "azure":
        base = azure_base_url(spec, env)
        if key is None:
            signer = azure_signer(spec, signers, credential, env)
    else:
        raise ConfigError(f"provider {spec.name}: unknown cloud {spec.cloud!r} (vertex, azure)")
    return spec_endpoint(spec, base, key, signer, route)


def spec_endpoint(
    spec: CloudSpec,
    base_url: str,
    key: str | None,
    signer: RequestSigner | None,
    route: Route | None = None,
) -> Endpoint:
    """The endpoint of ``spec`` at ``base_url``, authenticated by ``key`` or
    ``signer``, with the spec's own auth header, headers and secrets: what a
    cloud endpoint and a catalog provider's endpoint both are."""
    return Endpoint(
        provider=ProviderId(spec.name),
        base_url=base_url,
        api_key=key,
        auth_header=spec.auth_header,
        auth_scheme=spec.auth_scheme,
        headers=dict(spec.headers),
        signer=signer,
        secrets=spec.secret_header_values(),
        route=route,
    )


# -- Azure ---------------------------------------------------------------------------


def azure_base_url(spec: CloudSpec, env: Mapping[str, str]) -> str:
    """The resource's base URL: the override, else one made from the endpoint
    or resource variables, else the spec's (a config file's) ``base_url``."""
    overridden = spec.resolve_base_url(env)
    if overridden != spec.base_url:
        return overridden
    if spec.shape == "anthropic_messages":
        resource = _first(env, FOUNDRY_RESOURCE_ENV)
        if resource:
            return f"https://{_resource(spec, resource)}.services.ai.azure.com/anthropic"
    else:
        endpoint = _first(env, AZURE_ENDPOINT_ENV)
        if endpoint:
            return endpoint.rstrip("/") + "/openai/v1"
        resource = _first(env, AZURE_RESOURCE_ENV)
        if resource:
            return f"https://{_resource(spec, resource)}.openai.azure.com/openai/v1"
    if "{resource}" not in spec.base_url:
        return spec.base_url
    names = FOUNDRY_RESOURCE_ENV if spec.shape == "anthropic_messages" else AZURE_RESOURCE_ENV
    extra = "" if spec.shape == "anthropic_messages" else "AZURE_OPENAI_ENDPOINT, "
    raise ConfigError(
        f"provider {spec.name}: which Azure resource? set {extra}{' or '.join(names)} "
        f"or {spec.override_env}"
    )


def _resource(spec: CloudSpec, name: str) -> str:
    if not all(c.isalnum() or c == "-" for c in name):
        raise ConfigError(f"provider {spec.name}: {name!r} is not an Azure resource name")
    return name


def azure_signer(
    spec: CloudSpec,
    signers: Signers,
    credential: Any = None,
    env: Mapping[str, str] | None = None,
) -> BearerSigner:
    """The Entra ID signer for ``spec``'s scope (``credential``, else
    ``DefaultAzureCredential`` as ``env`` configures it), made once and kept
    in ``signers``."""
    where = f"provider {spec.name}: Entra ID"
    key = ("azure", spec.token_scope, str(id(credential)) if credential is not None else "")
    if key not in signers:
        found = credential if credential is not None else azure_default_credential(where, env)
        source = AzureTokenSource(found, spec.token_scope, where)
        signers[key] = (BearerSigner(source, where=where), None)
    return signers[key][0]


__all__ = [
    "DEFAULT_LOCATION",
    "LOCATION_ENV",
    "PROJECT_ENV",
    "VERTEX_ANTHROPIC_VERSION",
    "VERTEX_GLOBAL",
    "CloudSpec",
    "Signers",
    "azure_base_url",
    "azure_signer",
    "cloud_endpoint",
    "google_signer",
    "spec_endpoint",
    "vertex_anthropic_route",
    "vertex_base_url",
    "vertex_gemini_route",
    "vertex_location",
    "vertex_parts",
]
