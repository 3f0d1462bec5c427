"""Asking a provider which models it serves (``elelem models --remote``).

Each wire shape's provider family has its own model-list endpoint, read
here with the provider's own authentication (the endpoint's headers):

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

from collections.abc import Callable
from typing import Any

import httpx2
import msgspec

from elelem.errors import MalformedStreamError, TransportError, UnsupportedError
from elelem.shapes.common import error_class_for_status
from elelem.transport.endpoint import Endpoint
from elelem.vocabulary.json import decode_json

MAX_PAGES = 50
"""A bound on pages followed, so a server that always answers "more" ends."""


class RemoteModel(msgspec.Struct, frozen=True):
    """One model a provider says it serves: its id and, where given, a display
    name and the limits it reported (``reported``: fields named as
    :class:`~elelem.providers.capabilities.ModelInfo`'s)."""

    id: str
    name: str | None = None
    reported: dict[str, Any] = msgspec.field(default_factory=dict)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _gemini_limits(entry: dict[str, Any]) -> dict[str, Any]:
    """What a Gemini ``Model`` resource (the same in the list as from
    ``models.get``) says of its limits."""
    thinking = entry.get("thinking")
    return {
        "context_window": _int(entry.get("inputTokenLimit")),
        "max_output_tokens": _int(entry.get("outputTokenLimit")),
        "reasoning": thinking if isinstance(thinking, bool) else None,
    }


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


def _openrouter_limits(entry: dict[str, Any]) -> dict[str, Any]:
    """What an OpenRouter ``/models`` entry says (other OpenAI-style lists
    carry none of these fields, and get nothing)."""
    top = _table(entry.get("top_provider"))
    arch = _table(entry.get("architecture"))
    params = entry.get("supported_parameters")
    supported = set(params) if isinstance(params, list) else None
    return {
        "context_window": _int(entry.get("context_length")),
        "max_output_tokens": _int(top.get("max_completion_tokens")),
        "input_modalities": _modalities(arch.get("input_modalities")),
        "output_modalities": _modalities(arch.get("output_modalities")),
        "tools": "tools" in supported if supported is not None else None,
        "reasoning": "reasoning" in supported if supported is not None else None,
        "structured_output": "structured_outputs" in supported if supported is not None else None,
    }


def _known(limits: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in limits.items() if v is not None}


def _anthropic(page: dict[str, Any]) -> tuple[list[RemoteModel], dict[str, str] | None]:
    models = [RemoteModel(m["id"], m.get("display_name")) for m in page.get("data", [])]
    if page.get("has_more") and page.get("last_id"):
        return models, {"after_id": str(page["last_id"])}
    return models, None


def _openai(page: dict[str, Any]) -> tuple[list[RemoteModel], dict[str, str] | None]:
    models = [
        RemoteModel(m["id"], m.get("name"), _known(_openrouter_limits(m)))
        for m in page.get("data", [])
    ]
    return models, None


def _gemini(page: dict[str, Any]) -> tuple[list[RemoteModel], dict[str, str] | None]:
    models = [
        RemoteModel(
            str(m["name"]).removeprefix("models/"), m.get("displayName"), _known(_gemini_limits(m))
        )
        for m in page.get("models", [])
    ]
    token = page.get("nextPageToken")
    return models, ({"pageToken": str(token)} if token else None)


def _ollama(page: dict[str, Any]) -> tuple[list[RemoteModel], dict[str, str] | None]:
    return [RemoteModel(m.get("model") or m["name"]) for m in page.get("models", [])], None


Reader = Callable[[dict[str, Any]], tuple[list[RemoteModel], dict[str, str] | None]]

LISTINGS: dict[str, tuple[str, dict[str, str], dict[str, str], Reader]] = {
    "anthropic_messages": (
        "v1/models",
        {"limit": "1000"},
        {"anthropic-version": "2023-06-01"},
        _anthropic,
    ),
    "openai_responses": ("models", {}, {}, _openai),
    "openai_chat": ("models", {}, {}, _openai),
    "gemini": ("v1beta/models", {"pageSize": "1000"}, {}, _gemini),
    "ollama_native": ("api/tags", {}, {}, _ollama),
}
"""Per shape: path (relative to the base URL), query, extra headers, page reader."""


async def list_remote_models(
    shape: str, endpoint: Endpoint, http: httpx2.AsyncClient
) -> list[RemoteModel]:
    """The models the provider behind ``endpoint`` lists, in its order."""
    listing = LISTINGS.get(shape)
    if listing is None or endpoint.signer is not None:
        raise UnsupportedError(
            f"provider {endpoint.provider}: listing its models is not supported "
            f"(shape {shape}); name a model as {endpoint.provider}:MODEL"
        )
    path, query, extra, read = listing
    models: list[RemoteModel] = []
    params: dict[str, str] = dict(query)
    for _ in range(MAX_PAGES):
        page = await _get(endpoint, http, path, params, extra)
        try:
            found, more = read(page)
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
    body = response.content
    if response.status_code >= 400:
        cls = error_class_for_status(response.status_code)
        text = endpoint.redact(body[:500].decode("utf-8", "replace"))
        raise cls(
            f"{endpoint.provider} {response.status_code}: listing models failed: {text}",
            status=response.status_code,
            body=endpoint.redact_bytes(body),
        )
    try:
        page = decode_json(body)
    except msgspec.DecodeError:
        raise MalformedStreamError(
            f"provider {endpoint.provider}: the model list is not JSON"
        ) from None
    if not isinstance(page, dict):
        raise MalformedStreamError(f"provider {endpoint.provider}: the model list is not an object")
    return page


__all__ = ["LISTINGS", "MAX_PAGES", "RemoteModel", "list_remote_models"]
