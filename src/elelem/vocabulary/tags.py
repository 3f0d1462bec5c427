"""The table of registered block tags, on its own so that both the registry
(which imports the core block types to register them) and the blocks module
(whose :class:`~elelem.vocabulary.UnknownBlock` refuses a registered tag) read
it without importing each other: no import circle, lazy or not (docs/architecture.md §1);
and the base those block types share, :class:`PartStruct`."""

from __future__ import annotations

import msgspec


class PartStruct(
    msgspec.Struct, frozen=True, gc=False, tag_field="type", forbid_unknown_fields=True
):
    """What every built-in part of a message is, said once: an immutable
    value (no GC tracking: it holds no cycle), tagged on the wire by its
    ``type`` (each subclass names its tag, and says ``frozen`` again for
    type checkers: ``class TextBlock(PartStruct, frozen=True, tag="text")``),
    and strict about its fields.  A plugin's block type may
    say the same on ``msgspec.Struct`` itself."""


BLOCK_TYPES: dict[str, type[msgspec.Struct]] = {}
"""Registered block tag -> class; written only by
:func:`elelem.vocabulary.registry.register_block_type`."""


def is_reserved_tag(tag: str) -> bool:
    """True if ``tag`` is a registered block tag or ``hosted`` (no unknown block may use it)."""
    return tag == "hosted" or tag in BLOCK_TYPES


__all__ = ["BLOCK_TYPES", "PartStruct", "is_reserved_tag"]
