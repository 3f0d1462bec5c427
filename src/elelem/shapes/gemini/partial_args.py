"""Vertex streamed function-call arguments (``functionCall.partialArgs``).

With ``streamFunctionCallArguments`` Vertex opens a call with ``{name,
willContinue: true}``, then sends pieces ``{jsonPath, stringValue |
numberValue | boolValue | nullValue, willContinue?}``; string pieces for the
same path concatenate.  A ``functionCall`` without ``willContinue`` ends the
call.  This module rebuilds the argument object from the pieces.
"""

from __future__ import annotations

import re
from typing import Any

from elelem.errors import MalformedStreamError

_TOKEN = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]")


def parse_path(path: str) -> list[str | int]:
    """``$.a.b[2]['c d']`` -> ``["a", "b", 2, "c d"]``; a bad path is a stream error."""
    if not path.startswith("$"):
        raise MalformedStreamError(f"gemini partialArgs jsonPath {path!r} does not start at $")
    steps: list[str | int] = []
    pos = 1
    while pos < len(path):
        found = _TOKEN.match(path, pos)
        if found is None:
            raise MalformedStreamError(f"gemini partialArgs jsonPath {path!r} is not understood")
        key, index, quoted = found.groups()
        if index is not None:
            steps.append(int(index))
        else:
            steps.append(key if key is not None else quoted.replace("\\'", "'"))
        pos = found.end()
    return steps


def _value(piece: dict[str, Any]) -> tuple[bool, Any]:
    for field in ("stringValue", "numberValue", "boolValue"):
        if field in piece:
            return True, piece[field]
    if "nullValue" in piece:
        return True, None
    return False, None


def apply_piece(args: dict[str, Any], piece: object) -> None:
    """Apply one ``partialArgs`` entry to ``args`` in place."""
    if not isinstance(piece, dict) or not isinstance(piece.get("jsonPath"), str):
        raise MalformedStreamError("gemini partialArgs entry without a jsonPath")
    present, value = _value(piece)
    steps = parse_path(piece["jsonPath"])
    if not steps:
        raise MalformedStreamError("gemini partialArgs jsonPath names no field")
    node: Any = args
    for step, following in zip(steps, [*steps[1:], None], strict=True):
        last = following is None
        child: Any = {} if isinstance(following, str) else []
        if isinstance(step, int):
            if not isinstance(node, list):
                raise MalformedStreamError(
                    f"gemini partialArgs path {piece['jsonPath']!r} mixes kinds"
                )
            while len(node) <= step:
                node.append(None)
            if last:
                node[step] = _merge(node[step], value, present, "stringValue" in piece)
            elif node[step] is None:
                node[step] = child
            node = node[step]
        else:
            if not isinstance(node, dict):
                raise MalformedStreamError(
                    f"gemini partialArgs path {piece['jsonPath']!r} mixes kinds"
                )
            if last:
                node[step] = _merge(node.get(step), value, present, "stringValue" in piece)
            elif node.get(step) is None:
                node[step] = child
            node = node[step]


def _merge(old: Any, value: Any, present: bool, is_string: bool) -> Any:
    if not present:
        return old
    if is_string and isinstance(old, str):
        return old + str(value)
    return value


__all__ = ["apply_piece", "parse_path"]
