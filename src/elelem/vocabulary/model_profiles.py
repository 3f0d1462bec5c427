"""Model-family profiles: registered like providers, found by one lookup.

A :class:`~elelem.vocabulary.provider_record.ModelProfile` registered with
:func:`register_model_profile` holds a family's facts (limits, modalities,
capabilities) and conventions, keyed by its family id; a provider record's
own ``profiles`` hold what differs for that provider's models.
:func:`model_profile` is the one lookup: for a provider and a model id, the
family's registered profile with the provider's profile of the model merged
over it (its conventions over the family's, and its facts where it names
the family exactly).  The chat dialect puts the result's conventions over
the provider's (:func:`elelem.shapes.openai_chat.dialect_for`); the model
catalog reads its facts (:mod:`elelem.providers.capabilities`).
"""

from __future__ import annotations

import re
import threading

import msgspec

from elelem.errors import RegistryError
from elelem.vocabulary.builtin_profiles import BUILTIN_PROFILES
from elelem.vocabulary.provider_record import FACTS, ModelProfile, profile_problems
from elelem.vocabulary.registry import provider_record

_lock = threading.Lock()
_profiles: dict[str, ModelProfile] = {}


def register_model_profile(profile: ModelProfile) -> None:
    """Register ``profile`` under its family id (``prefix``).

    The same profile again is a no-op; another under a taken id, or one
    whose fields are not what they must be
    (:func:`~elelem.vocabulary.provider_record.profile_problems`), is a
    :class:`RegistryError` naming what is wrong.
    """
    if not isinstance(profile, ModelProfile):
        raise RegistryError(f"a model profile must be a ModelProfile, not {type(profile).__name__}")
    problems = profile_problems(profile)
    if problems:
        raise RegistryError(f"model profile {profile.prefix!r}: " + "; ".join(problems))
    with _lock:
        existing = _profiles.get(profile.prefix)
        if existing is not None and existing != profile:
            raise RegistryError(f"model profile {profile.prefix!r} is already registered")
        _profiles[profile.prefix] = profile


def model_profiles() -> tuple[ModelProfile, ...]:
    """Every registered family profile, the built-ins first."""
    return tuple(_profiles.values())


_DATE = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")
_BEDROCK = re.compile(r"^(?:(?:global|us|eu|apac|jp|au)\.)?anthropic\.(.+?)(?:-v\d+(?::\d+)?)?$")
_ALIASES = {
    "claude-3-7-sonnet-latest": "claude-3-7-sonnet",
    "claude-3-5-haiku-latest": "claude-3-5-haiku",
    "claude-3-5-sonnet-latest": "claude-3-5-sonnet",
    "claude-sonnet-4": "claude-sonnet-4-0",
    "claude-opus-4": "claude-opus-4-0",
}


def family_id(model: str) -> str | None:
    """The id of the registered family of ``model``: itself, or with a
    cloud's prefix, a ``@version`` or a date removed
    (``claude-sonnet-4-5@20250929`` on Vertex AI,
    ``global.anthropic.claude-sonnet-4-5-20250929-v1:0`` on Bedrock,
    ``openai/gpt-5-mini`` on a gateway); None when no profile names it."""
    text = model.strip().lower().removeprefix("models/")
    candidates = [text]
    bedrock = _BEDROCK.match(text)
    if bedrock:
        candidates.append(bedrock.group(1))
    if "/" in text:
        # A gateway's vendor/model, or a host's accounts/…/models/model.
        candidates.append(text.rsplit("/", 1)[1])
    for item in list(candidates):
        base = item.partition("@")[0]
        candidates.append(base)
        candidates.append(_DATE.sub("", base))
    for item in candidates:
        item = _ALIASES.get(item, item)
        if item in _profiles:
            return item
    return None


def model_profile(provider: str, model: str) -> ModelProfile:
    """The profile of ``model`` served by ``provider``: its family's
    registered profile (none: an empty one named by the model id), with the
    provider record's profile of the model (the longest prefix of the id)
    merged over it: that profile's conventions win, and its facts win when
    its prefix is the family's id.  Unknown stays None."""
    family = family_id(model)
    base = _profiles.get(family) if family is not None else None
    record = provider_record(provider)
    own = record.profile_for(model) if record is not None else None
    if own is None:
        return base if base is not None else ModelProfile(model)
    if base is None:
        return own
    facts = {}
    if own.prefix == family:
        facts = {name: getattr(own, name) for name in FACTS if getattr(own, name) is not None}
    return msgspec.structs.replace(
        base, conventions={**base.conventions, **own.conventions}, **facts
    )


for _profile in BUILTIN_PROFILES:
    register_model_profile(_profile)

__all__ = ["family_id", "model_profile", "model_profiles", "register_model_profile"]
