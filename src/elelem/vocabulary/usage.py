"""Usage counters of one provider response."""

from __future__ import annotations

import msgspec

from elelem.errors import DecodeError
from elelem.vocabulary.json import JSONValue, check_json


class Usage(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    """Token and hosted-activity counters of one provider response.

    Counts are disjoint: ``input`` excludes ``cache_read`` and ``cache_write``;
    ``output`` excludes ``reasoning`` (where a provider reports no split, all
    generated tokens are ``output`` and ``reasoning`` is 0).  ``hosted`` maps a neutral counter name
    (``web_search``, ``web_fetch``, ``code_execution``, ``file_search``, …) to
    a count.  ``raw`` is the provider's usage object as received.
    """

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0
    hosted: dict[str, int] = msgspec.field(default_factory=dict)
    raw: JSONValue = None

    def __post_init__(self) -> None:
        if self.raw is not None:
            bad = check_json(self.raw, "$.raw")
            if bad is not None:
                raise DecodeError("usage raw value is not JSON", bad)

    @property
    def total(self) -> int:
        """All tokens counted: input, cache reads and writes, output and reasoning."""
        return self.input + self.cache_read + self.cache_write + self.output + self.reasoning


__all__ = ["Usage"]
