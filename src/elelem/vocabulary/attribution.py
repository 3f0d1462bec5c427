"""Attribution: a citation attached to assistant text."""

from __future__ import annotations

import msgspec

from elelem.vocabulary.payload import ProviderPayload


class Source(msgspec.Struct, frozen=True):
    """Where a citation points: a URL and a title, each optional.

    Document citations (no URL) carry the document title; search citations
    carry both.  Both are untrusted text.
    """

    url: str | None = None
    title: str | None = None


class Attribution(msgspec.Struct, frozen=True):
    """A citation on a text block.

    ``excerpt`` is always source-side text (what was quoted from the source).
    ``range`` is a ``(start, end)`` span, in code points, of the owning block's
    text, or None when the block itself is the anchor (Anthropic).
    ``replay`` keeps the provider's raw citation for exact native replay.
    ``complete`` is False when the block was cut off before its attribution
    list was finished (a partial commit).
    """

    source: Source
    excerpt: str | None = None
    range: tuple[int, int] | None = None
    replay: ProviderPayload | None = None
    complete: bool = True


__all__ = ["Attribution", "Source"]
