"""Which live protocol a resolved model speaks (the live-session kind).

A wire's live protocol lives in its shape package (``live.py``): OpenAI
Realtime in :mod:`elelem.shapes.openai_responses.live` (OpenAI and Azure
OpenAI, whose targets speak the Responses shape) and Gemini Live in
:mod:`elelem.shapes.gemini.live` (the Gemini API).  Imported on first use,
as shapes are.
"""

from __future__ import annotations

import importlib

from elelem.errors import UnsupportedError
from elelem.providers.catalog import Target
from elelem.wire.live import LiveProtocol

LIVE_PROTOCOLS: dict[str, tuple[str, str]] = {
    "openai_responses": ("elelem.shapes.openai_responses.live", "RealtimeProtocol"),
    "gemini": ("elelem.shapes.gemini.live", "GeminiLiveProtocol"),
}
"""Shape name -> the module and class of its wire's live protocol."""

NO_LIVE_ROUTE = frozenset({"vertex", "vertex-anthropic", "bedrock"})
"""Providers whose endpoints serve the shape but not its live WebSocket here."""


def live_protocol(target: Target) -> LiveProtocol:
    """A fresh live protocol for ``target`` (an UnsupportedError naming the
    provider and the wires that have one, when its wire has none)."""
    where = LIVE_PROTOCOLS.get(target.shape.name)
    if where is None or target.provider in NO_LIVE_ROUTE or target.endpoint.route is not None:
        raise UnsupportedError(
            f"{target.provider} ({target.shape.name}) has no live sessions in elelem; "
            "OpenAI Realtime (openai, azure) and Gemini Live (google) do"
        )
    module, name = where
    protocol: LiveProtocol = getattr(importlib.import_module(module), name)(target.provider)
    return protocol


__all__ = ["LIVE_PROTOCOLS", "live_protocol"]
