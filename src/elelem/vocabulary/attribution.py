"""Attribution: a citation attached to assistant text."""

from __future__ import annotations

import msgspec

from elelem.errors import AttributionRangeError
from elelem.vocabulary.payload import ProviderPayload


class DocumentLocation(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    """Where in a document of the conversation a citation points.

    ``index`` is the provider's number for the document (the n-th document,
    or the n-th search result, of the request, from 0); ``message`` and
    ``block`` name the message of the request's history and the block of it
    that holds the document, when the parser knew the request.  ``unit`` is
    the document's own unit: ``char`` (characters), ``page`` (pages, from
    1), ``block`` (content blocks of a chunked document or search result,
    from 0); ``start`` is inclusive, ``end`` exclusive, as the providers
    number them.
    """

    index: int
    unit: str
    start: int
    end: int
    message: int | None = None
    block: int | None = None

    @property
    def label(self) -> str:
        """The location as a reader says it: ``p. 3``, ``pp. 3–4``,
        ``chars 0–120``, ``block 2``."""
        last = self.end - 1
        if self.unit == "page":
            if last <= self.start:
                return f"p. {self.start}"
            return f"pp. {self.start}\u2013{last}"
        if self.unit == "char":
            return f"chars {self.start}\u2013{self.end}"
        noun = "block" if self.unit == "block" else self.unit
        if last <= self.start:
            return f"{noun} {self.start}"
        return f"{noun}s {self.start}\u2013{last}"


class Source(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    """Where a citation points: a URL and a title, each optional, and for a
    citation into a document of the conversation, where in it.

    Document citations (no URL) carry the document title and ``document``;
    search citations carry both URL and title.  Both are untrusted text.
    ``document`` is unset (not encoded) for every other citation, so their
    canonical bytes are what they always were.
    """

    url: str | None = None
    title: str | None = None
    document: DocumentLocation | msgspec.UnsetType = msgspec.UNSET


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


__all__ = ["Attribution", "DocumentLocation", "Source"]
