"""Content blocks through tables: each shape's block spellings.

A shape spells the parts of a message from tables, as it spells hosted
tools (:mod:`elelem.shapes.hosted_tools`) and generation options: a
:class:`BlockTable` maps a block's class (``TextBlock``, ``ToolCallBlock``,
``HostedActivity``, ``UnknownBlock``, …) to the row that writes it into the
message being built (:data:`BlockSpeller`), and hands a block of any other
class to its ``otherwise`` row: the path a plugin's block and the built-in
image, document and audio blocks take, their registered mapping for the
shape (:func:`~elelem.vocabulary.register_block_mapping`,
:func:`~elelem.shapes.common.registered_part`), which reports a drop where
there is none.

A shape has one table per place a block can stand, since a place decides
what a block becomes there: its own assistant message replayed natively,
another provider's assistant message, a user or tool message (Chat
Completions' tool result is a message of its own, its reasoning a field of
the assistant message).  Each shape's encoder names its tables in
``BLOCK_TABLES`` (place -> table); ``tests/test_block_and_tool_tables.py``
walks every shape × place × block type and requires a spelling or a drop
record.

The row is found by the block's exact class (one dictionary lookup), so a
table costs no more than the ``isinstance`` chain it replaces.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

from elelem.errors import RegistryError
from elelem.shapes.common import Dropped, malformed_drops, part_type
from elelem.vocabulary import Message
from elelem.vocabulary.drop import UNSUPPORTED
from elelem.vocabulary.portable import PortableMessage

C = TypeVar("C")

BlockSpeller = Callable[[Any, C], None]
"""One row: writes the block into the context ``C`` of the message being
built (its wire parts, the drop records), or reports what it leaves out."""


class BlockTable(dict[type, BlockSpeller[C]]):
    """A shape's block table for one place: block class -> its row, and
    ``otherwise``, the row of a block of any other class (its registered
    mapping, or a drop record); ``wire`` names the wire and the place.

    A spelling loop looks the row up by the block's exact class,
    ``table[type(part)](part, context)``: one dictionary lookup, the
    ``otherwise`` row where there is none (:meth:`__missing__`)."""

    __slots__ = ("otherwise", "wire")

    def __init__(
        self, wire: str, rows: Mapping[type, BlockSpeller[C]], otherwise: BlockSpeller[C]
    ) -> None:
        for cls, row in rows.items():
            if not isinstance(cls, type) or not callable(row):
                raise RegistryError(f"{wire}: a block table row is a class and a function")
        super().__init__(rows)
        self.wire = wire
        self.otherwise = otherwise

    def __missing__(self, cls: type) -> BlockSpeller[C]:
        return self.otherwise

    def spell(self, part: object, context: C) -> None:
        """Write ``part`` through the row of its class, else ``otherwise``."""
        self[type(part)](part, context)

    def spells(self, cls: type) -> bool:
        """Whether blocks of ``cls`` have a row of their own here."""
        return dict.__contains__(self, cls)

    def __repr__(self) -> str:
        names = ", ".join(cls.__name__ for cls in self)
        return f"BlockTable({self.wire!r}: {names})"


class Spelt:
    """The context most rows write into: the ``provider`` the request goes
    to, the encoding's ``dropped`` records, ``out`` the wire parts built so
    far, ``at`` where the block being spelt stands (``messages[2].content[1]``),
    ``source`` the message's source (context text is marked by it),
    ``extra``: what else a shape's rows share (its call index, its dialect),
    and ``index`` the block's position in its message.

    One is made per message, so it is a plain class whose constant fields
    are class defaults, set on the instance only where they differ (a
    message's cost to spell is measured: ``benchmarks/encode_blocks.py``)."""

    at = ""
    source = "user"
    extra: Any = None
    index = 0

    def __init__(self, provider: str, dropped: Dropped, out: list[Any] | None = None) -> None:
        self.provider = provider
        self.dropped = dropped
        self.out: list[Any] = [] if out is None else out


S = TypeVar("S", bound=Spelt)


def spell_native(table: BlockTable[S], message: Message, context: S, where: str = "") -> S:
    """Replay ``message`` to the provider that produced it, into ``context``:
    a drop record for each malformed payload its blocks carry (the rest of
    each block is sent), then each block through ``table``, the row looked
    up by its exact class.  ``where`` places the message in the request
    (``messages[3]``: ``messages[3].content[1]``).  Returns ``context``,
    whose ``out`` and ``dropped`` hold what was written."""
    malformed_drops(message, context.dropped, where)
    prefix = f"{where}." if where and not where.endswith(".") else where
    for i, part in enumerate(message.content):
        context.at, context.index = f"{prefix}content[{i}]", i
        table[type(part)](part, context)
    return context


def spell_kept(table: BlockTable[S], portable: PortableMessage, context: S, under: str = "") -> S:
    """Spell into ``context`` what a message keeps on its way to this wire
    (:func:`~elelem.vocabulary.portable.portable_message`): first the
    drop records of what the projection left out, then each kept block
    through ``table`` at its position in the caller's message.  ``under``
    places both in the request (``messages[3]``: ``messages[3].content[1]``).
    Returns ``context``."""
    context.dropped.extend(portable.dropped, under)
    prefix = f"{under}." if under else ""
    for i, part in zip(portable.positions, portable.message.content, strict=True):
        context.at, context.index = f"{prefix}content[{i}]", i
        table[type(part)](part, context)
    return context


class Site(Protocol):
    """What a row that reports a block needs of its context: where the
    block stands and the encoding's drop records."""

    at: str
    dropped: Dropped


def left_out(detail: str) -> BlockSpeller[Any]:
    """A row that leaves the block out and reports it: its type,
    ``unsupported``, ``detail`` (the wire and the place that take none)."""

    def row(part: object, site: Site) -> None:
        site.dropped.add(site.at, part_type(part), UNSUPPORTED, detail)

    return row


__all__ = [
    "BlockSpeller",
    "BlockTable",
    "Site",
    "Spelt",
    "left_out",
    "spell_kept",
    "spell_native",
]
