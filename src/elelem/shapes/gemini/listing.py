"""Gemini's model list: ``GET /v1beta/models`` (``pageSize`` up to 1000),
paged by ``pageToken`` while ``nextPageToken`` is given; each entry a
``Model`` resource, its ``name`` without the ``models/`` prefix as the id."""

from __future__ import annotations

from typing import Any

from elelem.shapes.listing import known, positive_int
from elelem.wire.listing import ModelListing, RemoteModel


def limits(entry: dict[str, Any]) -> dict[str, Any]:
    """What a Gemini ``Model`` resource (the same in the list as from
    ``models.get``) says of its limits."""
    thinking = entry.get("thinking")
    return {
        "context_window": positive_int(entry.get("inputTokenLimit")),
        "max_output_tokens": positive_int(entry.get("outputTokenLimit")),
        "reasoning": thinking if isinstance(thinking, bool) else None,
    }


def read_page(page: dict[str, Any]) -> tuple[list[RemoteModel], dict[str, str] | None]:
    """One page of the list, and the query of the next."""
    models = [
        RemoteModel(str(m["name"]).removeprefix("models/"), m.get("displayName"), known(limits(m)))
        for m in page.get("models", [])
    ]
    token = page.get("nextPageToken")
    return models, ({"pageToken": str(token)} if token else None)


LISTING = ModelListing("v1beta/models", {"pageSize": "1000"}, {}, read_page)
"""How the Gemini wire lists models."""

__all__ = ["LISTING", "limits", "read_page"]
