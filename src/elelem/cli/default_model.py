"""The model a command uses when none is named: ``$ELELEM_MODEL``, the
config file's ``model``, the one ``elelem models default`` saved, else the
first provider whose key is set."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal, NamedTuple

from elelem.errors import (
    ConfigError,
)
from elelem.home import home_dir
from elelem.providers import Catalog, config_path
from elelem.providers.config import read_config
from elelem.providers.models import DEFAULT_MODELS

TEST_MODEL_NAMES = frozenset({"test", "test:test-model"})
"""What ``-m`` accepts for the test model (:mod:`elelem.cli.testmodel`)."""

TEST_ADDRESS = "test:test-model"
"""The address the test model's turns are recorded under."""


def is_test_model(name: str | None) -> bool:
    """Whether ``-m name`` asks for the test model; here, not beside the
    model in :mod:`elelem.cli.testmodel`, so that asking it does not import
    the test model and its loopback server."""
    return name is not None and name.strip() in TEST_MODEL_NAMES


DEFAULT_MODEL_FILE = "default-model.txt"
"""The file in elelem's home ``elelem models default MODEL`` writes."""


def saved_default_model(env: Mapping[str, str] | None = None) -> str | None:
    """The model ``elelem models default MODEL`` saved, or None."""
    path = home_dir(env) / DEFAULT_MODEL_FILE
    try:
        saved = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    return saved or None


def config_model(env: Mapping[str, str]) -> str | None:
    """The config file's ``model``, or None."""
    path = config_path(env)
    data = read_config(path)
    if data is None:
        return None
    model = data.get("model")
    if model is not None and not isinstance(model, str):
        raise ConfigError(f"{path}: 'model' must be a string like anthropic:claude-sonnet-4-5")
    return model


class CredentialStatus(NamedTuple):
    """How a provider authenticates under an environment (never a secret).

    ``kind`` is ``"key"`` (``source`` says where from: ``"$VAR"`` or
    ``"keys file"``), ``"signing"`` (AWS SigV4 credentials from the
    environment; ``source`` names the key-id variable), ``"cloud"`` (the
    cloud's own credentials; ``source`` is the cloud), ``"none needed"`` or
    ``"missing"``.
    """

    kind: Literal["key", "signing", "cloud", "none needed", "missing"]
    source: str | None = None


def credential_status(catalog: Catalog, name: str, env: Mapping[str, str]) -> CredentialStatus:
    """The one answer to "has provider ``name`` what it needs to send?", read
    by ``elelem providers``, ``elelem keys list`` and the default model: its
    key (the environment, then the keys file, as every request reads it),
    else its cloud's credentials, else AWS signing credentials."""
    spec = catalog.get(name)
    source = catalog.key_source(spec, env)
    if source is not None:
        return CredentialStatus("key", source)
    if spec.cloud:
        return CredentialStatus("cloud", spec.cloud)
    if not spec.key_required:
        return CredentialStatus("none needed")
    if _signing_credentials_set(catalog, name, env):
        return CredentialStatus("signing", "AWS_ACCESS_KEY_ID")
    return CredentialStatus("missing")


def key_is_set(catalog: Catalog, name: str, env: Mapping[str, str]) -> bool:
    """Whether provider ``name`` has its key (or needs none); for a SigV4
    provider (Bedrock), AWS credentials count as its key."""
    return credential_status(catalog, name, env).kind != "missing"


def _signing_credentials_set(catalog: Catalog, name: str, env: Mapping[str, str]) -> bool:
    """Whether provider ``name`` signs with AWS credentials and both halves are set."""
    spec = catalog.get(name)
    return bool(spec.sigv4_service) and all(
        env.get(v, "").strip() for v in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
    )


def default_model(catalog: Catalog, env: Mapping[str, str] | None = None) -> str:
    """The model to use when none is named: ``$ELELEM_MODEL``, else ``model``
    in the config file, else the one ``elelem models default MODEL`` saved,
    else the first provider whose key is set."""
    env = os.environ if env is None else env
    chosen = env.get("ELELEM_MODEL") or config_model(env) or saved_default_model(env)
    if chosen:
        return chosen
    for name, model in DEFAULT_MODELS.items():
        if name in catalog and catalog.get(name).key_required and key_is_set(catalog, name, env):
            return f"{name}:{model}"
    raise ConfigError(
        "no model given and no provider key set: pass -m provider:model "
        "or set a key such as ANTHROPIC_API_KEY (see `elelem providers`)"
    )
