"""Generation options from the command line: ``-o KEY VALUE``, ``--effort``,
and ``--schema`` (llm's concise syntax or a JSON Schema file).

``-o`` names a :class:`~elelem.vocabulary.GenerationOptions` field
(:data:`OPTION_KEYS`; ``-`` and ``_`` alike), validated with one error line
naming the key and what it takes; ``-o stop X`` may repeat.  ``-o
extra.NAME VALUE`` puts a provider field elelem does not model into the
body (VALUE is JSON when it parses as JSON, else a string).

``--schema`` takes ``'name, age int, bio: a short bio'``: fields separated
by commas or new lines, each ``NAME [TYPE][: DESCRIPTION]`` with TYPE one of
``str`` (the default), ``int``, ``float``, ``bool``; every field required.
A value ending in ``.json`` (or naming a file) is read as a JSON Schema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from elelem.errors import ConfigError, ElelemError
from elelem.reading import ReadRefused, read_file
from elelem.vocabulary import (
    ClearThinking,
    ClearToolUses,
    ContextEditing,
    GenerationOptions,
    JsonSchemaOutput,
    ReasoningOptions,
)
from elelem.vocabulary.json import TOO_DEEP, JSONValue

EFFORTS = ("minimal", "low", "medium", "high")
"""``--effort`` values: each provider's reasoning-effort field carries them."""


def _int(key: str, text: str, least: int | None = None) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ConfigError(f"-o {key} takes an integer, not {text!r}") from None
    if least is not None and value < least:
        raise ConfigError(f"-o {key} must be at least {least}, not {value}")
    return value


def _float(key: str, text: str, low: float, high: float) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"-o {key} takes a number, not {text!r}") from None
    if not low <= value <= high:
        raise ConfigError(f"-o {key} must be between {low:g} and {high:g}, not {text}")
    return value


Setter = Callable[[str, str, dict[str, Any]], None]


def _setter(field: str, parse: Callable[[str, str], Any]) -> Setter:
    def set_(key: str, text: str, into: dict[str, Any]) -> None:
        into[field] = parse(key, text)

    return set_


def _stop(key: str, text: str, into: dict[str, Any]) -> None:
    if not text:
        raise ConfigError("-o stop takes a non-empty sequence")
    into["stop"] = (*into.get("stop", ()), text)


def _reasoning(field: str, parse: Callable[[str, str], Any]) -> Setter:
    def set_(key: str, text: str, into: dict[str, Any]) -> None:
        into.setdefault("reasoning", {})[field] = parse(key, text)

    return set_


def _effort(key: str, text: str) -> str:
    if text not in EFFORTS:
        raise ConfigError(f"-o {key} takes one of {', '.join(EFFORTS)}, not {text!r}")
    return text


OPTION_KEYS: dict[str, Setter] = {
    "max_tokens": _setter("max_tokens", lambda k, t: _int(k, t, 1)),
    "temperature": _setter("temperature", lambda k, t: _float(k, t, 0.0, 2.0)),
    "top_p": _setter("top_p", lambda k, t: _float(k, t, 0.0, 1.0)),
    "stop": _stop,
    "seed": _setter("seed", lambda k, t: _int(k, t)),
    "tool_choice": _setter("tool_choice", lambda k, t: t),
    "reasoning_effort": _reasoning("effort", _effort),
    "reasoning_budget": _reasoning("budget_tokens", lambda k, t: _int(k, t, 1)),
}
"""What ``-o`` accepts (``-`` or ``_`` between words), and how each value is read."""


def _json_or_text(text: str, key: str) -> JSONValue:
    try:
        value: JSONValue = json.loads(text)
    except ValueError:
        return text
    except RecursionError:
        # JSON all the same: sending it as a string would change its meaning.
        raise ConfigError(f"-o {key}: the value is {TOO_DEEP}") from None
    return value


CONTEXT_EDITS = {
    "clear-tool-uses": ("clear_tool_uses", ClearToolUses()),
    "clear-thinking": ("clear_thinking", ClearThinking()),
}
"""The edits ``--context-editing`` names, each with the server's own settings."""


def context_editing(flag: str | None) -> ContextEditing | None:
    """The :class:`ContextEditing` of ``--context-editing EDIT[,EDIT]`` (None if
    not given); an unknown, empty or repeated edit is a ``ConfigError``."""
    if flag is None:
        return None
    fields: dict[str, Any] = {}
    for raw in flag.split(","):
        name = raw.strip()
        if name not in CONTEXT_EDITS:
            known = ", ".join(CONTEXT_EDITS)
            raise ConfigError(f"--context-editing: unknown edit {name!r} (known: {known})")
        field, edit = CONTEXT_EDITS[name]
        if field in fields:
            raise ConfigError(f"--context-editing: {name!r} is given twice")
        fields[field] = edit
    return ContextEditing(**fields)


