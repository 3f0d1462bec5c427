"""OpenAI's speech endpoint on a Chat Completions server (Groq's Whisper, a
local server): the same wire as OpenAI's own (see
:mod:`elelem.shapes.openai_responses.speech`)."""

from __future__ import annotations

from elelem.shapes.openai_responses.speech import SPEECH

__all__ = ["SPEECH"]
