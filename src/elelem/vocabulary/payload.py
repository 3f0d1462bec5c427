"""The ProviderPayload envelope: native data only its provider interprets."""

from __future__ import annotations

import msgspec

from elelem.errors import PayloadError
from elelem.vocabulary.ids import ProviderId
from elelem.vocabulary.json import JSONValue, check_json


class ProviderPayload(msgspec.Struct, frozen=True, forbid_unknown_fields=False):
    """Opaque native data for exact replay to the provider that produced it.

    ``provider`` and ``format`` identify the data (``anthropic`` /
    ``signature``); ``version`` records the wire contract selected when it was
    produced (``web_search_20250305``), or None where the wire names none.
    ``value`` is any JSON value and is untrusted: ``repr`` and ``str`` never
    show it, only its size.  Payloads compare by value and are immutable.
    """

    provider: ProviderId
    format: str
    version: str | None
    value: JSONValue

    def __post_init__(self) -> None:
        if not isinstance(self.provider, str) or not self.provider:
            raise PayloadError("provider payload needs a non-empty provider")
        if not isinstance(self.format, str) or not self.format:
            raise PayloadError(f"provider payload from {self.provider!r} needs a non-empty format")
        if self.version is not None and not isinstance(self.version, str):
            raise PayloadError("provider payload version must be a string or None")
        bad = check_json(self.value)
        if bad is not None:
            raise PayloadError(
                f"provider payload {self.provider}/{self.format} holds a non-JSON value at {bad}"
            )

    @property
    def size(self) -> int:
        """Size in bytes of the value's JSON encoding."""
        return len(msgspec.json.encode(self.value))

    def __repr__(self) -> str:
        return (
            f"ProviderPayload(provider={self.provider!r}, format={self.format!r}, "
            f"version={self.version!r}, size={self.size})"
        )

    __str__ = __repr__

    def __rich_repr__(self) -> list[tuple[str, object]]:
        # rich's pretty printer must not walk into the (untrusted) value.
        return [
            ("provider", self.provider),
            ("format", self.format),
            ("version", self.version),
            ("size", self.size),
        ]


__all__ = ["ProviderPayload"]
