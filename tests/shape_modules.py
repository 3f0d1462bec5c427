"""The shape module a corpus test reads a recording with: the catalog's, or
the parked Gemini Interactions parser (no shape of the catalog, since its
request encoder is not built, so ``elelem inspect`` refuses it; its parser
is still tested over the corpus)."""

from __future__ import annotations

import importlib
from types import ModuleType

from elelem.cli.inspect import load_shape

PARKED = {"gemini_interactions": "elelem.shapes.gemini_interactions"}


def shape_module(name: str) -> ModuleType:
    """The module holding ``SHAPE`` (and ``assistant_wire``) for shape ``name``."""
    parked = PARKED.get(name)
    return importlib.import_module(parked) if parked else load_shape(name)
