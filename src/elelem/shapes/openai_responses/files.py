"""The openai_responses wire's files: OpenAI's Files API (:mod:`elelem.shapes.files`);
a file is referred to by ``file_id``."""

from __future__ import annotations

from elelem.shapes.files import OPENAI_FILES

FILES = OPENAI_FILES
"""How the openai_responses wire stores files."""

__all__ = ["FILES"]
