"""Typed outputs: a Python type in, its JSON Schema out, a validated instance back.

``output_type`` is a msgspec ``Struct``, a dataclass, a ``TypedDict`` (any
type msgspec can decode), or a pydantic model when pydantic is installed.
:func:`output_format` builds the neutral
:class:`~elelem.vocabulary.JsonSchemaOutput` the encoders spell for each wire;
:func:`parse_output` validates the answer's text into an instance, or raises
:class:`OutputError` carrying the raw text.  :class:`PartialJSON` reads the
answer as it streams, tolerantly, so a partial object is available after
every delta.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar, cast

import msgspec

from elelem.errors import ElelemError
from elelem.vocabulary import JsonSchemaOutput
from elelem.vocabulary.json import JSONValue, decode_json

T = TypeVar("T")


class OutputError(ElelemError, ValueError):
    """The answer is not a valid ``output_type``: not JSON, or JSON that does
    not match.  ``raw`` is the answer's text as received; ``output_type`` the
    type asked for."""

    def __init__(self, message: str, raw: str, output_type: object) -> None:
        super().__init__(message)
        self.message = message
        self.raw = raw
        self.output_type = output_type


def _pydantic_model(output_type: object) -> Any:
    """The pydantic ``BaseModel`` subclass ``output_type`` is, or None (also
    when pydantic is not installed: then nothing can be one)."""
    try:
        from pydantic import BaseModel
    except ImportError:
        return None
    if isinstance(output_type, type) and issubclass(output_type, BaseModel):
        return output_type
    return None


def json_schema(output_type: object) -> dict[str, JSONValue]:
    """The JSON Schema of ``output_type``, with its root inlined (providers
    want an object schema at the top, not a ``$ref``)."""
    model = _pydantic_model(output_type)
    schema: dict[str, JSONValue]
    if model is not None:
        schema = model.model_json_schema()
    else:
        try:
            schema = msgspec.json.schema(output_type)
        except TypeError as exc:
            raise TypeError(f"output_type {output_type!r} has no JSON Schema: {exc}") from None
    ref = schema.get("$ref")
    defs = schema.get("$defs")
    if isinstance(ref, str) and isinstance(defs, dict) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        root = defs.get(name)
        if isinstance(root, dict):
            rest = {k: v for k, v in defs.items() if k != name}
            schema = dict(root)
            if rest:
                schema["$defs"] = rest
    return schema


def _all_required(schema: JSONValue) -> bool:
    """Whether every object in ``schema`` requires all its properties and
    allows no others: what OpenAI's strict mode insists on."""
    if isinstance(schema, dict):
        props = schema.get("properties")
        if isinstance(props, dict):
            required = schema.get("required")
            if not isinstance(required, list) or set(required) != set(props):
                return False
            if schema.get("additionalProperties", True) is not False:
                return False
        return all(_all_required(v) for v in schema.values())
    if isinstance(schema, list):
        return all(_all_required(v) for v in schema)
    return True


def _closed(schema: JSONValue) -> JSONValue:
    """``schema`` with ``additionalProperties: false`` on every object that
    says nothing of it (the answer should hold only the declared fields)."""
    if isinstance(schema, dict):
        out = {k: _closed(v) for k, v in schema.items()}
        if isinstance(out.get("properties"), dict) and "additionalProperties" not in out:
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_closed(v) for v in schema]
    return schema


def output_format(output_type: object) -> JsonSchemaOutput:
    """The structured-output option asking for ``output_type``: its schema,
    named after the type, strict where the schema allows it (every field
    required, no others: otherwise strict mode would refuse it)."""
    schema = cast(dict[str, JSONValue], _closed(json_schema(output_type)))
    name = re.sub(r"[^A-Za-z0-9_-]", "_", getattr(output_type, "__name__", "output"))[:64]
    description = schema.pop("description", "")
    return JsonSchemaOutput(
        schema=schema,
        name=name or "output",
        strict=_all_required(schema),
        description=description if isinstance(description, str) else "",
    )


