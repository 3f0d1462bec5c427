"""Checking a parser's typed fast path against its dict path.

A shape's ``fast(event, data)`` must give, frame for frame, exactly what the
dict path gives (the same chunks, or the same error), or decline.
:func:`compare` feeds the same frames to the real parser and to the same
parser with ``fast`` switched off, asserts equal outcomes and counts the
frames the fast path answered."""

from __future__ import annotations

from collections.abc import Sequence

from elelem.errors import ElelemError
from elelem.shapes.skeleton import ParserSkeleton
from elelem.vocabulary import ProviderId


def outcome(parser: ParserSkeleton, event: str, data: str) -> str:
    """The frame's chunks, or its error, as exact text (repr tells 1 from True)."""
    try:
        return repr(list(parser.message(event, data)))
    except ElelemError as exc:  # the error itself is what is compared
        return repr((type(exc), str(exc), exc.__dict__))


def compare(
    parser: type[ParserSkeleton], provider: ProviderId, frames: Sequence[tuple[str, str]]
) -> tuple[list[str], int]:
    """Feed ``frames`` to ``parser`` and to ``parser`` without its fast path;
    assert equal outcomes (EOF included); return them and the fast path's hits."""
    hits = 0

    class Counting(parser):  # type: ignore[valid-type,misc]
        def fast(self, event: str, data: str) -> object:
            nonlocal hits
            chunks = super().fast(event, data)
            hits += chunks is not None
            return chunks

    class DictOnly(parser):  # type: ignore[valid-type,misc]
        def fast(self, event: str, data: str) -> None:
            return None

    fast, slow = Counting(provider), DictOnly(provider)
    seen = []
    for event, data in frames:
        got, want = outcome(fast, event, data), outcome(slow, event, data)
        assert got == want, data
        seen.append(got)
    assert repr(list(fast.eof())) == repr(list(slow.eof()))
    return seen, hits
