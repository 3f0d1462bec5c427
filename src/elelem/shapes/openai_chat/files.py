"""The openai_chat wire's files: OpenAI's Files API (:mod:`elelem.shapes.files`);
a file is referred to by ``file_id``."""

from __future__ import annotations

from dataclasses import replace

from elelem.shapes.files import OPENAI_FILES

FILES = replace(OPENAI_FILES, refers=frozenset({"document"}))
"""How the openai_chat wire stores files."""

__all__ = ["FILES"]