_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\n(.*)\n```$", re.S)


def answer_json(text: str) -> str:
    """The JSON of an answer: stripped of surrounding white space and of one
    Markdown code fence around the whole of it (models add them unasked)."""
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    return fenced.group(1).strip() if fenced else stripped


def parse_output(output_type: type[T], text: str) -> T:
    """``text`` (an answer) validated as ``output_type``.

    Raises :class:`OutputError` naming what was wrong (and keeping ``text``)
    when it is not JSON or does not match the type.
    """
    body = answer_json(text)
    model = _pydantic_model(output_type)
    if model is not None:
        from pydantic import ValidationError

        try:
            return cast(T, model.model_validate_json(body))
        except ValidationError as exc:
            raise OutputError(
                f"the answer is not a valid {output_type.__name__}: {exc}", text, output_type
            ) from None
    try:
        return cast(T, decode_json(body, type=output_type))
    except msgspec.ValidationError as exc:
        raise OutputError(
            f"the answer is not a valid {getattr(output_type, '__name__', output_type)}: {exc}",
            text,
            output_type,
        ) from None
    except msgspec.DecodeError as exc:
        raise OutputError(f"the answer is not JSON: {exc}", text, output_type) from None


# -- the incremental reader ----------------------------------------------------

_WS = " \t\r\n"
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_LITERALS = {"true": True, "false": False, "null": None}
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\Z")
_NUMBER_CHARS = frozenset("0123456789+-.eE")


def _code_unit(hex4: str) -> str:
    if len(hex4) != 4 or not all(c in "0123456789abcdefABCDEF" for c in hex4):
        raise ValueError(hex4)
    return chr(int(hex4, 16))


def _join(pieces: list[str], *, surrogates: bool, partial: bool = False) -> str:
    """The string of ``pieces``; with ``surrogates`` (a ``\\u`` escape gave
    one), a pair becomes its one character (a lone high half at a partial end
    is left out)."""
    text = "".join(pieces)
    if not surrogates or not text:
        return text
    if partial and "\ud800" <= text[-1] <= "\udbff":
        text = text[:-1]
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


# states
_START, _VALUE, _KEY, _COLON, _AFTER, _STRING, _SCALAR, _DONE, _BROKEN = range(9)


class PartialJSON:
    """A tolerant, incremental JSON reader: :meth:`feed` it text as it
    streams; :attr:`value` is the object so far.

    Text before the first ``{`` or ``[`` is skipped (a fence, a preamble);
    what follows the complete value is ignored.  In :attr:`value`, open
    objects and arrays hold what arrived, a string being read holds its text
    so far, and a number or literal appears once it is complete.  The value
    is built in place: the object :attr:`value` returns is the same one,
    updated by later feeds (copy it to keep a snapshot).  Input that is not
    JSON stops the reading (:attr:`broken`); :func:`parse_output` then says
    what is wrong.  The cost of a feed is proportional to its text, not to
    what came before.
    """

    __slots__ = (
        "_carry",
        "_key",
        "_pieces",
        "_root",
        "_slot",
        "_stack",
        "_state",
        "_string_is_key",
        "_surrogates",
        "broken",
    )

    def __init__(self) -> None:
        self._state = _START
        self._stack: list[dict[str, Any] | list[Any]] = []
        self._root: Any = None
        self._key: str | None = None
        self._pieces: list[str] = []
        self._string_is_key = False
        self._slot: tuple[dict[str, Any] | list[Any], str | int] | None = None
        self._carry = ""
        self._surrogates = False
        self.broken: str | None = None
        """Why reading stopped, when the text is not JSON."""

    @property
    def value(self) -> Any:
        """The value so far (None before the first ``{`` or ``[``)."""
        return self._root

    @property
    def done(self) -> bool:
        """True once the whole value arrived."""
        return self._state == _DONE

    def feed(self, text: str) -> bool:
        """Read ``text``; True when :attr:`value` changed."""
        state = self._state
        if state in (_DONE, _BROKEN) or not text:
            return False
        if self._carry:
            text, self._carry = self._carry + text, ""
        changed = False
        i, n = 0, len(text)
        while i < n:
            state = self._state
            if state == _STRING:
                # the string's text up to its end or an escape, in one slice
                j = text.find('"', i)
                if j < 0:
                    j = n
                b = text.find("\\", i, j)
                if b >= 0:
                    j = b
                if j > i:
                    self._pieces.append(text[i:j])
                if j >= n:
                    i = n
                    break
                if text[j] == '"':
                    changed |= self._end_string()
                    i = j + 1
                    continue
                # an escape: needs the next character (and four for \u)
                if j + 1 >= n or (text[j + 1] == "u" and j + 6 > n):
                    self._carry = text[j:]  # read with the next feed
                    i = n
                    break
                if text[j + 1] == "u":
                    try:
                        unit = _code_unit(text[j + 2 : j + 6])
                        self._surrogates |= "\ud800" <= unit <= "\udfff"
                        self._pieces.append(unit)
                    except ValueError:
                        return self._break("a bad \\u escape") or changed
                    i = j + 6
                else:
                    ch = _ESCAPES.get(text[j + 1])
                    if ch is None:
                        return self._break(f"a bad escape \\{text[j + 1]}") or changed
                    self._pieces.append(ch)
                    i = j + 2
                continue
            c = text[i]
            if c in _WS:
                if state == _SCALAR:
                    changed |= self._end_scalar()
                i += 1
                continue
            if state == _START:
                if c in "{[":
                    self._open(c)
                    changed = True
                i += 1
            elif state == _SCALAR:
                if c in _NUMBER_CHARS or c.isalpha():
                    self._pieces.append(c)
                    i += 1
                else:
                    changed |= self._end_scalar()
            elif state == _VALUE:
                if c in "{[":
                    self._open(c)
                    changed = True
                elif c == '"':
                    self._begin_string(key=False)
                    changed = True
                elif c == "]" and isinstance(self._top(), list) and not self._top():
                    changed |= self._close("]")
                elif c in _NUMBER_CHARS or c.isalpha():
                    self._state = _SCALAR
                    self._pieces = [c]
                else:
                    return self._break(f"{c!r} where a value belongs") or changed
                i += 1
            elif state == _KEY:
                if c == '"':
                    self._begin_string(key=True)
                elif c == "}":
                    changed |= self._close("}")
                else:
                    return self._break(f"{c!r} where a key belongs") or changed
                i += 1
            elif state == _COLON:
                if c != ":":
                    return self._break(f"{c!r} where ':' belongs") or changed
                self._state = _VALUE
                i += 1
            elif state == _AFTER:
                top = self._top()
                if c == ",":
                    self._state = _KEY if isinstance(top, dict) else _VALUE
                elif c in "}]":
                    changed |= self._close(c)
                else:
                    return self._break(f"{c!r} after a value") or changed
                i += 1
            else:
                break  # done: the rest is not ours
            if self._state == _DONE:
                break
        if self._state == _STRING and not self._string_is_key and self._slot is not None:
            holder, where = self._slot
            holder[where] = _join(self._pieces, surrogates=self._surrogates, partial=True)  # type: ignore[index]
            changed = True
        return changed

    # -- helpers ---------------------------------------------------------------

    def _top(self) -> dict[str, Any] | list[Any] | None:
        return self._stack[-1] if self._stack else None

    def _break(self, why: str) -> bool:
        self.broken = why
        self._state = _BROKEN
        return False

    def _place(self, value: Any) -> tuple[dict[str, Any] | list[Any], str | int] | None:
        """Put ``value`` where the next value goes; its slot (None for the root)."""
        top = self._top()
        if top is None:
            self._root = value
            return None
        if isinstance(top, dict):
            assert self._key is not None
            top[self._key] = value
            return top, self._key
        top.append(value)
        return top, len(top) - 1

    def _open(self, bracket: str) -> None:
        container: dict[str, Any] | list[Any] = {} if bracket == "{" else []
        self._place(container)
        self._stack.append(container)
        self._state = _KEY if bracket == "{" else _VALUE

    def _close(self, bracket: str) -> bool:
        top = self._top()
        if (bracket == "}") != isinstance(top, dict):
            return self._break(f"{bracket!r} closes nothing open")
        self._stack.pop()
        self._state = _AFTER if self._stack else _DONE
        return True

    def _begin_string(self, *, key: bool) -> None:
        self._state = _STRING
        self._string_is_key = key
        self._surrogates = False
        self._pieces = []
        self._slot = None if key else self._place("")

    def _end_string(self) -> bool:
        text = _join(self._pieces, surrogates=self._surrogates)
        self._pieces = []
        if self._string_is_key:
            self._key = text
            self._state = _COLON
            return False
        if self._slot is not None:
            holder, where = self._slot
            holder[where] = text  # type: ignore[index]
        else:
            self._root = text
        self._slot = None
        self._state = _AFTER if self._stack else _DONE
        return True

    def _end_scalar(self) -> bool:
        token = "".join(self._pieces)
        self._pieces = []
        if token in _LITERALS:
            value: Any = _LITERALS[token]
        elif _NUMBER.match(token):
            value = decode_json(token)
        else:
            return self._break(f"{token!r} is not a JSON value")
        self._place(value)
        self._state = _AFTER if self._stack else _DONE
        return True


__all__ = [
    "OutputError",
    "PartialJSON",
    "answer_json",
    "json_schema",
    "output_format",
    "parse_output",
]
