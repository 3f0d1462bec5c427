"""The OpenAI Chat Completions wire shape (docs/architecture.md §2), sans-IO.

Serves OpenAI and every OpenAI-compatible server (every provider record
whose ``shape`` is ``openai_chat``).  ``SHAPE`` is a :class:`~elelem.shapes.base.ShapeSpec` whose
``dialects`` are the per-provider request conventions of
:mod:`elelem.shapes.openai_chat.dialects`: unbound, a provider gets the
dialect of its own record (else the default); ``SHAPE.with_dialect(name)`` (or
a :class:`Dialect` value) speaks one dialect to every provider, as the
catalog binds a provider spec's ``dialect``, and ``SHAPE.with_conventions``
one built from conventions set field by field.
"""

from __future__ import annotations

from elelem.shapes.base import ShapeSpec
from elelem.shapes.openai_chat.alternatives import alternatives
from elelem.shapes.openai_chat.batch import BATCH
from elelem.shapes.openai_chat.dialects import DEFAULT, DIALECTS, Dialect, conventions, dialect_for
from elelem.shapes.openai_chat.embeddings import EMBEDDINGS
from elelem.shapes.openai_chat.encoder import (
    PATH,
    assistant_wire,
    encode_request,
    native_assistant,
    portable_assistant,
)
from elelem.shapes.openai_chat.errors import ERRORS, classify_error, error_from_event
from elelem.shapes.openai_chat.files import FILES
from elelem.shapes.openai_chat.listing import LISTING
from elelem.shapes.openai_chat.mapping import FINISH_REASONS, finish_reason, map_usage
from elelem.shapes.openai_chat.parser import ChatParser, parse_body
from elelem.shapes.openai_chat.speech import SPEECH
from elelem.shapes.openai_chat.transcription import TRANSCRIPTION

SHAPE = ShapeSpec(
    "openai_chat",
    "sse",
    encode=encode_request,
    parser=ChatParser,
    parse_body=parse_body,
    classify=classify_error,
    dialects=DIALECTS,
    listing=LISTING,
    speech=SPEECH,
    transcription=TRANSCRIPTION,
    conventions=lambda name, fields, where: conventions(
        dialect_for(name) if name else DEFAULT, fields, where
    ),
    files=FILES,
    embeddings=EMBEDDINGS,
    batch=BATCH,
)
"""The Chat Completions shape, each provider in the conventions of its own record."""


__all__ = [
    "DIALECTS",
    "ERRORS",
    "FINISH_REASONS",
    "PATH",
    "SHAPE",
    "ChatParser",
    "Dialect",
    "alternatives",
    "assistant_wire",
    "classify_error",
    "dialect_for",
    "encode_request",
    "error_from_event",
    "finish_reason",
    "map_usage",
    "native_assistant",
    "parse_body",
    "portable_assistant",
]
