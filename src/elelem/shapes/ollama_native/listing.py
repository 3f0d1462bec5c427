"""Ollama's model list: ``GET /api/tags``, one page of ``models``, each
``{"name", "model", …}`` (the ``model`` field, else the name, is the id)."""

from __future__ import annotations

from typing import Any

from elelem.wire.listing import ModelListing, RemoteModel


def read_page(page: dict[str, Any]) -> tuple[list[RemoteModel], dict[str, str] | None]:
    """The one page of the list."""
    return [RemoteModel(m.get("model") or m["name"]) for m in page.get("models", [])], None


LISTING = ModelListing("api/tags", {}, {}, read_page)
"""How Ollama's native wire lists models."""

__all__ = ["LISTING", "read_page"]
