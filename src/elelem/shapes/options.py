"""Generation options through per-shape key tables.

Each shape says, in one table, where its wire takes each neutral sampling
option of :class:`~elelem.vocabulary.GenerationOptions` (``max_tokens``,
``temperature``, ``top_p``, ``stop``, ``seed``) — a path of keys in the body
(``("generationConfig", "topP")``) — or why it takes none
(:class:`NotTaken`, reported as a :class:`~elelem.vocabulary.Drop`); and, in a
:class:`ToolChoiceSpelling`, how it spells ``tool_choice``.  One function
applies a table, so a new option is one row per shape, and a shape cannot
forget to report an option it does not take: every table names every option
(:func:`check_table`).

Reasoning, prompt caching and structured output are not single values; each
shape spells them itself (:mod:`elelem.shapes.prompt_cache`,
:mod:`elelem.shapes.structured_output`).  Sans-IO, pure functions of the
options and the body they write.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, TypeAlias

from elelem.errors import UnsupportedError
from elelem.shapes.common import Dropped
from elelem.vocabulary import GenerationOptions
from elelem.vocabulary.drop import UNSUPPORTED
from elelem.vocabulary.json import JSONValue


class NotTaken(NamedTuple):
    """An option a wire has no field for; ``detail`` says so in its drop."""

    detail: str


Key: TypeAlias = tuple[str, ...] | NotTaken
"""Where a wire takes one option (a path of body keys), or why it takes none."""

SAMPLING = ("max_tokens", "temperature", "top_p", "stop", "seed")
"""The options a key table maps: each a single value a wire takes as it is
(``stop`` as a list)."""

TOOL_CHOICE_MODES = ("auto", "none", "any", "required")
"""The named modes of ``tool_choice``; any other value names one tool."""


def check_table(shape: str, table: Mapping[str, Key]) -> Mapping[str, Key]:
    """``table`` if it names exactly the options of :data:`SAMPLING`, else a
    ``ValueError`` (raised at import: a shape's table is a constant)."""
    if set(table) != set(SAMPLING):
        missing = sorted(set(SAMPLING) - set(table))
        extra = sorted(set(table) - set(SAMPLING))
        raise ValueError(f"{shape} option table: missing {missing}, unknown {extra}")
    return table


def _put(body: dict[str, Any], path: tuple[str, ...], value: JSONValue) -> None:
    target = body
    for key in path[:-1]:
        target = target.setdefault(key, {})
    target[path[-1]] = value


def sampling_options(
    options: GenerationOptions,
    table: Mapping[str, Key],
    body: dict[str, Any],
    dropped: Dropped,
) -> None:
    """Write each sampling option that is set into ``body`` where ``table``
    says, creating the objects on its path; report each one the wire does not
    take as ``options.<name>``."""
    for name in SAMPLING:
        value = getattr(options, name)
        if value is None or value == ():
            continue
        key = table[name]
        if isinstance(key, NotTaken):
            dropped.add(f"options.{name}", name, UNSUPPORTED, key.detail)
        else:
            _put(body, key, list(value) if isinstance(value, tuple) else value)


class ToolChoiceSpelling(NamedTuple):
    """How one wire spells ``tool_choice``: where it goes (``path``), each
    named mode's wire value (or why the wire has no such mode), and the wire
    value that forces one tool by name."""

    path: tuple[str, ...]
    modes: Mapping[str, JSONValue | NotTaken]
    named: Callable[[str], JSONValue]


def tool_choice(
    options: GenerationOptions,
    spelling: ToolChoiceSpelling | NotTaken,
    body: dict[str, Any],
    dropped: Dropped,
) -> None:
    """Write ``options.tool_choice`` (if set) as ``spelling`` says, or report it.

    A spelling that does not name every mode of :data:`TOOL_CHOICE_MODES` is
    a programming error (:class:`~elelem.errors.UnsupportedError`)."""
    choice = options.tool_choice
    if choice is None:
        return
    if isinstance(spelling, NotTaken):
        if choice != "auto":  # what every wire does unasked
            dropped.add(
                "options.tool_choice", "tool_choice", UNSUPPORTED, f"{choice!r}: {spelling.detail}"
            )
        return
    if choice not in TOOL_CHOICE_MODES:
        _put(body, spelling.path, spelling.named(choice))
        return
    if choice not in spelling.modes:
        raise UnsupportedError(f"tool choice spelling lacks mode {choice!r}")
    value = spelling.modes[choice]
    if isinstance(value, NotTaken):
        dropped.add(
            "options.tool_choice", "tool_choice", UNSUPPORTED, f"{choice!r}: {value.detail}"
        )
    else:
        _put(body, spelling.path, copy.deepcopy(value))  # the table's value stays the table's


__all__ = [
    "SAMPLING",
    "TOOL_CHOICE_MODES",
    "Key",
    "NotTaken",
    "ToolChoiceSpelling",
    "check_table",
    "sampling_options",
    "tool_choice",
]
