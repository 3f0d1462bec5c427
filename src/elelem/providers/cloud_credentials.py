"""Cloud credentials as token sources: Google ADC and Microsoft Entra ID.

Both libraries are optional extras, imported on first use: ``google-auth``
(the ``google`` extra) and ``azure-identity`` (the ``azure`` extra).  A
missing one is a :class:`~elelem.errors.ConfigError` naming the extra and
the command that installs it (:func:`~elelem.errors.install_line`).

**Google Application Default Credentials**, in the order Google's own
libraries look, read from the ``env`` given (not only ``os.environ``):

1. the file ``$GOOGLE_APPLICATION_CREDENTIALS`` names;
2. gcloud's file ``application_default_credentials.json`` in
   ``$CLOUDSDK_CONFIG`` (else ``~/.config/gcloud``);
3. whatever ``google.auth.default()`` finds (the metadata server of a
   Google Cloud VM, Cloud Run or GKE; App Engine).

A service-account file and an authorized-user (``gcloud auth
application-default login``) file both honour their own ``token_uri``;
google-auth replaces an authorized-user file's with Google's, which would
send its refresh token past a proxy or stand-in the file names.

**Entra ID**: ``azure.identity.DefaultAzureCredential`` unless a credential
object is given (anything with ``get_token(scope)`` returning an object
with ``token`` and ``expires_on``).

Failures are typed: a credential the server refuses is an
:class:`~elelem.errors.AuthenticationError`, a network failure on the way to
the token endpoint a retryable :class:`~elelem.errors.TransportError`.

Token requests go through :func:`token_session`: each answer is read within
the request's deadline (:func:`~elelem.transport.bearer.fetch_deadline`, else
:data:`FETCH_TIMEOUT`) and up to :data:`MAX_TOKEN_ANSWER` bytes, and an
answer that is no token (not JSON, a string or a list, an expiry that is no
number or out of range, JSON nested past the parser's depth, a token that is
not a string) is an :class:`~elelem.errors.AuthenticationError` naming the
token endpoint, never an exception of the credential library's own.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import threading
import time
import warnings
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from elelem.errors import AuthenticationError, ConfigError, TransportError, install_line
from elelem.transport.bearer import fetch_deadline

GOOGLE_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
"""The OAuth scope Vertex AI's tokens are asked for."""

AZURE_SECRET_ENV = (
    "AZURE_CLIENT_SECRET",
    "AZURE_CLIENT_CERTIFICATE_PASSWORD",
    "AZURE_PASSWORD",
    "IDENTITY_HEADER",
    "MSI_SECRET",
)
"""The variables azure-identity reads secrets from (EnvironmentCredential's
client secret, certificate password and password; the managed-identity
header of App Service and Functions): never shown, whatever echoes them."""

_EXTRAS = {"google": "google-auth", "azure": "azure-identity"}


MAX_TOKEN_ANSWER = 1 << 20
"""The most bytes a token endpoint's answer may hold (a token is a few KB)."""

FETCH_TIMEOUT = 60.0
"""Seconds a token request may take when no request deadline bounds it."""

NOT_A_TOKEN = (ValueError, TypeError, LookupError, AttributeError, OverflowError, RecursionError)
"""What the credential libraries raise on an answer that is no token (not
JSON, a string or list where an object belongs, an expiry out of range,
nesting past the parser's depth): caught only around their parse of it."""


