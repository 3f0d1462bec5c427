"""Reference loaders for the storage benchmark: what reading the stored events
costs *without* elelem, on the very rows the raw ``SELECT`` floor reads.

- ``msgspec_plain``: each row decoded by msgspec, the fastest JSON library for
  Python, into plain structs of the same fields, typed as loosely as msgspec
  allows while still building objects (no open-set registry, no validation
  hooks, attributions/payloads/usage left as builtins).  It is the cheapest
  typed loader of this stored form: the bound of what elelem's load can reach
  while it decodes every event, as a demanding user needs.
- ``msgspec_dicts``: ``msgspec.json.decode`` of each row into dicts.
- ``json_dicts``: the standard library's ``json.loads`` of each row.
- ``msgpack_arrays``: the same events re-stored in the cheapest form msgspec
  decodes (MessagePack, structs as arrays: no keys at all) and decoded into the
  same plain structs; measured against a raw ``SELECT`` of *those* bytes.  It
  answers whether a different stored form would reach the target.

The structs mirror the canonical form the store writes (``elelem.codec``);
unknown keys are skipped, so they track additions without failing.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import Any, Union

import msgspec

_F = list[tuple[str, Any, Any]]
_NO = msgspec.NODEFAULT

# (name, fields, tag): fields are (name, type, default); a type naming another
# struct of the family is written as its name and resolved per family.
_SPECS: list[tuple[str, _F, str | None]] = [
    (
        "Text",
        [
            ("text", str, _NO),
            ("attributions", tuple[Any, ...], ()),
            ("payloads", tuple[Any, ...], ()),
            ("complete", bool, True),
        ],
        "text",
    ),
    (
        "Payload",
        [
            ("provider", str, _NO),
            ("format", str, _NO),
            ("version", str | None, _NO),
            ("value", Any, _NO),
        ],
        None,
    ),
    (
        "Activity",
        [
            ("id", str, _NO),
            ("name", str, _NO),
            ("state", str, _NO),
            ("input", Any, None),
            ("summary", str, ""),
            ("payload", "Payload?", None),
        ],
        None,
    ),
    (
        "TurnStart",
        [("trigger", str, "user"), ("model", str | None, None), ("system", str | None, None)],
        None,
    ),
    (
        "Message",
        [
            ("role", str, _NO),
            ("content", "Text*", _NO),
            ("source", str, ""),
            ("provider", str | None, None),
            ("model", str | None, None),
        ],
        None,
    ),
    (
        "Hosted",
        [
            ("activity", "Activity", _NO),
            ("provider", str | None, None),
            ("model", str | None, None),
        ],
        None,
    ),
    (
        "Response",
        [
            ("provider", str | None, None),
            ("model", str | None, None),
            ("response_id", str | None, None),
            ("request_id", str | None, None),
            ("finish", str | None, None),
            ("finish_raw", str | None, None),
            ("failure", str | None, None),
            ("usage", dict[str, Any] | None, None),
            ("complete", bool, True),
            ("dropped", tuple[str, ...], ()),
            ("continuation", int, 0),
            ("error", str | None, None),
            ("request", str | None, None),
        ],
        None,
    ),
]
_KINDS = {
    "turn-start": "TurnStart",
    "message": "Message",
    "hosted": "Hosted",
    "response": "Response",
}


def _family(array_like: bool) -> tuple[Any, dict[str, type]]:
    """The plain structs, object- or array-shaped, and the event union."""
    made: dict[str, type] = {}

    def resolve(typ: Any) -> Any:
        if not isinstance(typ, str):
            return typ
        if typ.endswith("?"):
            return made[typ[:-1]] | None
        if typ.endswith("*"):
            return tuple[made[typ[:-1]], ...]  # type: ignore[valid-type]
        return made[typ]

    def struct(name: str, fields: _F, **config: Any) -> type:
        spec = [(n, resolve(t), msgspec.field(default=d)) for n, t, d in fields]
        return msgspec.defstruct(
            f"_Plain{name}", spec, frozen=True, gc=False, array_like=array_like, **config
        )

    for name, fields, tag in _SPECS:
        config = {"tag_field": "type", "tag": tag} if tag else {}
        made[name] = struct(name, fields, **config)
    envelope: _F = [
        ("id", str, _NO),
        ("seq", int, _NO),
        ("at", str, _NO),
        ("turn", int, _NO),
        ("response", int | None, _NO),
    ]
    events = []
    for kind, body in _KINDS.items():
        cls = struct(f"Event_{body}", [*envelope, ("body", body, _NO)], tag_field="kind", tag=kind)
        made[f"Event_{body}"] = cls
        events.append(cls)
    return Union[tuple(events)], made  # noqa: UP007 - a union built from classes


_OBJECTS, _OBJECT_CLASSES = _family(array_like=False)
_ARRAYS, _ARRAY_CLASSES = _family(array_like=True)
_PLAIN = msgspec.json.Decoder(_OBJECTS)
_PACKED = msgspec.msgpack.Decoder(_ARRAYS)
_PACK = msgspec.msgpack.Encoder()

BATCH = 256


def _load(db: sqlite3.Connection, decode: Callable[[bytes], Any]) -> int:
    cursor = db.execute("SELECT data FROM events WHERE conv = ? ORDER BY seq", (1,))
    out: list[Any] = []
    while rows := cursor.fetchmany(BATCH):
        out += [decode(r[0]) for r in rows]
    return len(out)


LOADERS: dict[str, Callable[[sqlite3.Connection], int]] = {
    "msgspec_plain": lambda db: _load(db, _PLAIN.decode),
    "msgspec_dicts": lambda db: _load(db, msgspec.json.decode),
    "json_dicts": lambda db: _load(db, json.loads),
}
"""Each loader reads the whole conversation (canonical JSON rows) and returns
how many events it built."""


def _as_arrays(value: Any) -> Any:
    if isinstance(value, msgspec.Struct):
        cls = _ARRAY_CLASSES[type(value).__name__.removeprefix("_Plain")]
        return cls(*(_as_arrays(v) for v in msgspec.structs.astuple(value)))
    if isinstance(value, tuple):
        return tuple(_as_arrays(v) for v in value)
    return value


def packed(row: bytes) -> bytes:
    """One canonical JSON event re-encoded as array-shaped MessagePack."""
    return _PACK.encode(_as_arrays(_PLAIN.decode(row)))


def load_packed(db: sqlite3.Connection) -> int:
    """Read and decode every array-shaped MessagePack row (see :func:`packed`)."""
    return _load(db, _PACKED.decode)
