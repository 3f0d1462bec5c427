"""The hot Chat Completions chunk, decoded straight to typed values.

Nearly every chunk of a streamed answer carries one choice whose delta holds
only text or reasoning.  A :func:`hot_decoder` decodes exactly that; any
other chunk (a tool call, annotations, another delta field, an error, a
value of another type, two choices) fails the typed decode and the parser's
dict path handles it, so nothing is lost and every error stays the same.

The decode does not depend on listing every metadata field a provider may
add:

- a choice's fields beside ``index``, ``delta`` and ``finish_reason``
  (``logprobs``, OpenRouter's ``native_finish_reason``, Azure's
  ``content_filter_results``: :data:`CHOICE_FIELDS`) arrive as raw JSON and
  are kept by the parser when their bytes change; a choice field nobody
  listed fails the first decode, and the parser takes a decoder that also
  holds it, as for the top level below;
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

from collections.abc import Callable
from functools import lru_cache
from operator import attrgetter
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


CHOICE_FIELDS = ("logprobs", "native_finish_reason", "content_filter_results")
"""Choice fields the hot decode takes as raw JSON (kept when their bytes change)."""


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
    """A typed decoder of hot chunks; the (attribute, wire name) of its applied
    top-level raw fields and one getter of them all (a tuple, compared at
    once); the wire names of its choice's raw fields and their getter."""

    decoder: msgspec.json.Decoder[Any]
    applied: tuple[tuple[str, str], ...]
    raws: Callable[[Any], tuple[Any, ...]]
    choice_fields: tuple[str, ...]
    choice_raws: Callable[[Any], tuple[Any, ...]]


def _choice_names(extra: frozenset[str]) -> dict[str, str]:
    return {f"c{i}": name for i, name in enumerate([*CHOICE_FIELDS, *sorted(extra)])}


def _choice_struct(names: dict[str, str]) -> type:
    none = msgspec.field(default=None)
    fields: list[Any] = [
        ("delta", HotDelta),
        ("index", int, 0),
        ("finish_reason", str | None, none),
    ]
    fields += [(attr, msgspec.Raw, none) for attr in names]
    return msgspec.defstruct(
        "HotChoice", fields, forbid_unknown_fields=True, rename=names, gc=False
    )


HotChoice = _choice_struct(_choice_names(frozenset()))
"""One choice of a hot chunk: ``delta``, ``index``, ``finish_reason`` and the
raw :data:`CHOICE_FIELDS` (the decoder's own class may hold more)."""


@lru_cache(maxsize=64)
def hot_decoder(
    extra: frozenset[str] = frozenset(), choice_extra: frozenset[str] = frozenset()
) -> HotDecoder:
    """The decoder of hot chunks whose top level may also hold the fields
    ``extra`` (applied when they change, like :data:`RAW_FIELDS`) and whose
    choice may also hold the fields ``choice_extra`` (raw, like
    :data:`CHOICE_FIELDS`)."""
    applied = [*RAW_FIELDS, *sorted(extra - {*RAW_FIELDS, *PASSED_OVER, "choices"})]
    names = {f"m{i}": name for i, name in enumerate(PASSED_OVER)}
    names |= {f"r{i}": name for i, name in enumerate(applied)}
    none = msgspec.field(default=None)
    choice_names = _choice_names(choice_extra - set(CHOICE_FIELDS))
    choice = HotChoice if not choice_extra else _choice_struct(choice_names)
    fields: list[Any] = [("choices", list[choice])]  # type: ignore[valid-type]
    fields += [(attr, msgspec.Raw, none) for attr in names]
    struct = msgspec.defstruct(
        "HotChunk", fields, forbid_unknown_fields=True, rename=names, gc=False
    )
    slots = tuple((f"r{i}", name) for i, name in enumerate(applied))
    return HotDecoder(
        msgspec.json.Decoder(struct),
        slots,
        attrgetter(*(attr for attr, _ in slots)),
        tuple(choice_names.values()),
        attrgetter(*choice_names),
    )


__all__ = [
    "CHOICE_FIELDS",
    "PASSED_OVER",
    "RAW_FIELDS",
    "HotChoice",
    "HotDecoder",
    "HotDelta",
    "HotPart",
    "hot_decoder",
]
