"""The ProviderPayload envelope: native data only its provider interprets."""

from __future__ import annotations

import msgspec

from elelem.errors import PayloadError
from elelem.vocabulary.ids import ProviderId
from elelem.vocabulary.json import FrozenDict, FrozenList, JSONValue, check_json, freeze

_encode = msgspec.json.encode


class ProviderPayload(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    """Opaque native data for exact replay to the provider that produced it.

    ``provider`` and ``format`` identify the data (``anthropic`` /
    ``signature``); ``version`` records the wire contract selected when it was
    produced (``web_search_20250305``), or None where the wire names none.
    ``value`` is any JSON value and is untrusted: ``repr`` and ``str`` never
    show it, only its size.

    Payloads are immutable and compare by value: an object or array ``value``
    is held as a frozen copy (:func:`~elelem.vocabulary.json.freeze`: still a
    ``dict`` or ``list`` to read, a ``TypeError`` to change; changing the
    value you passed in changes nothing), and two payloads are equal when provider, format,
    version and the canonical JSON of ``value`` are equal, so ``1``, ``1.0``
    and ``true`` are three values, a tuple equals the list it encodes as, and
    key order counts (replay must reproduce the same bytes).

    A missing or empty ``provider`` or ``format``, a missing ``value`` or a
    value that is not JSON (NaN, a set, an arbitrary object, a non-string
    key, a cycle) raises :class:`~elelem.errors.PayloadError`.
    """

    # The defaults exist only so that a missing field reaches __post_init__
    # and fails as a PayloadError rather than a bare TypeError.
    provider: ProviderId = ProviderId("")
    format: str = ""
    version: str | None = None
    value: JSONValue = msgspec.UNSET

    def __post_init__(self) -> None:
        if not isinstance(self.provider, str) or not self.provider:
            raise PayloadError("provider payload needs a non-empty provider", "$.provider")
        if not isinstance(self.format, str) or not self.format:
            raise PayloadError(
                f"provider payload from {self.provider!r} needs a non-empty format", "$.format"
            )
        if self.version is not None and not isinstance(self.version, str):
            raise PayloadError(
                f"provider payload {self.provider}/{self.format} version must be a string or None",
                "$.version",
            )
        if self.value is msgspec.UNSET:
            raise PayloadError(
                f"provider payload {self.provider}/{self.format} needs a value", "$.value"
            )
        value = self.value
        kind = type(value)
        if kind is FrozenDict or kind is FrozenList:
            return  # another payload's value: checked and frozen already
        bad = check_json(value, "$.value")
        if bad is not None:
            raise PayloadError(
                f"provider payload {self.provider}/{self.format} holds a non-JSON value at {bad}",
                bad,
            )
        if isinstance(value, (dict, list, tuple)):
            # Immutable, as the payload is: a change to the value it was
            # given, or to the one it holds, can change neither its bytes
            # nor its hash.
            msgspec.structs.force_setattr(self, "value", freeze(value))

    @property
    def size(self) -> int:
        """Size in bytes of the value's JSON encoding."""
        return len(_encode(self.value))

    def _key(self) -> tuple[str, str, str | None, bytes]:
        return (self.provider, self.format, self.version, _encode(self.value))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ProviderPayload):
            return NotImplemented
        return self is other or self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

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


NEUTRAL = ProviderId("elelem")
"""The ``provider`` of a payload elelem itself wrote (no provider's opaque
data: what a client tool tells beside its text, such as the page's URL a
:class:`elelem.tools.ComputerTool` reports); every wire may read it, so a
portable projection keeps it (:mod:`elelem.vocabulary.portable`)."""

CURRENT_URL = "current_url"
"""The format of the :data:`NEUTRAL` payload a computer-use result keeps its
page's URL in (Gemini's function response sends it back as ``url``)."""


__all__ = ["CURRENT_URL", "NEUTRAL", "ProviderPayload"]
