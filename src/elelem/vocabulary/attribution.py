"""Attribution: a citation attached to assistant text."""

from __future__ import annotations

import msgspec

from elelem.errors import AttributionRangeError
from elelem.vocabulary.payload import ProviderPayload


class Source(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    """Where a citation points: a URL and a title, each optional.

    Document citations (no URL) carry the document title; search citations
    carry both.  Both are untrusted text.
    """

    url: str | None = None
    title: str | None = None


class Attribution(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    """A citation on a text block.

    ``excerpt`` is always source-side text (what was quoted from the source).
    ``range`` is a ``(start, end)`` span, in code points, of the owning block's
    text, or None when the block itself is the anchor (Anthropic).
    ``replay`` keeps the provider's raw citation for exact native replay.
    ``complete`` is False when the block was cut off before its attribution
    list was finished (a partial commit).

    A range that is not two integers ``0 <= start <= end`` raises
    :class:`~elelem.errors.AttributionRangeError`; whether it fits the text
    is checked by the :class:`~elelem.vocabulary.TextBlock` that owns it.
    """

    source: Source
    excerpt: str | None = None
    range: tuple[int, int] | None = None
    replay: ProviderPayload | None = None
    complete: bool = True

    def __post_init__(self) -> None:
        span = self.range
        if span is not None and not _valid_span(span):
            raise AttributionRangeError(
                f"attribution range must be two integers 0 <= start <= end, got {span!r}",
                "$.range",
            )


def _valid_span(span: object) -> bool:
    if not isinstance(span, tuple) or len(span) != 2:
        return False
    start, end = span
    return (
        type(start) is int and type(end) is int and 0 <= start <= end  # bool is not a position
    )


__all__ = ["Attribution", "Source"]
