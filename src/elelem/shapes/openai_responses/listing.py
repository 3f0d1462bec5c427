"""OpenAI's model list for the Responses wire: ``GET {base}/models`` (see
:mod:`elelem.shapes.listing`)."""

from __future__ import annotations

from elelem.shapes.listing import OPENAI_MODELS

LISTING = OPENAI_MODELS
"""How the Responses wire lists models."""

__all__ = ["LISTING"]
