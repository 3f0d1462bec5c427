"""Anthropic's model list: ``GET /v1/models`` (``limit`` up to 1000), paged
by ``after_id`` while ``has_more``; each entry ``{"id", "display_name", …}``."""

from __future__ import annotations

from typing import Any

from elelem.wire.listing import ModelListing, RemoteModel


def read_page(page: dict[str, Any]) -> tuple[list[RemoteModel], dict[str, str] | None]:
    """One page of the list, and the query of the next."""
    models = [RemoteModel(m["id"], m.get("display_name")) for m in page.get("data", [])]
    if page.get("has_more") and page.get("last_id"):
        return models, {"after_id": str(page["last_id"])}
    return models, None


LISTING = ModelListing(
    "v1/models", {"limit": "1000"}, {"anthropic-version": "2023-06-01"}, read_page
)
"""How the Messages wire lists models."""

__all__ = ["LISTING", "read_page"]
