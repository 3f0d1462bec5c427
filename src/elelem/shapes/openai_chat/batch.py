"""OpenAI's Batch API for Chat Completions requests: the same wire as the
Responses requests' (see :mod:`elelem.shapes.openai_responses.batch`)."""

from __future__ import annotations

from elelem.shapes.openai_responses.batch import BATCH

__all__ = ["BATCH"]
