"""Gemini's Interactions API (``POST /v1beta/interactions``), the seventh
shape: its requests (history the provider keeps continued with
``previous_interaction_id``), its streamed and whole answers, and native
replay of its steps.  The same modules under the same names as every shape
(:mod:`elelem.shapes`); the catalog's ``google-interactions`` speaks it.
"""

from __future__ import annotations

from elelem.shapes.base import ShapeSpec
from elelem.shapes.gemini.grounding import annotation_attribution
from elelem.shapes.gemini_interactions.encoder import (
    ACCEPTS,
    OPTION_KEYS,
    TOOL_CHOICE,
    assistant_wire,
    encode_request,
    interaction_steps,
)
from elelem.shapes.gemini_interactions.errors import classify_error, error_from_event
from elelem.shapes.gemini_interactions.mapping import (
    FINISH_REASONS,
    HOSTED_NAMES,
    finish_reason,
    map_usage,
)
from elelem.shapes.gemini_interactions.parser import (
    InteractionsParser,
    interaction_chunks,
    parse_body,
)

SHAPE = ShapeSpec(
    "gemini_interactions",
    "sse",
    encode=encode_request,
    parser=InteractionsParser,
    parse_body=parse_body,
    # Its own error codes, or Google's generateContent form (errors.py).
    classify=classify_error,
)
"""The Gemini Interactions shape."""

__all__ = [
    "ACCEPTS",
    "FINISH_REASONS",
    "HOSTED_NAMES",
    "OPTION_KEYS",
    "SHAPE",
    "TOOL_CHOICE",
    "InteractionsParser",
    "annotation_attribution",
    "assistant_wire",
    "encode_request",
    "error_from_event",
    "finish_reason",
    "interaction_chunks",
    "interaction_steps",
    "map_usage",
    "parse_body",
]
