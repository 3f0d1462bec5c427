"""One JSON line on stdout, written as it is encoded, never built whole.

``--json`` output can hold an answer of hundreds of megabytes (a long
transcript, a batch result): :func:`echo_json` writes such a value in pieces
of at most :data:`PIECE` characters each, so printing it costs a piece, not
the encoded text (ASCII-escaped, which can be several times the answer)
plus its bytes on the way out.  Long strings are encoded a slice at a time;
objects and arrays member by member; what is deeper than
:data:`MAX_DEPTH` or small is encoded whole.

The output is what ``json.dumps(value, ensure_ascii=True)`` gives, with
DEL escaped too: pure ASCII, no control character, safe on a terminal.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import click

from elelem.vocabulary.json import JSONValue

PIECE = 1 << 20
"""The most characters encoded, and written, at a time."""

MAX_DEPTH = 64
"""How deep :func:`json_pieces` walks into objects and arrays; a value
deeper than that is encoded whole (a long string so deep is rare)."""


def _whole(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True).replace("\x7f", "\\u007f")


def _key(key: Any) -> str:
    # A key as json.dumps spells it (numbers, booleans and null as strings).
    return _whole({key: None})[1:-7]


def json_pieces(value: Any, depth: int = 0) -> Iterator[str]:
    """``value`` as ASCII JSON text, in pieces of at most about
    :data:`PIECE` characters (a slice of a string escapes on its own: every
    code point is escaped alone)."""
    if isinstance(value, str) and len(value) > PIECE:
        yield '"'
        for start in range(0, len(value), PIECE):
            yield _whole(value[start : start + PIECE])[1:-1]
        yield '"'
    elif isinstance(value, dict) and value and depth < MAX_DEPTH:
        opening = "{"
        for key, member in value.items():
            yield opening + _key(key) + ": "
            yield from json_pieces(member, depth + 1)
            opening = ", "
        yield "}"
    elif isinstance(value, (list, tuple)) and value and depth < MAX_DEPTH:
        opening = "["
        for member in value:
            yield opening
            yield from json_pieces(member, depth + 1)
            opening = ", "
        yield "]"
    else:
        yield _whole(value)


def write_json_line(value: Any, write: Callable[[str], Any]) -> None:
    """Write ``value`` as one line of ASCII JSON through ``write``, small
    pieces gathered into writes of about :data:`PIECE` characters."""
    held: list[str] = []
    size = 0
    for piece in json_pieces(value):
        held.append(piece)
        size += len(piece)
        if size >= PIECE:
            write("".join(held))
            held, size = [], 0
    held.append("\n")
    write("".join(held))


def echo_json(value: Any) -> None:
    """Print ``value`` as one line of ASCII JSON on stdout, as it is encoded."""
    write_json_line(value, lambda text: click.echo(text, nl=False))


def ndjson_line(obj: JSONValue) -> str:
    """One compact, ASCII-only JSON line (DEL escaped too: nothing reaches a terminal raw)."""
    return json.dumps(obj, ensure_ascii=True, separators=(",", ":")).replace("\x7f", "\\u007f")


__all__ = ["MAX_DEPTH", "PIECE", "echo_json", "json_pieces", "ndjson_line", "write_json_line"]
