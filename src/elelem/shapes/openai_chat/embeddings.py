"""OpenAI's embedding endpoint on a Chat Completions server (a compatible
server, Mistral, Voyage): the same wires as OpenAI's own (see
:mod:`elelem.shapes.openai_responses.embeddings`)."""

from __future__ import annotations

from elelem.shapes.openai_responses.embeddings import EMBEDDINGS

__all__ = ["EMBEDDINGS"]
