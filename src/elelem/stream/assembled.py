"""What the one assembler makes of a response: :class:`AssembledResponse`,
its committed content in stream order, usage, finish, what was dropped and
the visible retries before it (:mod:`elelem.stream.assembler` builds it).
"""

from __future__ import annotations

import msgspec

from elelem.stream.chunks import (
    Finish,
    Retry,
)
from elelem.vocabulary import (
    HostedActivity,
    Message,
    Part,
    ProviderId,
    TextBlock,
    Usage,
)
from elelem.vocabulary.blocks import place_unknowns
from elelem.vocabulary.drop import Drop


class AssembledResponse(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Everything one provider response produced, in stream order.

    ``content`` interleaves blocks and hosted-activity transitions as they
    were committed.  ``complete`` is False for a :meth:`Assembler.partial`
    result; ``dropped`` holds a :class:`~elelem.vocabulary.Drop` for each thing
    the assembler discarded (``where`` starts with ``response``); ``retries``
    are the visible retries that came before the response (the client's retry
    policy, see :class:`~elelem.stream.Retry`).
    """

    provider: ProviderId | None
    response_id: str | None
    model: str | None
    content: tuple[Part, ...]
    usage: Usage | None
    finish: Finish | None
    complete: bool
    dropped: tuple[Drop, ...] = ()
    retries: tuple[Retry, ...] = ()

    def __post_init__(self) -> None:
        # Decoded (or hand-built) responses place their unknown blocks as the
        # assembler does, so a stored response reads back the same.
        placed = place_unknowns(self.content)
        if placed is not None:
            msgspec.structs.force_setattr(self, "content", placed)

    @property
    def blocks(self) -> tuple[Part, ...]:
        """The content blocks, without hosted transitions."""
        return tuple(p for p in self.content if not isinstance(p, HostedActivity))

    @property
    def activities(self) -> tuple[HostedActivity, ...]:
        """The hosted-activity transitions, in order."""
        return tuple(p for p in self.content if isinstance(p, HostedActivity))

    @property
    def text(self) -> str:
        """The concatenated text of all text blocks."""
        return "".join(p.text for p in self.content if isinstance(p, TextBlock))

    @property
    def finish_reason(self) -> str | None:
        """The finish reason, or None for a partial result."""
        return self.finish.reason if self.finish is not None else None

    def to_message(self) -> Message:
        """The assistant message this response contributes to a conversation."""
        return Message(
            role="assistant",
            content=self.content,
            source="assistant",
            provider=self.provider,
            model=self.model,
        )


__all__ = ["AssembledResponse"]
