"""Recognizing recorded traffic: which shape a recorded exchange speaks and
which provider served it (what ``elelem inspect`` and ``elelem demo`` need).

This is provider knowledge, so it lives with the catalog: the request path
patterns and first-payload tests of each wire shape (two tables other shapes
extend), the provider a shape's recordings are assumed to come from, and the
provider a recorded URL names, read from the catalog's own base URLs (the
user's configured endpoints included), not from a table of its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from elelem.providers.catalog import Catalog
from elelem.vocabulary import ProviderRecord
from elelem.vocabulary.registry import RecordTable


def speaks(record: ProviderRecord, shape: str) -> bool:
    """Whether ``record`` serves chat in ``shape``: its own shape, and Chat
    Completions too where it sets conventions for it (OpenAI's chat
    endpoint: the rule of the Chat Completions dialects)."""
    if not record.chat:
        return False
    return record.shape == shape or (shape == "openai_chat" and bool(record.conventions))


def _shape_homes(records: tuple[ProviderRecord, ...]) -> dict[str, str]:
    homes: dict[str, str] = {}
    for record in records:
        for shape in (record.shape, "openai_chat"):
            if speaks(record, shape):
                homes.setdefault(shape, record.name)
    return homes


SHAPE_PROVIDERS: Mapping[str, str] = RecordTable(build=_shape_homes)
"""Shape name -> the provider its recordings are taken to come from when the
recorded URL names none the catalog knows: the first registered record that
speaks it (:func:`speaks`)."""

RAW_REQUEST_SHAPES: frozenset[str] = frozenset({"anthropic_messages"})
"""Shapes whose parser takes the recorded request JSON in place of a neutral
request (it names the hosted tool versions the request selected)."""

PATH_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"/v1/messages$"), "anthropic_messages"),
    (re.compile(r"/responses$"), "openai_responses"),
    (re.compile(r"/chat/completions$"), "openai_chat"),
    (re.compile(r":(stream)?[gG]enerateContent$"), "gemini"),
    (re.compile(r"/interactions$"), "gemini_interactions"),
    (re.compile(r"/api/chat$"), "ollama_native"),
    (re.compile(r"/model/[^/]+/converse(-stream)?$"), "bedrock_converse"),
]
"""Request path pattern -> shape, tried in order.  ``gemini_interactions``
(Gemini's Interactions API) is recognized so it can be named, but it is no
shape of the catalog: its request encoder is not built (its parser lives in
``elelem.shapes.gemini_interactions``)."""


def _payload_type(payload: dict[str, Any]) -> str:
    value = payload.get("type")
    return value if isinstance(value, str) else ""


PAYLOAD_RULES: list[tuple[Callable[[dict[str, Any]], bool], str]] = [
    (lambda p: _payload_type(p) in ("message_start", "message"), "anthropic_messages"),
    (
        lambda p: _payload_type(p) == "error" and isinstance(p.get("error"), dict),
        "anthropic_messages",
    ),
    (
        lambda p: _payload_type(p).startswith("response.") or p.get("object") == "response",
        "openai_responses",
    ),
    (
        # Some compatible servers omit "object" (Moonshot) or blank it (Azure's
        # first chunk); a top-level "choices" list is Chat Completions alone.
        lambda p: (
            p.get("object") in ("chat.completion", "chat.completion.chunk")
            or isinstance(p.get("choices"), list)
        ),
        "openai_chat",
    ),
    (lambda p: "candidates" in p or "usageMetadata" in p, "gemini"),
    (
        # Gemini's Interactions API (interaction.*/step.* events).
        lambda p: p.get("object") == "interaction" or "event_type" in p,
        "gemini_interactions",
    ),
    (
        # Ollama's native /api/chat: a "message" object beside a boolean "done".
        lambda p: isinstance(p.get("message"), dict) and isinstance(p.get("done"), bool),
        "ollama_native",
    ),
    (
        # Bedrock Converse: decoded events as one-key unions, or a whole response.
        lambda p: (
            (len(p) == 1 and next(iter(p)) in ("messageStart", "contentBlockDelta"))
            or ("output" in p and "stopReason" in p)
        ),
        "bedrock_converse",
    ),
]
"""Predicate on the first JSON payload of a response -> shape, tried in order."""


def shape_of_exchange(path: str | None, first_payload: dict[str, Any] | None) -> str | None:
    """The wire shape of a recorded exchange: from its request path, else
    from the first JSON payload of its response; None when neither tells."""
    if path is not None:
        for pattern, name in PATH_RULES:
            if pattern.search(path):
                return name
    if first_payload is not None:
        for predicate, name in PAYLOAD_RULES:
            if predicate(first_payload):
                return name
    return None


_LOCAL = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})


def _host_pattern(base_url: str) -> tuple[re.Pattern[str], int | None] | None:
    try:
        parts = urlsplit(re.sub(r"\{[a-z_]+\}", "region-placeholder", base_url))
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname
    if not host:
        return None
    pattern = re.escape(host).replace("region-placeholder", "[a-z0-9-]+")
    return re.compile(pattern + r"\Z"), port


def _serves(base_url: str, host: str, port: int | None) -> bool:
    found = _host_pattern(base_url)
    if found is None or not found[0].match(host):
        return False
    return found[1] is None or port is None or found[1] == port


def provider_of_url(catalog: Catalog, url: str | None, shape: str) -> str:
    """The provider that served a recorded request to ``url`` in ``shape``.

    The catalog's base URLs (and the ``hosts`` of each record) decide: a provider speaking ``shape`` on that
    host (and port) first, then, for a public host, any provider on it (a
    Chat Completions call to OpenAI's host is OpenAI's).  Otherwise the
    shape's default provider (:data:`SHAPE_PROVIDERS`).
    """
    default = SHAPE_PROVIDERS.get(shape, "unknown")
    if not url:
        return default
    try:
        parts = urlsplit(url)
        host, port = parts.hostname or "", parts.port
    except ValueError:
        return default
    same_host: list[str] = []
    for name in catalog.names():
        spec = catalog.get(name)
        # A host its record names besides its base URL's matches on any port.
        if host not in spec.hosts and not _serves(spec.base_url, host, port):
            continue
        if spec.shape == shape:
            return name
        same_host.append(name)
    if same_host and host not in _LOCAL:
        return same_host[0]
    return default


__all__ = [
    "PATH_RULES",
    "PAYLOAD_RULES",
    "RAW_REQUEST_SHAPES",
    "SHAPE_PROVIDERS",
    "provider_of_url",
    "shape_of_exchange",
    "speaks",
]
