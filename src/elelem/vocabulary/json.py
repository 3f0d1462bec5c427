"""The JSON value type and its validation."""

from __future__ import annotations

import math
from typing import Any, NoReturn, TypeAlias

import msgspec

from elelem.errors import DecodeError

JSONValue: TypeAlias = Any
"""Any JSON value: None, bool, int (any size), float, str, list, dict[str, …].

Typed as ``Any`` because recursive aliases do not reach msgspec's decoders;
:func:`check_json` is the run-time guard.
"""


TOO_DEEP = "JSON nested too deeply to decode"
"""What :func:`decode_json` says of JSON nested past the recursion limit."""


def decode_json(data: bytes | str, type: Any = Any) -> Any:
    """:func:`msgspec.json.decode`, with JSON nested past the interpreter's
    recursion limit raised as the :class:`msgspec.DecodeError` any other bad
    JSON raises (``JSON nested too deeply to decode``): every caller that
    handles bad JSON then handles it, instead of a ``RecursionError``
    escaping as a crash."""
    try:
        return msgspec.json.decode(data, type=type)
    except RecursionError:
        raise msgspec.DecodeError(TOO_DEEP) from None


def check_json(value: object, path: str = "$") -> str | None:
    """Return the path of the first non-JSON part of ``value``, or None if it is JSON.

    Floats must be finite (JSON has no NaN or infinity); mapping keys must be
    strings; lists and tuples are both JSON arrays.  A container that contains
    itself is not JSON (its path is reported instead of looping forever).  The
    path never shows a value, only keys and indices, since values may be
    untrusted.
    """
    if value is None or isinstance(value, (str, bool, int)):
        # Fast path: most payloads (signatures, ids) are one string.
        return None
    if type(value) is dict:
        # Usage objects, most tool inputs: scalars proved here without a call
        # per value, a nested member (Gemini's per-modality counts) by _plain.
        for key, item in value.items():
            if type(key) is not str:
                break
            kind = type(item)
            if kind in _SCALARS:
                continue
            if (kind is dict or kind is list) and _plain(item, _PLAIN_DEPTH - 1):
                continue
            break
        else:
            return None
    if _plain(value, _PLAIN_DEPTH):
        return None
    return _walk(value, path)


def require_json(value: object, path: str, what: str) -> None:
    """Refuse ``value`` unless it is JSON (see :func:`check_json`): a
    :class:`~elelem.errors.DecodeError` saying ``what`` is not, at the path
    of its first non-JSON part."""
    bad = check_json(value, path)
    if bad is not None:
        raise DecodeError(f"{what} is not JSON", bad)


def _walk(value: object, path: str) -> str | None:
    # Iterative depth-first walk; ``active`` holds the containers on the
    # current path so a cycle is caught while shared sub-objects (a DAG) pass.
    active: set[int] = set()
    stack: list[tuple[object, str | None]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if where is None:  # leaving a container
            active.discard(id(item))
            continue
        if item is None or isinstance(item, (str, bool, int)):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                return where
            continue
        if isinstance(item, (list, tuple, dict)):
            if id(item) in active:
                return where
            active.add(id(item))
            stack.append((item, None))
            if isinstance(item, dict):
                for k, v in item.items():
                    if not isinstance(k, str):
                        return f"{where}.<key of type {type(k).__name__}>"
                    stack.append((v, f"{where}.{k}"))
            else:
                stack.extend((v, f"{where}[{i}]") for i, v in enumerate(item))
            continue
        return where
    return None


# Every decoded payload, input and usage passes check_json, so the common case
# (exact JSON types, not deep) is proved by a walk that builds no paths; it
# says nothing about anything else (a subclass, a non-finite float, a deeper
# or cyclic value), which the walk above then examines, reporting the path.
_PLAIN_DEPTH = 64
_SCALARS = frozenset({str, int, bool, type(None)})


def _plain(value: object, depth: int) -> bool:
    t = type(value)
    if t is dict:
        if depth == 0:
            return False
        for k, item in value.items():  # type: ignore[attr-defined]
            if type(k) is not str:
                return False
            ti = type(item)
            if not (
                ti is str or ti is int or ti is bool or item is None or _plain(item, depth - 1)
            ):
                return False
        return True
    if t is list or t is tuple:
        if depth == 0:
            return False
        for item in value:  # type: ignore[attr-defined]
            ti = type(item)
            if not (
                ti is str or ti is int or ti is bool or item is None or _plain(item, depth - 1)
            ):
                return False
        return True
    if t is float:
        return math.isfinite(value)  # type: ignore[arg-type]
    return value is None or t is str or t is int or t is bool


def _refuse(*args: object, **kwargs: object) -> NoReturn:
    del args, kwargs
    raise TypeError("a provider payload's value is immutable: copy it (copy.deepcopy) to change it")


class _Frozen:
    """How a frozen container copies and pickles, the same for both kinds:
    deep-copied, a plain changeable copy; pickled, frozen again on load."""

    __slots__ = ()

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return thaw(self)

    def __reduce__(self) -> tuple[Any, tuple[Any]]:
        return (freeze, (thaw(self),))


class FrozenDict(_Frozen, dict):  # type: ignore[type-arg]
    """A JSON object that refuses change (a payload's value): still a
    ``dict`` to every reader and encoder; ``copy.deepcopy`` of it is a plain,
    changeable copy."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __copy__(self) -> dict[str, Any]:
        return dict(self)


class FrozenList(_Frozen, list):  # type: ignore[type-arg]
    """A JSON array that refuses change (see :class:`FrozenDict`)."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __copy__(self) -> list[Any]:
        return list(self)


def freeze(value: JSONValue) -> JSONValue:
    """``value`` (JSON) as a copy no one can change: objects and arrays become
    :class:`FrozenDict` and :class:`FrozenList` all the way down (a tuple an
    array); scalars are themselves.  An already frozen value is returned as it is."""
    kind = type(value)
    if kind is FrozenDict or kind is FrozenList:
        return value
    if isinstance(value, dict):
        return FrozenDict({k: freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return FrozenList(freeze(v) for v in value)
    return value


def thaw(value: JSONValue) -> JSONValue:
    """A plain, changeable deep copy of a JSON value (frozen or not)."""
    if isinstance(value, dict):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(v) for v in value]
    return value


__all__ = [
    "FrozenDict",
    "FrozenList",
    "JSONValue",
    "check_json",
    "freeze",
    "require_json",
    "thaw",
]
