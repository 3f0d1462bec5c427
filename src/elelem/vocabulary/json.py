"""The JSON value type and its validation."""

from __future__ import annotations

import math
from typing import Any, TypeAlias

JSONValue: TypeAlias = Any
"""Any JSON value: None, bool, int (any size), float, str, list, dict[str, …].

Typed as ``Any`` because recursive aliases do not reach msgspec's decoders;
:func:`check_json` is the run-time guard.
"""


def check_json(value: object, path: str = "$") -> str | None:
    """Return the path of the first non-JSON part of ``value``, or None if it is JSON.

    Floats must be finite (JSON has no NaN or infinity); mapping keys must be
    strings; lists and tuples are both JSON arrays.
    """
    stack: list[tuple[object, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if item is None or isinstance(item, (str, bool, int)):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                return where
            continue
        if isinstance(item, (list, tuple)):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(item))
            continue
        if isinstance(item, dict):
            for k, v in item.items():
                if not isinstance(k, str):
                    return f"{where}.<key {k!r}>"
                stack.append((v, f"{where}.{k}"))
            continue
        return where
    return None


__all__ = ["JSONValue", "check_json"]
