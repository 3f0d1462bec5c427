"""What the wires share about listing models: the reading of reported limits,
and OpenAI's ``GET {base}/models``, which every OpenAI-compatible server
answers (the Responses and Chat Completions packages both list through it;
OpenRouter adds each model's limits and modalities to its entries)."""

from __future__ import annotations

from typing import Any

from elelem.wire.listing import ModelListing, RemoteModel


def positive_int(value: object) -> int | None:
    """``value`` when it is a positive int (not a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def known(limits: dict[str, Any]) -> dict[str, Any]:
    """The limits a list entry did report (None: it said nothing)."""
    return {k: v for k, v in limits.items() if v is not None}


_OPENROUTER_MODALITIES = {"file": "pdf"}


def _modalities(value: object) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        return None
    names = [v for v in value if isinstance(v, str)]
    if len(names) != len(value):
        return None
    return tuple(_OPENROUTER_MODALITIES.get(v, v) for v in names)


def _table(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def openrouter_limits(entry: dict[str, Any]) -> dict[str, Any]:
    """What an OpenRouter ``/models`` entry says (other OpenAI-style lists
    carry none of these fields, and get nothing)."""
    top = _table(entry.get("top_provider"))
    arch = _table(entry.get("architecture"))
    params = entry.get("supported_parameters")
    supported = set(params) if isinstance(params, list) else None
    return {
        "context_window": positive_int(entry.get("context_length")),
        "max_output_tokens": positive_int(top.get("max_completion_tokens")),
        "input_modalities": _modalities(arch.get("input_modalities")),
        "output_modalities": _modalities(arch.get("output_modalities")),
        "tools": "tools" in supported if supported is not None else None,
        "reasoning": "reasoning" in supported if supported is not None else None,
        "structured_output": "structured_outputs" in supported if supported is not None else None,
    }


def openai_page(page: dict[str, Any]) -> tuple[list[RemoteModel], dict[str, str] | None]:
    """OpenAI's model list: one page, ``data`` of ``{"id", …}``."""
    models = [
        RemoteModel(m["id"], m.get("name"), known(openrouter_limits(m)))
        for m in page.get("data", [])
    ]
    return models, None


OPENAI_MODELS = ModelListing("models", {}, {}, openai_page)
"""OpenAI's ``GET {base}/models``."""

__all__ = ["OPENAI_MODELS", "known", "openai_page", "openrouter_limits", "positive_int"]
