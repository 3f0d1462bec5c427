"""The model list of every Chat Completions server: OpenAI's ``GET
{base}/models`` (see :mod:`elelem.shapes.listing`), OpenRouter's entries with
their limits and modalities."""

from __future__ import annotations

from elelem.shapes.listing import OPENAI_MODELS

LISTING = OPENAI_MODELS
"""How the Chat Completions wire lists models."""

__all__ = ["LISTING"]
