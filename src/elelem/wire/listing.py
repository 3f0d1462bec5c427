"""Model listing as a kind of exchange, types only: which models a provider
says it serves.

A shape package whose wire has a model-list endpoint holds one
:class:`ModelListing` as ``listing.LISTING``, and its ``SHAPE.listing`` is
that value (None for a wire whose list elelem does not ask: Bedrock's is on
another host).  :func:`elelem.providers.listing.list_remote_models` follows
its pages.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec


class RemoteModel(msgspec.Struct, frozen=True):
    """One model a provider says it serves: its id and, where given, a display
    name and the limits it reported (``reported``: fields named as
    :class:`~elelem.providers.capabilities.ModelInfo`'s)."""

    id: str
    name: str | None = None
    reported: dict[str, Any] = msgspec.field(default_factory=dict)


PageReader = Callable[[dict[str, Any]], tuple[list[RemoteModel], dict[str, str] | None]]
"""One page of a model list (its JSON object) -> its models, and the query
that asks for the next page (None on the last)."""


@dataclass(frozen=True)
class ModelListing:
    """How one wire lists models: ``GET`` of ``path`` (relative to the base
    URL) with ``query`` and the ``headers`` the wire adds, each page read by
    ``read`` (a missing field or a value of the wrong type raises
    ``KeyError``/``TypeError``/``AttributeError``: the list is malformed)."""

    path: str
    query: Mapping[str, str]
    headers: Mapping[str, str]
    read: PageReader


__all__ = ["ModelListing", "PageReader", "RemoteModel"]
