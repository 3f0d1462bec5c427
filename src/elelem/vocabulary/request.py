"""The neutral request surface: client tools, hosted tools and options.

Each shape's encoder translates these into its own wire definitions and
versions; a shape that cannot honor one reports it rather than dropping it.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from elelem.errors import DecodeError
from elelem.vocabulary.json import JSONValue, check_json


def _require_json(value: object, path: str, what: str) -> None:
    bad = check_json(value, path)
    if bad is not None:
        raise DecodeError(f"{what} is not JSON", bad)


class ToolSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A client tool the model may call; ``parameters`` is a JSON Schema object."""

    name: str
    description: str = ""
    parameters: JSONValue = msgspec.field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )

    def __post_init__(self) -> None:
        _require_json(self.parameters, "$.parameters", f"tool {self.name!r} parameters")


class UserLocation(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Approximate user location, to localize hosted search results."""

    city: str | None = None
    region: str | None = None
    country: str | None = None
    timezone: str | None = None


class WebSearch(
    msgspec.Struct, frozen=True, tag_field="type", tag="web_search", forbid_unknown_fields=True
):
    """Let the provider search the web on its own servers."""

    max_uses: int | None = None
    allowed_domains: tuple[str, ...] = ()
    blocked_domains: tuple[str, ...] = ()
    user_location: UserLocation | None = None
    version: str | None = None
    """Pin a provider wire version (``web_search_20250305``); None picks the shape's default."""


class WebFetch(
    msgspec.Struct, frozen=True, tag_field="type", tag="web_fetch", forbid_unknown_fields=True
):
    """Let the provider fetch web pages and documents on its own servers."""

    max_uses: int | None = None
    allowed_domains: tuple[str, ...] = ()
    blocked_domains: tuple[str, ...] = ()
    citations: bool = False
    max_content_tokens: int | None = None
    version: str | None = None


class CodeExecution(
    msgspec.Struct, frozen=True, tag_field="type", tag="code_execution", forbid_unknown_fields=True
):
    """Let the provider run code in its own sandbox."""

    version: str | None = None


HostedTool = WebSearch | WebFetch | CodeExecution

ReasoningDisplay = Literal["hidden", "summary", "full"]


class ReasoningOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """How much the model should reason: an effort level or a token budget."""

    effort: str | None = None
    budget_tokens: int | None = None


class GenerationOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Sampling and length options.  ``extra`` is merged into the wire body last,
    for provider options elelem does not model."""

    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop: tuple[str, ...] = ()
    reasoning: ReasoningOptions | None = None
    tool_choice: str | None = None
    extra: dict[str, JSONValue] = msgspec.field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.extra:
            _require_json(self.extra, "$.extra", "generation option extra")


__all__ = [
    "CodeExecution",
    "GenerationOptions",
    "HostedTool",
    "ReasoningDisplay",
    "ReasoningOptions",
    "ToolSpec",
    "UserLocation",
    "WebFetch",
    "WebSearch",
]