def endpoint_name(url: str) -> str:
    """A token endpoint as errors name it: its URL without the query."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


_asked = threading.local()


def last_token_endpoint() -> str | None:
    """The token endpoint this thread's last token request went to (what an
    error raised after its answer names)."""
    endpoint: str | None = getattr(_asked, "endpoint", None)
    return endpoint


def token_session(where: str) -> Any:
    """A ``requests.Session`` (what google-auth and azure-core send with)
    whose every answer is read whole within the fetch's deadline and up to
    :data:`MAX_TOKEN_ANSWER` bytes, else an
    :class:`~elelem.errors.AuthenticationError` naming the endpoint."""
    requests = _module("requests", "google", where)
    adapters = _module("requests.adapters", "google", where)

    class BoundedAdapter(adapters.HTTPAdapter):  # type: ignore[misc, name-defined]
        def send(self, request: Any, stream: bool = False, timeout: Any = None, **kw: Any) -> Any:
            endpoint = endpoint_name(str(request.url))
            _asked.endpoint = endpoint
            deadline = fetch_deadline()
            if deadline is None:
                deadline = time.monotonic() + FETCH_TIMEOUT
            budget = deadline - time.monotonic()
            if budget <= 0:
                raise _late(where, endpoint)
            try:
                response = super().send(request, stream=True, timeout=(budget, budget), **kw)
            except requests.exceptions.ReadTimeout:
                raise _late(where, endpoint) from None
            try:
                response._content = _read_bounded(response.raw, deadline, where, endpoint)
                response._content_consumed = True
            finally:
                response.close()
            return response

    session = requests.Session()
    session.mount("http://", BoundedAdapter())
    session.mount("https://", BoundedAdapter())
    return session


def _late(where: str, endpoint: str) -> AuthenticationError:
    return AuthenticationError(
        f"{where}: the token endpoint {endpoint} did not answer within the request's deadline"
    )


def _read_bounded(raw: Any, deadline: float, where: str, endpoint: str) -> bytes:
    body = bytearray()
    while True:
        if time.monotonic() > deadline:
            raise _late(where, endpoint)
        # read1: what has arrived, so a server dripping bytes meets the deadline.
        chunk = raw.read1(65536, decode_content=True)
        if not chunk:
            return bytes(body)
        body += chunk
        if len(body) > MAX_TOKEN_ANSWER:
            raise AuthenticationError(
                f"{where}: the token endpoint {endpoint} answered more than "
                f"{MAX_TOKEN_ANSWER} bytes"
            )


def _checked(token: object, where: str) -> str:
    if isinstance(token, str):
        return token
    endpoint = last_token_endpoint() or "of the credentials"
    raise AuthenticationError(
        f"{where}: the token endpoint {endpoint} gave a token that is not a string "
        f"({type(token).__name__})"
    )


def _module(name: str, extra: str, where: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError:
        raise ConfigError(
            f"{where}: {_EXTRAS[extra]} is not installed: {install_line(extra)}"
        ) from None


class GoogleTokenSource:
    """Access tokens of a ``google.auth`` credentials object, refreshed on ``fetch``."""

    def __init__(self, credentials: Any, where: str) -> None:
        self.credentials = credentials
        self._where = where
        self._session: Any = None

    def fetch(self) -> tuple[str, datetime | None]:
        """Refresh the credentials (blocking) and return the new token and expiry."""
        exceptions = _module("google.auth.exceptions", "google", self._where)
        transport = _module("google.auth.transport.requests", "google", self._where)
        if self._session is None:
            self._session = token_session(self._where)
        _asked.endpoint = None
        try:
            self.credentials.refresh(transport.Request(session=self._session))
        except NOT_A_TOKEN as exc:
            endpoint = last_token_endpoint() or "of the credentials"
            raise AuthenticationError(
                f"{self._where}: the token endpoint {endpoint} answered no usable token "
                f"({type(exc).__name__}: {str(exc)[:200]})"
            ) from None
        except exceptions.RefreshError as exc:
            raise AuthenticationError(
                f"{self._where}: the access token could not be refreshed: {exc}",
                retryable=bool(getattr(exc, "retryable", False)),
            ) from None
        except exceptions.TransportError as exc:
            raise TransportError(
                f"{self._where}: the token endpoint could not be reached: {exc}"
            ) from None
        return _checked(self.credentials.token, self._where), self.credentials.expiry

    def secrets(self) -> tuple[str, ...]:
        """The refresh token and client secret an authorized-user file holds."""
        found = (
            getattr(self.credentials, "refresh_token", None),
            getattr(self.credentials, "client_secret", None),
        )
        return tuple(v for v in found if isinstance(v, str) and v)

    def __repr__(self) -> str:
        return f"GoogleTokenSource({type(self.credentials).__name__})"


def google_credentials(env: Mapping[str, str], where: str) -> tuple[Any, str | None, str]:
    """Application Default Credentials: ``(credentials, project or None, origin)``,
    ``origin`` naming where they were found (a file, or ``google.auth.default``)."""
    named = env.get("GOOGLE_APPLICATION_CREDENTIALS", "").strip()
    if named:
        return (*_from_file(Path(named), where, "GOOGLE_APPLICATION_CREDENTIALS"), named)
    well_known = _gcloud_file(env)
    if well_known is not None and well_known.is_file():
        return (*_from_file(well_known, where, "gcloud"), str(well_known))
    auth = _module("google.auth", "google", where)
    exceptions = _module("google.auth.exceptions", "google", where)
    try:
        credentials, project = auth.default(scopes=[GOOGLE_SCOPE])
    except exceptions.DefaultCredentialsError as exc:
        raise ConfigError(
            f"{where}: none found: set GOOGLE_APPLICATION_CREDENTIALS to a "
            f"service-account file, run `gcloud auth application-default login`, or run "
            f"on Google Cloud ({exc})"
        ) from None
    return credentials, project, "google.auth.default"


def _gcloud_file(env: Mapping[str, str]) -> Path | None:
    config = env.get("CLOUDSDK_CONFIG", "").strip()
    if config:
        return Path(config) / "application_default_credentials.json"
    home = env.get("HOME", "").strip() or os.path.expanduser("~")
    if not home or home == "~":
        return None
    return Path(home) / ".config" / "gcloud" / "application_default_credentials.json"


def _from_file(path: Path, where: str, origin: str) -> tuple[Any, str | None]:
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(
            f"{where}: cannot read the credentials file {path} ({origin}): {exc.strerror or exc}"
        ) from None
    except (ValueError, UnicodeDecodeError):
        raise ConfigError(f"{where}: the credentials file {path} is not JSON") from None
    except RecursionError:
        raise ConfigError(f"{where}: the credentials file {path} is nested too deeply") from None
    if not isinstance(info, dict):
        raise ConfigError(f"{where}: the credentials file {path} is not a JSON object")
    kind = info.get("type")
    project = info.get("project_id") or info.get("quota_project_id")
    token_uri = info.get("token_uri")
    if token_uri is not None and not (isinstance(token_uri, str) and token_uri):
        # Left out, google-auth would send the refresh token to Google's own
        # endpoint instead of the one the file names.
        raise ConfigError(f"{where}: the credentials file {path} has a token_uri that is no URL")
    exceptions = _module("google.auth.exceptions", "google", where)
    try:
        if kind == "authorized_user":
            module = _module("google.oauth2.credentials", "google", where)
            credentials = module.Credentials.from_authorized_user_info(info, [GOOGLE_SCOPE])
            if token_uri is not None:
                credentials = credentials.with_token_uri(token_uri)
            return credentials, project if isinstance(project, str) else None
        if kind == "service_account":
            module = _module("google.oauth2.service_account", "google", where)
            credentials = module.Credentials.from_service_account_info(info, scopes=[GOOGLE_SCOPE])
            return credentials, project if isinstance(project, str) else None
        auth = _module("google.auth", "google", where)
        with warnings.catch_warnings():
            # The user named this file as their own ADC: the warning about
            # loading configurations of unknown origin does not apply.
            warnings.simplefilter("ignore", DeprecationWarning)
            credentials, found = auth.load_credentials_from_dict(info, scopes=[GOOGLE_SCOPE])
    except (ValueError, TypeError, exceptions.GoogleAuthError) as exc:
        # A file google-auth cannot make credentials of (no type, an unknown
        # one, a key that is no key, a field of the wrong type).
        raise ConfigError(f"{where}: the credentials file {path} is not usable: {exc}") from None
    return credentials, found or (project if isinstance(project, str) else None)


class AzureTokenSource:
    """Entra ID tokens for ``scope`` from an Azure ``TokenCredential``."""

    def __init__(self, credential: Any, scope: str, where: str) -> None:
        self.credential = credential
        self.scope = scope
        self._where = where

    def fetch(self) -> tuple[str, datetime | None]:
        """A token for the scope (the credential caches and refreshes on its side too)."""
        failures: tuple[type[BaseException], ...] = ()
        try:
            core = importlib.import_module("azure.core.exceptions")
        except ImportError:
            core = None  # a credential object that is not azure-identity's
        if core is not None:
            failures = (core.ClientAuthenticationError,)
        _asked.endpoint = None
        try:
            token = self.credential.get_token(self.scope)
        except failures as exc:
            endpoint = last_token_endpoint()
            at = f" from the token endpoint {endpoint}" if endpoint else ""
            raise AuthenticationError(
                f"{self._where}: no token for {self.scope}{at}: {exc}"
            ) from None
        expires = getattr(token, "expires_on", None)
        expiry = None
        if isinstance(expires, int | float):
            try:
                expiry = datetime.fromtimestamp(expires, UTC)
            except (OverflowError, ValueError, OSError):
                raise AuthenticationError(
                    f"{self._where}: the token for {self.scope} expires at {expires!r}, "
                    "which is no time"
                ) from None
        return _checked(getattr(token, "token", None), self._where), expiry

    def secrets(self) -> tuple[str, ...]:
        """The secrets azure-identity reads from the environment
        (:data:`AZURE_SECRET_ENV`): a managed-identity endpoint or a token
        service may echo them in an error."""
        found = (os.environ.get(name, "").strip() for name in AZURE_SECRET_ENV)
        return tuple(value for value in found if value)

    def __repr__(self) -> str:
        return f"AzureTokenSource({type(self.credential).__name__}, scope={self.scope!r})"


AZURE_DISCOVERY_ENV = "ELELEM_AZURE_INSTANCE_DISCOVERY"
"""``0`` turns off MSAL's instance discovery: an authority host of a private
cloud (``AZURE_AUTHORITY_HOST``: Azure Stack, a stand-in) is then trusted as
given, not first looked up at ``login.microsoftonline.com`` (which a
disconnected cloud cannot reach).  azure-identity reads no variable for it
(``disable_instance_discovery`` is a keyword of its credentials)."""

_SWITCH = {"0": False, "false": False, "no": False, "off": False,
           "1": True, "true": True, "yes": True, "on": True}  # fmt: skip


def instance_discovery(env: Mapping[str, str], where: str) -> bool:
    """Whether MSAL looks the authority host up first (:data:`AZURE_DISCOVERY_ENV`,
    on unless ``0``); a value that is no switch is a
    :class:`~elelem.errors.ConfigError` naming the variable."""
    value = env.get(AZURE_DISCOVERY_ENV, "").strip().lower()
    if not value:
        return True
    if value not in _SWITCH:
        raise ConfigError(f"{where}: ${AZURE_DISCOVERY_ENV} is 0 or 1, not {value!r}")
    return _SWITCH[value]


def azure_default_credential(where: str, env: Mapping[str, str] | None = None) -> Any:
    """``azure.identity.DefaultAzureCredential()`` (environment, workload
    identity, managed identity, Azure CLI, …); ``env`` says whether MSAL's
    instance discovery runs (:data:`AZURE_DISCOVERY_ENV`)."""
    discovery = instance_discovery(env or {}, where)
    identity = _module("azure.identity", "azure", where)
    # azure-identity logs each failed attempt as a warning; with no handler
    # configured Python prints it on stderr, beside the typed error that
    # already says the same.  A handler of the caller's still gets them.
    logging.getLogger("azure.identity").addHandler(logging.NullHandler())
    # Every token request read within the fetch's deadline and size bound.
    try:
        return identity.DefaultAzureCredential(
            session=token_session(where),
            session_owner=False,
            disable_instance_discovery=not discovery,
        )
    except ValueError as exc:
        # A variable azure-identity refuses (an empty AZURE_CLIENT_ID, a
        # tenant id that is none): its own words, as a configuration error.
        raise ConfigError(f"{where}: {exc}") from None


__all__ = [
    "AZURE_DISCOVERY_ENV",
    "AZURE_SECRET_ENV",
    "FETCH_TIMEOUT",
    "GOOGLE_SCOPE",
    "MAX_TOKEN_ANSWER",
    "NOT_A_TOKEN",
    "AzureTokenSource",
    "GoogleTokenSource",
    "azure_default_credential",
    "endpoint_name",
    "google_credentials",
    "instance_discovery",
    "last_token_endpoint",
    "token_session",
]
