"""OpenAI's transcription endpoint on a Chat Completions server (Groq's Whisper, a
local server): the same wire as OpenAI's own (see
:mod:`elelem.shapes.openai_responses.transcription`)."""

from __future__ import annotations

from elelem.shapes.openai_responses.transcription import TRANSCRIPTION

__all__ = ["TRANSCRIPTION"]