def generation_options(
    pairs: Sequence[tuple[str, str]],
    *,
    max_tokens: int | None = None,
    effort: str | None = None,
    show_reasoning: bool = False,
    base: Mapping[str, Any] | None = None,
) -> GenerationOptions:
    """The options of ``-o`` ``pairs`` (in order; the last of a key wins, ``stop``
    accumulates), ``--max-tokens``, ``--effort`` and ``base`` (fields the caller
    sets, such as ``cache`` or ``output``).

    ``show_reasoning`` (``--reasoning summary|full`` given) asks for reasoning
    even without an effort: an empty :class:`ReasoningOptions`, which each
    shape spells as its request to see reasoning (OpenAI reasoning summaries,
    Gemini ``includeThoughts``).
    """
    fields: dict[str, Any] = dict(base or {})
    extra: dict[str, JSONValue] = {}
    if max_tokens is not None:
        fields["max_tokens"] = max_tokens
    for raw_key, text in pairs:
        key = raw_key.strip().replace("-", "_")
        if key.startswith("extra."):
            name = raw_key.strip()[len("extra.") :]
            if not name:
                raise ConfigError("-o extra.NAME needs a NAME (the provider's body field)")
            extra[name] = _json_or_text(text, raw_key.strip())
            continue
        setter = OPTION_KEYS.get(key)
        if setter is None:
            known = ", ".join(sorted(k.replace("_", "-") for k in OPTION_KEYS))
            raise ConfigError(f"unknown option -o {raw_key!r} (known: {known}, extra.NAME)")
        setter(key, text, fields)
    reasoning = fields.pop("reasoning", None)
    if effort is not None:
        reasoning = {**(reasoning or {}), "effort": effort}
    if reasoning is not None:
        fields["reasoning"] = ReasoningOptions(**reasoning)
    elif show_reasoning:
        fields["reasoning"] = ReasoningOptions()
    if extra:
        fields["extra"] = extra
    return GenerationOptions(**fields)


_FIELD = re.compile(r"^(?P<name>[A-Za-z_][\w-]*)(?:\s+(?P<type>\w+))?\s*(?::\s*(?P<desc>.*))?$")
_TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}


def concise_schema(text: str) -> dict[str, JSONValue]:
    """The JSON Schema of llm's concise syntax (see the module doc)."""
    separator = "\n" if "\n" in text else ","
    properties: dict[str, JSONValue] = {}
    for item in (part.strip() for part in text.split(separator)):
        if not item:
            continue
        match = _FIELD.match(item)
        if match is None:
            raise ConfigError(f"--schema: {item!r} is not NAME [TYPE][: DESCRIPTION]")
        kind = match.group("type") or "str"
        if kind not in _TYPES:
            raise ConfigError(
                f"--schema: field {match.group('name')!r} has type {kind!r}; "
                f"use one of {', '.join(_TYPES)}"
            )
        prop: dict[str, JSONValue] = {"type": _TYPES[kind]}
        if match.group("desc"):
            prop["description"] = match.group("desc").strip()
        properties[match.group("name")] = prop
    if not properties:
        raise ConfigError("--schema names no field")
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


MAX_SCHEMA_BYTES = 16 * 1024 * 1024
"""The largest ``--schema`` file read (a schema is sent with every request)."""


def load_schema(value: str) -> dict[str, JSONValue]:
    """``--schema VALUE``: a JSON Schema file, inline JSON, or the concise syntax."""
    path = Path(value)
    if value.endswith(".json") or (len(value) < 4096 and "\n" not in value and path.is_file()):
        try:
            text = read_file(path, MAX_SCHEMA_BYTES).decode("utf-8")
        except ReadRefused as exc:
            raise ConfigError(f"--schema {value}: {exc}") from None
        except OSError as exc:
            raise ConfigError(f"--schema {value}: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise ConfigError(f"--schema {value}: not UTF-8 text") from None
        return _schema_object(text, value)
    if value.lstrip().startswith("{"):
        return _schema_object(value, "--schema")
    return concise_schema(value)


def _schema_object(text: str, where: str) -> dict[str, JSONValue]:
    try:
        schema = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{where}: not JSON ({exc})") from None
    except RecursionError:
        raise ConfigError(f"{where}: nested too deeply to read") from None
    if not isinstance(schema, dict):
        raise ConfigError(f"{where}: a JSON Schema must be an object")
    # Imported here: jsonschema is a sizeable import every command would
    # pay at start, and only --schema needs it.
    import jsonschema

    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ConfigError(f"{where}: not a valid JSON Schema: {exc.message}") from None
    except RecursionError:
        raise ConfigError(f"{where}: nested too deeply to check") from None
    return schema


def schema_output(value: str | None) -> JsonSchemaOutput | None:
    """The structured-output option of ``--schema``, None without it."""
    return None if value is None else JsonSchemaOutput(load_schema(value))


def check_answer(text: str, schema: Mapping[str, Any]) -> JSONValue:
    """The answer ``text`` parsed as JSON and validated against ``schema``.

    Raises :class:`SchemaMismatch` saying where it fails.
    """
    try:
        value: JSONValue = json.loads(text)
    except ValueError as exc:
        raise SchemaMismatch(f"the answer is not JSON ({exc})", text) from None
    except RecursionError:
        raise SchemaMismatch(f"the answer is {TOO_DEEP}", text) from None
    import jsonschema  # only --schema needs it (see _schema_object)

    validator = jsonschema.validators.validator_for(schema)(schema)
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        where = "$" + "".join(
            f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in first.absolute_path
        )
        raise SchemaMismatch(
            f"the answer does not match the schema at {where}: {first.message}", text
        )
    return value


class SchemaMismatch(ElelemError, ValueError):
    """The answer to a ``--schema`` request is not JSON of that schema; ``text``
    is the answer as it arrived (it stays in the conversation too)."""

    def __init__(self, message: str, text: str) -> None:
        super().__init__(message)
        self.text = text


__all__ = [
    "EFFORTS",
    "OPTION_KEYS",
    "SchemaMismatch",
    "check_answer",
    "concise_schema",
    "generation_options",
    "load_schema",
    "schema_output",
]
