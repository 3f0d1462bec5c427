"""Which live protocol a resolved model speaks (the live-session kind).

A wire's live sessions are its shape's ``live`` value
(:class:`~elelem.wire.live.LiveWire`, from the package's ``live.py``):
OpenAI Realtime on the Responses wire (OpenAI, Azure OpenAI) and Gemini
Live on the Gemini wire (the Gemini API, and Vertex AI with its Google
credentials: the wire's cloud path, the model as the resource name the
cloud's route makes).
"""

from __future__ import annotations

from elelem.errors import UnsupportedError
from elelem.providers.catalog import Target
from elelem.shapes.registry import shape_named
from elelem.vocabulary import provider_records
from elelem.wire import EncodedRequest
from elelem.wire.live import LiveProtocol, LiveWire


def live_providers() -> list[str]:
    """The registered providers whose chat wire holds live sessions (its
    shape's ``live``), derived from the records."""
    return [
        record.name
        for record in provider_records()
        if record.chat and getattr(shape_named(record.shape), "live", None) is not None
    ]


def live_protocol(target: Target) -> LiveProtocol:
    """A fresh live protocol for ``target`` (an UnsupportedError naming the
    provider, when its wire, or its cloud, has no live sessions here)."""
    wire: LiveWire | None = getattr(target.shape, "live", None)
    route = target.endpoint.route
    if wire is None or (route is not None and wire.cloud_path is None):
        raise UnsupportedError(
            f"{target.provider} ({target.shape.name}) has no live sessions in elelem; "
            f"these providers have: {', '.join(live_providers())}"
        )
    if route is None:
        return wire.protocol(target.provider)
    # A cloud serving the wire under its own paths: the model is the
    # resource its route names (projects/…/publishers/google/models/…).
    routed = route(EncodedRequest(f"/v1beta/models/{target.model}", {}))
    resource = routed.path.split("?", 1)[0].split("/", 2)[-1]
    return wire.protocol(target.provider, path=wire.cloud_path, resource=resource)


__all__ = ["live_protocol", "live_providers"]
