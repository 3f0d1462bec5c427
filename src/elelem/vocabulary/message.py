"""Messages: a role, a source and an ordered content sequence."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import msgspec

from elelem.errors import DecodeError
from elelem.vocabulary.activity import HostedActivity
from elelem.vocabulary.blocks import Block, TextBlock, place_unknowns
from elelem.vocabulary.ids import ProviderId

Role = Literal["system", "user", "assistant"]

ROLES: frozenset[str] = frozenset({"system", "user", "assistant"})

if TYPE_CHECKING:
    Part = Block | HostedActivity
else:

    class _PartMarker(type):
        def __instancecheck__(cls, obj: object) -> bool:
            return isinstance(obj, (Block, HostedActivity))

    class Part(metaclass=_PartMarker):
        """A content block or a hosted-activity transition, in stream order.

        Run-time marker that routes decoding through the registry."""


class Message(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    """One message of a conversation.

    ``content`` keeps blocks and hosted-activity transitions in the order the
    provider produced them, which native replay needs (a server tool's call,
    its result, then the text citing it).  ``source`` is a member of the open
    set of message sources (``user``, ``assistant``, ``tool``, ``context``,
    ``system``, …).  ``provider`` and ``model`` name who produced an assistant
    message; native replay applies only to that provider.

    Every :class:`~elelem.vocabulary.UnknownBlock` in ``content`` carries its
    index there as ``position``.  A role outside ``system``/``user``/
    ``assistant`` raises :class:`~elelem.errors.DecodeError` at construction,
    so no message is built that storage could not read back.
    """

    role: Role
    content: tuple[Part, ...]
    source: str = ""
    provider: ProviderId | None = None
    model: str | None = None

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise DecodeError(f"unknown message role {self.role!r}", "$.role")
        content = self.content
        if type(content) is not tuple:
            # A list would make the message unhashable and mutable underneath.
            content = tuple(content)
            msgspec.structs.force_setattr(self, "content", content)
        placed = place_unknowns(content)
        if placed is not None:
            msgspec.structs.force_setattr(self, "content", placed)

    @classmethod
    def user(cls, text: str) -> Message:
        """A user message holding one text block."""
        return cls(role="user", content=(TextBlock(text),), source="user")

    @classmethod
    def system(cls, text: str) -> Message:
        """A system message holding one text block."""
        return cls(role="system", content=(TextBlock(text),), source="system")

    @classmethod
    def context(cls, text: str, tag: str = "context") -> Message:
        """Injected context: a user-role message whose source is ``context``.

        Encoders render it as a tagged envelope (``<context>…</context>``), never
        as a new role.
        """
        return cls(role="user", content=(TextBlock(text),), source=f"context:{tag}")

    @property
    def text(self) -> str:
        """The concatenated text of the message's text blocks."""
        return "".join(p.text for p in self.content if isinstance(p, TextBlock))


__all__ = ["ROLES", "Message", "Part", "Role"]
