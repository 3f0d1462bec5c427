"""The hot Chat Completions chunk, decoded straight to typed values.

Nearly every chunk of a streamed answer carries one choice whose delta holds
only text or reasoning.  A :func:`hot_decoder` decodes exactly that; any
other chunk (a tool call, annotations, another delta field, an error, a
value of another type, two choices) fails the typed decode and the parser's
dict path handles it, so nothing is lost and every error stays the same.

The decode does not depend on listing every metadata field a provider may
add:

- a choice's fields beside ``index``, ``delta`` and ``finish_reason``
  (OpenRouter's ``native_finish_reason``, ``logprobs``) are passed over, as
  the dict path passes them over;
- every top-level field arrives as raw JSON (:class:`msgspec.Raw`, a slice
  of the frame, never decoded): metadata the parser reads only at the start
  (:data:`PASSED_OVER`) is passed over; a field that carries content
  (:data:`RAW_FIELDS`: ``usage``, Perplexity's ``citations`` and
  ``search_results``) or that nobody listed is applied by the parser only
  when its bytes differ from the last ones it applied, so a list repeated on
  every chunk is compared, not decoded again;
- a top-level field nobody listed fails the first decode; the parser then
  takes a decoder that also holds that field (:func:`hot_decoder` of the
  names, cached), so the rest of the stream stays typed.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any, Literal, NamedTuple

import msgspec


class HotPart(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A text content part (Mistral sends content as a list of parts)."""

    type: Literal["text"]
    text: str


class HotDelta(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A delta holding at most text (a string or text parts), reasoning and a refusal."""

    content: str | list[HotPart] | None = None
    reasoning_content: str | None = None
    reasoning: str | None = None
    refusal: str | None = None
    role: Any = None
    channel: Any = None


class HotChoice(msgspec.Struct, gc=False):
    """One choice of a hot chunk; its other fields are passed over."""

    delta: HotDelta
    index: int = 0
    finish_reason: str | None = None


PASSED_OVER = (
    "id",
    "object",
    "created",
    "model",
    "system_fingerprint",
    "service_tier",
    "provider",
    "obfuscation",
    "timings",
    "time_info",
    "prompt_filter_results",
    "moderation",
)
"""Top-level metadata the parser reads only at the response's start."""

RAW_FIELDS = ("usage", "citations", "search_results")
"""Top-level fields that carry content: applied when their bytes change."""


class HotDecoder(NamedTuple):
    """A typed decoder of hot chunks, and the (attribute, wire name) of its
    applied raw fields."""

    decoder: msgspec.json.Decoder[Any]
    applied: tuple[tuple[str, str], ...]


@lru_cache(maxsize=64)
def hot_decoder(extra: frozenset[str] = frozenset()) -> HotDecoder:
    """The decoder of hot chunks whose top level may also hold the fields
    ``extra`` (applied when they change, like :data:`RAW_FIELDS`)."""
    applied = [*RAW_FIELDS, *sorted(extra - {*RAW_FIELDS, *PASSED_OVER, "choices"})]
    names = {f"m{i}": name for i, name in enumerate(PASSED_OVER)}
    names |= {f"r{i}": name for i, name in enumerate(applied)}
    none = msgspec.field(default=None)
    fields: list[Any] = [("choices", list[HotChoice])]
    fields += [(attr, msgspec.Raw, none) for attr in names]
    struct = msgspec.defstruct(
        "HotChunk", fields, forbid_unknown_fields=True, rename=names, gc=False
    )
    slots = tuple((f"r{i}", name) for i, name in enumerate(applied))
    return HotDecoder(msgspec.json.Decoder(struct), slots)


def changed_fields(
    chunk: Any, applied: Iterable[tuple[str, str]], seen: dict[str, msgspec.Raw]
) -> dict[str, msgspec.Raw]:
    """The raw fields of a decoded hot ``chunk`` whose bytes differ from ``seen``."""
    out: dict[str, msgspec.Raw] = {}
    for attr, name in applied:
        raw = getattr(chunk, attr)
        if raw is not None and seen.get(name) != raw:
            out[name] = raw
    return out


__all__ = [
    "PASSED_OVER",
    "RAW_FIELDS",
    "HotChoice",
    "HotDecoder",
    "HotDelta",
    "HotPart",
    "changed_fields",
    "hot_decoder",
]
