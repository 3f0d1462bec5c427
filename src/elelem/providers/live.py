"""Which live protocol a resolved model speaks (the live-session kind).

A wire's live protocol lives in its shape package (``live.py``): OpenAI
Realtime in :mod:`elelem.shapes.openai_responses.live` (OpenAI and Azure
OpenAI, whose targets speak the Responses shape) and Gemini Live in
:mod:`elelem.shapes.gemini.live` (the Gemini API, and Vertex AI with its
Google credentials: its own path, the model as a resource name).  Imported on first use,
as shapes are.
"""

from __future__ import annotations

import importlib

from elelem.errors import UnsupportedError
from elelem.providers.catalog import Target
from elelem.wire import EncodedRequest
from elelem.wire.live import LiveProtocol

LIVE_PROTOCOLS: dict[str, tuple[str, str]] = {
    "openai_responses": ("elelem.shapes.openai_responses.live", "RealtimeProtocol"),
    "gemini": ("elelem.shapes.gemini.live", "GeminiLiveProtocol"),
}
"""Shape name -> the module and class of its wire's live protocol."""

VERTEX_PATH = "/ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent"
"""Gemini Live's WebSocket path on Vertex AI (the ``google-genai`` SDK's default)."""


def live_protocol(target: Target) -> LiveProtocol:
    """A fresh live protocol for ``target`` (an UnsupportedError naming the
    provider and the wires that have one, when its wire has none)."""
    where = LIVE_PROTOCOLS.get(target.shape.name)
    route = target.endpoint.route
    if where is None or (route is not None and target.shape.name != "gemini"):
        raise UnsupportedError(
            f"{target.provider} ({target.shape.name}) has no live sessions in elelem; "
            "OpenAI Realtime (openai, azure) and Gemini Live (google, vertex) do"
        )
    module, name = where
    made = getattr(importlib.import_module(module), name)
    if route is not None:
        # Vertex AI: its own WebSocket path, and the model as the resource
        # name the cloud's route puts in a request's path.
        routed = route(EncodedRequest(f"/v1beta/models/{target.model}", {}))
        resource = routed.path.split("?", 1)[0].split("/", 2)[-1]
        vertex: LiveProtocol = made(target.provider, path=VERTEX_PATH, resource=resource)
        return vertex
    protocol: LiveProtocol = made(target.provider)
    return protocol


__all__ = ["LIVE_PROTOCOLS", "VERTEX_PATH", "live_protocol"]
