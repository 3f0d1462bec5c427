"""Asking a provider which models it serves (``elelem models --remote``).

Each wire shape's provider family has its own model-list endpoint (its
package's ``listing.py``, the shape's ``listing``: a
:class:`~elelem.wire.listing.ModelListing`), whose pages are followed here
with the provider's own authentication (the endpoint's headers):

- Anthropic Messages: ``GET /v1/models`` (paged by ``after_id``);
- OpenAI Responses and Chat Completions (and every OpenAI-compatible
  server): ``GET {base}/models``;
- Gemini: ``GET /v1beta/models`` (paged by ``pageToken``), names without
  their ``models/`` prefix;
- Ollama native: ``GET /api/tags``.

Bedrock lists its models on another host (the control plane, not
``bedrock-runtime``), which elelem does not call: asking is an
:class:`~elelem.errors.UnsupportedError`.  A failed request is the typed
:class:`~elelem.errors.StreamError` its status names, with the key
redacted from the message.
"""

from __future__ import annotations

from typing import Any

import httpx2
import msgspec

from elelem.errors import MalformedStreamError, TransportError, UnsupportedError
from elelem.providers.catalog import load_shape
from elelem.shapes.common import error_class_for_status
from elelem.transport.endpoint import Endpoint
from elelem.vocabulary.json import decode_json
from elelem.wire.listing import ModelListing, RemoteModel

MAX_PAGES = 50
"""A bound on pages followed, so a server that always answers "more" ends."""


async def list_remote_models(
    shape: str, endpoint: Endpoint, http: httpx2.AsyncClient
) -> list[RemoteModel]:
    """The models the provider behind ``endpoint`` lists, in its order."""
    listing = getattr(load_shape(shape), "listing", None)
    if not isinstance(listing, ModelListing) or endpoint.signer is not None:
        raise UnsupportedError(
            f"provider {endpoint.provider}: listing its models is not supported "
            f"(shape {shape}); name a model as {endpoint.provider}:MODEL"
        )
    query, extra = dict(listing.query), dict(listing.headers)
    models: list[RemoteModel] = []
    params: dict[str, str] = dict(query)
    for _ in range(MAX_PAGES):
        page = await _get(endpoint, http, listing.path, params, extra)
        try:
            found, more = listing.read(page)
        except (KeyError, TypeError, AttributeError) as exc:
            raise MalformedStreamError(
                f"provider {endpoint.provider}: the model list is not in the documented form "
                f"({type(exc).__name__}: {exc})"
            ) from None
        models.extend(found)
        if more is None:
            return models
        params = {**query, **more}
    return models


async def _get(
    endpoint: Endpoint,
    http: httpx2.AsyncClient,
    path: str,
    params: dict[str, str],
    extra: dict[str, str],
) -> dict[str, Any]:
    url = endpoint.url(path)
    try:
        response = await http.get(url, params=params, headers=endpoint.request_headers(extra))
    except httpx2.HTTPError as exc:
        raise TransportError(
            endpoint.redact(f"provider {endpoint.provider}: listing models failed: {exc}")
        ) from None
    return json_answer(endpoint, response.status_code, response.content, "listing models")


def json_answer(
    endpoint: Endpoint, status: int, body: bytes, what: str, *, empty: bool = False
) -> dict[str, Any]:
    """A provider's JSON object answer to ``what``: the typed
    :class:`~elelem.errors.StreamError` its status names (key redacted), a
    :class:`~elelem.errors.MalformedStreamError` when it is not an object;
    with ``empty``, ``{}`` for an empty success (an answer in headers only)."""
    if status >= 400:
        cls = error_class_for_status(status)
        text = endpoint.redact(body[:500].decode("utf-8", "replace"))
        raise cls(
            f"{endpoint.provider} {status}: {what} failed: {text}",
            status=status,
            body=endpoint.redact_bytes(body),
        )
    if empty and not body.strip():
        return {}
    try:
        answer = decode_json(body)
    except msgspec.DecodeError:
        raise MalformedStreamError(f"provider {endpoint.provider}: {what}: not JSON") from None
    if not isinstance(answer, dict):
        raise MalformedStreamError(f"provider {endpoint.provider}: {what}: not an object")
    return answer


__all__ = ["MAX_PAGES", "RemoteModel", "json_answer", "list_remote_models"]
