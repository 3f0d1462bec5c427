"""A valid value for a JSON Schema: what a test model passes as a tool's arguments.

:func:`value_for` builds the simplest value that the schema accepts, the
same one every time: every property of an object (required or not, so each
field's decoding is exercised), the first ``enum`` member or the ``const``,
the minimum of a bounded number, a string of ``minLength`` ``a``\\ s (a date,
a time, an e-mail address or a URI where ``format`` asks for one), an array
of ``minItems`` items, the first branch of ``anyOf``/``oneOf`` that is not
``null``, every branch of ``allOf`` merged.  ``$ref`` into ``$defs`` (or
``definitions``) is followed, a recursive type included: recursion stops at
an optional field or an empty array.

A schema it cannot satisfy by construction (``not``, a ``pattern``) raises
:class:`SchemaValueError` naming the place, rather than guess a value the
tool would refuse.
"""

from __future__ import annotations

from typing import Any

from elelem.errors import ElelemError

_FORMATS = {
    "date-time": "2025-01-01T00:00:00Z",
    "date": "2025-01-01",
    "time": "00:00:00",
    "email": "a@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "uuid": "00000000-0000-0000-0000-000000000000",
}

MAX_DEPTH = 8
"""How deep a recursive schema is followed before optional parts are left out."""


class SchemaValueError(ElelemError, ValueError):
    """The schema asks for something a value cannot be built for by construction."""


def value_for(schema: Any) -> Any:
    """The simplest value ``schema`` accepts (see the module docs)."""
    if not isinstance(schema, dict):
        raise SchemaValueError(f"a schema must be an object, not {type(schema).__name__}")
    return _Builder(schema).value(schema, "$", 0)


class _Builder:
    def __init__(self, root: dict[str, Any]) -> None:
        self.defs: dict[str, Any] = {**root.get("definitions", {}), **root.get("$defs", {})}

    def value(self, schema: Any, where: str, depth: int) -> Any:
        if schema is True or schema == {}:
            return "a"
        if not isinstance(schema, dict):
            raise SchemaValueError(f"{where}: a schema must be an object")
        if "$ref" in schema:
            return self.value(self.resolve(schema["$ref"], where), where, depth + 1)
        for refused in ("not", "pattern"):
            if refused in schema:
                raise SchemaValueError(f"{where}: cannot build a value for {refused!r}")
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            return schema["enum"][0]
        if "allOf" in schema:
            merged = {k: v for k, v in schema.items() if k != "allOf"}
            for part in schema["allOf"]:
                merged = _merge(merged, self.deref(part, where))
            return self.value(merged, where, depth)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return self.branch(schema[key], where, depth)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind is None:
            kind = "object" if "properties" in schema else "string"
        return self.typed(kind, schema, where, depth)

    def typed(self, kind: str, schema: dict[str, Any], where: str, depth: int) -> Any:
        if kind == "object":
            return self.object(schema, where, depth)
        if kind == "array":
            return self.array(schema, where, depth)
        if kind == "string":
            fmt = _FORMATS.get(str(schema.get("format", "")))
            return fmt if fmt is not None else "a" * int(schema.get("minLength", 1))
        if kind in ("integer", "number"):
            return _number(kind, schema)
        if kind == "boolean":
            return False
        if kind == "null":
            return None
        raise SchemaValueError(f"{where}: unknown type {kind!r}")

    def object(self, schema: dict[str, Any], where: str, depth: int) -> dict[str, Any]:
        required = set(schema.get("required", ()))
        out: dict[str, Any] = {}
        for name, sub in schema.get("properties", {}).items():
            if depth >= MAX_DEPTH and name not in required:
                continue  # a recursive type stops at an optional field
            out[name] = self.value(sub, f"{where}.{name}", depth + 1)
        return out

    def array(self, schema: dict[str, Any], where: str, depth: int) -> list[Any]:
        count = int(schema.get("minItems", 0 if depth >= MAX_DEPTH else 1))
        prefix = schema.get("prefixItems", ())
        items = [self.value(s, f"{where}[{i}]", depth + 1) for i, s in enumerate(prefix)]
        item = schema.get("items", {})
        while len(items) < count and item is not False:
            items.append(self.value(item, f"{where}[{len(items)}]", depth + 1))
        return items

    def branch(self, options: list[Any], where: str, depth: int) -> Any:
        for option in options:
            resolved = self.deref(option, where)
            if resolved.get("type") != "null":
                return self.value(resolved, where, depth)
        return None

    def deref(self, schema: Any, where: str) -> dict[str, Any]:
        while isinstance(schema, dict) and "$ref" in schema:
            schema = self.resolve(schema["$ref"], where)
        if not isinstance(schema, dict):
            raise SchemaValueError(f"{where}: a schema must be an object")
        return schema

    def resolve(self, ref: Any, where: str) -> Any:
        name = str(ref).rsplit("/", 1)[-1]
        if name not in self.defs:
            raise SchemaValueError(f"{where}: $ref {ref!r} names no definition")
        return self.defs[name]


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = {**a, **b}
    if "properties" in a or "properties" in b:
        out["properties"] = {**a.get("properties", {}), **b.get("properties", {})}
        out["required"] = [*a.get("required", ()), *b.get("required", ())]
    return out


def _number(kind: str, schema: dict[str, Any]) -> int | float:
    low = schema.get("minimum")
    if low is None and "exclusiveMinimum" in schema:
        low = schema["exclusiveMinimum"] + (1 if kind == "integer" else 0.5)
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    value = low if low is not None else (min(0, high - 1) if high is not None else 0)
    step = schema.get("multipleOf")
    if step:
        value = -(-value // step) * step  # the first multiple at or above it
    return int(value) if kind == "integer" else value


__all__ = ["MAX_DEPTH", "SchemaValueError", "value_for"]
