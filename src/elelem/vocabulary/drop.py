"""The structured record of one thing a request or a response left out.

Every encoder reports what it could not send to the target provider, and the
assembler what it discarded from an interrupted or truncated stream, as
:class:`Drop` values: *where* it was (a path in the neutral request such as
``messages[3].content[1]``, ``options.seed``, ``tools[2]``, or ``response``
for the response being assembled), *what* it was (``reasoning``,
``citation``, ``payload``, ``seed``, ``image``…), *why* (a reason code, a
member of the open set :data:`DROP_REASONS`) and a human ``detail``.
Shapes produce them, the conversation log stores them in response records,
and the CLI and the web viewer show their :attr:`Drop.description`.

A record written before drops were structured held one free-text line per
drop; :func:`legacy_drop` turns such a line into a :class:`Drop` whose
reason is :data:`LEGACY` and whose detail is the line, so old logs and
exports still load and nothing of them is lost.
"""

from __future__ import annotations

from typing import Any

import msgspec

from elelem.vocabulary.registry import OpenSet

FOREIGN_PAYLOAD = "foreign-payload"
"""Opaque native data of another provider (a signature, an encrypted item, a
raw server-tool block): only the provider that made it can read it."""

FOREIGN_REASONING = "foreign-reasoning"
"""Another provider's reasoning: never sent disguised as the target's own
thinking format (docs/architecture.md §2.5)."""

FOREIGN_BLOCK = "foreign-block"
"""A block of a type nobody registered, from another provider: it replays
verbatim only to the provider that produced it."""

UNSUPPORTED = "unsupported"
"""The target wire (or this provider on it) has no way to say this."""

INVALID = "invalid"
"""The value cannot be carried as given (tool arguments that are not a JSON
object where the wire takes an object, a header value that is not valid)."""

ADJUSTED = "adjusted"
"""Sent, but changed to a value the wire accepts (a cache lifetime capped)."""

UNREPLAYABLE = "unreplayable"
"""The provider's own data that cannot go back to it (an unsigned thinking
block, a stream event that is no input item, an unfinished hosted call)."""

EXPIRED = "expired"
"""Replayed state that expired by the time of the request."""

EMPTY = "empty"
"""A message with nothing left to send once the rest was dropped."""

NOT_A_SHAPE = "not-a-shape"
"""Native fields keyed by a name that is no shape: what earlier versions
recorded (a stored record keeps its reason); such a key is now an error at
encoding (:meth:`elelem.vocabulary.ToolSpec.merge_native`)."""

CUT_OFF = "cut-off"
"""Part of a response the stream ended in the middle of."""

TRUNCATED = "truncated"
"""Part of a response the token limit cut (a tool call's arguments)."""

MALFORMED = "malformed"
"""The provider's own payload arrived malformed and was recorded so on its
block (``elelem.vocabulary.malformed``): it is not sent back."""

LEGACY = "legacy"
"""A drop recorded as free text before drops were structured; ``detail``
holds the line as it was written."""

DROP_REASONS = OpenSet(
    "drop reason",
    (
        FOREIGN_PAYLOAD,
        FOREIGN_REASONING,
        FOREIGN_BLOCK,
        UNSUPPORTED,
        INVALID,
        ADJUSTED,
        UNREPLAYABLE,
        EXPIRED,
        EMPTY,
        NOT_A_SHAPE,
        CUT_OFF,
        TRUNCATED,
        MALFORMED,
        LEGACY,
    ),
)
"""The known reason codes of :attr:`Drop.why`, an open set: a plugin's shape
may report its own reason, and a consumer shows a code it does not know as it
is."""


class Drop(msgspec.Struct, frozen=True, gc=False):
    """One thing left out: where, what, why, and a human detail.

    ``where`` is a path in the neutral request (``messages[3].content[1]``,
    ``options.reasoning.budget_tokens``, ``tools[2]``, ``hosted_tools[0]``,
    ``response_payloads``) or ``response…`` for the response being assembled;
    ``what`` names the thing (``reasoning``, ``citation``, ``payload``,
    ``tool-call``, a block's type, an option's name); ``why`` is a reason code
    (:data:`DROP_REASONS`); ``detail`` says more for a person (``"from
    openrouter"``, ``"Converse takes a model-specific budget"``).
    """

    where: str
    what: str
    why: str
    detail: str = ""

    @property
    def description(self) -> str:
        """One line for display: ``messages[3].content[1]: reasoning (foreign-reasoning: from x)``."""
        if self.why == LEGACY:
            return self.detail
        reason = f"{self.why}: {self.detail}" if self.detail else self.why
        return f"{self.where}: {self.what} ({reason})"

    def under(self, prefix: str) -> Drop:
        """This drop with ``where`` placed under ``prefix`` (``messages[3]``)."""
        where = f"{prefix}.{self.where}" if self.where else prefix
        return Drop(where, self.what, self.why, self.detail)


def legacy_drop(line: str) -> Drop:
    """The :class:`Drop` standing for a drop recorded as a free-text ``line``
    (its where and what are unknown: empty; the line is kept whole)."""
    return Drop("", "", LEGACY, line)


class BlockSite(str):
    """The provider's name, as a block encoder receives it, with where the
    block is being spelt: ``where`` its path in the request
    (``messages[2].content[1]``), ``dropped`` the encoding's drop records (an
    encoder that declines a block, or part of it, appends why), ``context``
    what the shape hands its own encoders (Chat Completions: its dialect).
    Being the name itself, it is what a plugin's two-argument encoder has
    always received."""

    where: str
    dropped: list[Drop]
    context: Any

    def __new__(
        cls, provider: str, where: str = "", dropped: list[Drop] | None = None, context: Any = None
    ) -> BlockSite:
        site = super().__new__(cls, provider)
        site.where = where
        site.dropped = [] if dropped is None else dropped
        site.context = context
        return site

    def at(self, where: str) -> BlockSite:
        """The same site for the block at ``where``."""
        return BlockSite(str(self), where, self.dropped, self.context)


__all__ = [
    "ADJUSTED",
    "CUT_OFF",
    "DROP_REASONS",
    "EMPTY",
    "EXPIRED",
    "FOREIGN_BLOCK",
    "FOREIGN_PAYLOAD",
    "FOREIGN_REASONING",
    "INVALID",
    "LEGACY",
    "MALFORMED",
    "NOT_A_SHAPE",
    "TRUNCATED",
    "UNREPLAYABLE",
    "UNSUPPORTED",
    "BlockSite",
    "Drop",
    "legacy_drop",
]
