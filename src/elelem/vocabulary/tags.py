"""The table of registered block tags, on its own so that both the registry
(which imports the core block types to register them) and the blocks module
(whose :class:`~elelem.vocabulary.UnknownBlock` refuses a registered tag) read
it without importing each other: no import circle, lazy or not (docs/architecture.md §1)."""

from __future__ import annotations

import msgspec

BLOCK_TYPES: dict[str, type[msgspec.Struct]] = {}
"""Registered block tag -> class; written only by
:func:`elelem.vocabulary.registry.register_block_type`."""


def is_reserved_tag(tag: str) -> bool:
    """True if ``tag`` is a registered block tag or ``hosted`` (no unknown block may use it)."""
    return tag == "hosted" or tag in BLOCK_TYPES


__all__ = ["BLOCK_TYPES", "is_reserved_tag"]
