"""Cloud credentials as token sources: Google ADC and Microsoft Entra ID.

Both libraries are optional extras, imported on first use: ``google-auth``
(``pip install 'elelem[google]'``) and ``azure-identity``
(``pip install 'elelem[azure]'``).  A missing one is a
:class:`~elelem.errors.ConfigError` naming the extra.

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
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import warnings
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from elelem.errors import AuthenticationError, ConfigError, TransportError, install_line

GOOGLE_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
"""The OAuth scope Vertex AI's tokens are asked for."""

AZURE_OPENAI_SCOPE = "https://cognitiveservices.azure.com/.default"
"""The Entra ID scope of Azure OpenAI (and Foundry's OpenAI-style models)."""

FOUNDRY_SCOPE = "https://ai.azure.com/.default"
"""The Entra ID scope of Claude in Microsoft Foundry."""

_EXTRAS = {"google": "google-auth", "azure": "azure-identity"}


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

    def fetch(self) -> tuple[str, datetime | None]:
        """Refresh the credentials (blocking) and return the new token and expiry."""
        exceptions = _module("google.auth.exceptions", "google", self._where)
        transport = _module("google.auth.transport.requests", "google", self._where)
        try:
            self.credentials.refresh(transport.Request())
        except exceptions.RefreshError as exc:
            raise AuthenticationError(
                f"{self._where}: the access token could not be refreshed: {exc}",
                retryable=bool(getattr(exc, "retryable", False)),
            ) from None
        except exceptions.TransportError as exc:
            raise TransportError(
                f"{self._where}: the token endpoint could not be reached: {exc}"
            ) from None
        return str(self.credentials.token or ""), self.credentials.expiry

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
    if not isinstance(info, dict):
        raise ConfigError(f"{where}: the credentials file {path} is not a JSON object")
    kind = info.get("type")
    project = info.get("project_id") or info.get("quota_project_id")
    try:
        if kind == "authorized_user":
            module = _module("google.oauth2.credentials", "google", where)
            credentials = module.Credentials.from_authorized_user_info(info, [GOOGLE_SCOPE])
            token_uri = info.get("token_uri")
            if isinstance(token_uri, str) and token_uri:
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
    except ValueError as exc:  # google-auth's DefaultCredentialsError is a ValueError
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
        try:
            token = self.credential.get_token(self.scope)
        except failures as exc:
            raise AuthenticationError(f"{self._where}: no token for {self.scope}: {exc}") from None
        expires = getattr(token, "expires_on", None)
        expiry = datetime.fromtimestamp(expires, UTC) if isinstance(expires, int | float) else None
        return str(getattr(token, "token", "") or ""), expiry

    def secrets(self) -> tuple[str, ...]:
        """Nothing beyond the tokens: the credential keeps its own secrets."""
        return ()

    def __repr__(self) -> str:
        return f"AzureTokenSource({type(self.credential).__name__}, scope={self.scope!r})"


def azure_default_credential(where: str) -> Any:
    """``azure.identity.DefaultAzureCredential()`` (environment, workload
    identity, managed identity, Azure CLI, …)."""
    identity = _module("azure.identity", "azure", where)
    # azure-identity logs each failed attempt as a warning; with no handler
    # configured Python prints it on stderr, beside the typed error that
    # already says the same.  A handler of the caller's still gets them.
    logging.getLogger("azure.identity").addHandler(logging.NullHandler())
    return identity.DefaultAzureCredential()


__all__ = [
    "AZURE_OPENAI_SCOPE",
    "FOUNDRY_SCOPE",
    "GOOGLE_SCOPE",
    "AzureTokenSource",
    "GoogleTokenSource",
    "azure_default_credential",
    "google_credentials",
]
