"""What a model can take: its limits and capabilities (``elelem models --json``).

:func:`model_info` answers, for a provider and a model id, a
:class:`ModelInfo`: the context window, the most output tokens, the input
and output modalities, whether it takes tools, reasons, and follows a JSON
schema, and whether it is deprecated.  Each field comes from the best
source that has it, named in ``sources``:

1. ``remote`` — what the provider itself reported (``elelem models
   --remote``: Gemini's ``models`` entries carry ``inputTokenLimit``,
   ``outputTokenLimit`` and ``thinking``; OpenRouter's ``/models``
   ``context_length``, ``architecture`` and ``supported_parameters``),
   merged by :func:`with_remote`;
2. ``genai-prices`` — the maintained price database elelem already uses
   knows most context windows and deprecations;
3. ``elelem`` — the model-family profiles (:mod:`elelem.vocabulary.builtin_profiles`,
   and any a plugin registers), through the one lookup
   :func:`~elelem.vocabulary.model_profiles.model_profile`, for the rest.

A field no source knows is None ("unknown"), never a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import msgspec

from elelem.providers.pricing import PROVIDER_IDS
from elelem.vocabulary.model_profiles import family_id, model_profile

CATALOG_SOURCE = "genai-prices"


class ModelInfo(msgspec.Struct, frozen=True, omit_defaults=True):
    """One model's limits and capabilities (None: unknown).

    ``input_modalities`` and ``output_modalities`` name ``text``, ``image``,
    ``pdf``, ``audio``, ``video``; ``sources`` maps each known field to
    where it came from (``remote``, ``genai-prices``, ``elelem``).
    """

    provider: str
    model: str
    context_window: int | None = None
    max_output_tokens: int | None = None
    input_modalities: tuple[str, ...] | None = None
    output_modalities: tuple[str, ...] | None = None
    tools: bool | None = None
    reasoning: bool | None = None
    structured_output: bool | None = None
    deprecated: bool | None = None
    sources: dict[str, str] = msgspec.field(default_factory=dict)

    @property
    def known(self) -> bool:
        """Whether any source knew the model at all."""
        return bool(self.sources)


@cache
def _snapshot() -> Any:
    # Deferred: the price tables take most of a second to load.
    from genai_prices.data_snapshot import get_snapshot

    return get_snapshot()


def database_entry(provider: str, model: str) -> tuple[int | None, bool | None] | None:
    """``(context window, deprecated)`` from genai-prices, or None when it
    does not list the model: under this provider, else (a gateway or host
    serving another maker's model) under the maker the database finds."""
    family = family_id(model)
    refs = [r for r in dict.fromkeys((model, model.partition("@")[0], family or "")) if r]
    provider_id = PROVIDER_IDS.get(provider)
    tries: list[tuple[str, str | None]] = []
    if provider_id is not None:
        tries = [(r, provider_id) for r in refs]
    if family is not None:
        tries.append((family, None))
    for ref, where in tries:
        try:
            _, info = _snapshot().find_provider_model(ref, None, where, None)
        except LookupError:
            continue
        return info.context_window, info.deprecated
    return None


def model_info(provider: str, model: str) -> ModelInfo:
    """What elelem knows offline of ``model`` at ``provider`` (see the module)."""
    fields: dict[str, Any] = {}
    sources: dict[str, str] = {}

    def put(name: str, value: Any, source: str) -> None:
        if value is not None and name not in fields:
            fields[name] = value
            sources[name] = source

    found = database_entry(provider, model)
    if found is not None:
        put("context_window", found[0], CATALOG_SOURCE)
        put("deprecated", found[1], CATALOG_SOURCE)
    profile = model_profile(provider, model)  # unknown facts are None: put skips them
    put("context_window", profile.context_window, "elelem")
    put("max_output_tokens", profile.max_output_tokens, "elelem")
    put("input_modalities", profile.input_modalities, "elelem")
    if profile.input_modalities is not None:
        put("output_modalities", ("text",), "elelem")
    put("tools", profile.tools, "elelem")
    put("reasoning", profile.reasoning, "elelem")
    put("structured_output", profile.structured_output, "elelem")
    put("deprecated", profile.deprecated, "elelem")
    if sources and "deprecated" not in fields:
        fields["deprecated"] = False
        sources["deprecated"] = sources.get("context_window", "elelem")
    return ModelInfo(provider, model, **fields, sources=sources)


def with_remote(info: ModelInfo, reported: Mapping[str, Any]) -> ModelInfo:
    """``info`` with what the provider reported (non-None fields of
    ``reported``, named as :class:`ModelInfo`'s) taking precedence."""
    changes = {k: v for k, v in reported.items() if v is not None and k in _FIELDS}
    if not changes:
        return info
    sources = {**info.sources, **dict.fromkeys(changes, "remote")}
    return msgspec.structs.replace(info, **changes, sources=sources)


_FIELDS = frozenset(ModelInfo.__struct_fields__) - {"provider", "model", "sources"}


def as_record(info: ModelInfo) -> dict[str, Any]:
    """``info`` as a JSON object with every field present (unknown as null)."""
    record: dict[str, Any] = {name: getattr(info, name) for name in ModelInfo.__struct_fields__}
    record["input_modalities"] = list(info.input_modalities or ()) or None
    record["output_modalities"] = list(info.output_modalities or ()) or None
    return record


__all__ = [
    "CATALOG_SOURCE",
    "ModelInfo",
    "as_record",
    "database_entry",
    "model_info",
    "with_remote",
]
