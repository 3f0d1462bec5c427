"""Inputs read from files and stdin, bounded: lines of a file, JSONL rows,
the prompt piped on stdin."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

from elelem.cli.exits import EXIT_USAGE, Failure
from elelem.reading import ReadRefused, read_file, read_stream, too_large
from elelem.vocabulary.json import TOO_DEEP, JSONValue

INPUT_LIMIT = 256 * 1024 * 1024
"""The most bytes a file of lines (``embed -i``, ``batch submit``) may
hold: above the largest batch file a provider takes (Anthropic 256 MB)."""


def input_lines(source: str, limit: int) -> Iterator[tuple[int, str]]:
    """``(number, text)`` of each line of the file ``source`` (``-``: stdin),
    read bounded: a FIFO, a device or a directory is refused before any byte
    is read, a file past ``limit`` (a command's ``--max-bytes``) by its
    size, a stream once it passes it.
    A usage :class:`Failure` names the input and why (bytes that are not
    UTF-8 text name their line: they are never guessed at)."""
    name = "stdin" if source == "-" else source
    try:
        data = read_stream(sys.stdin.buffer, limit) if source == "-" else read_file(source, limit)
    except ReadRefused as exc:
        told = " (--max-bytes)" if str(exc) == too_large(limit) else ""
        raise Failure(f"{name}: {exc}{told}", EXIT_USAGE) from None
    except OSError as exc:
        raise Failure(f"{name}: {exc.strerror or exc}", EXIT_USAGE) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = data.rfind(b"\n", 0, exc.start) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        raise Failure(
            f"{name} line {line} is not UTF-8 text"
            f" (byte 0x{data[exc.start]:02x} at offset {exc.start - start})",
            EXIT_USAGE,
        ) from None
    for number, piece in enumerate(text.split("\n"), start=1):
        yield number, piece.rstrip("\r")


def jsonl_row(text: str, number: int) -> JSONValue:
    """Line ``number`` of a JSONL input, decoded; a usage :class:`Failure`
    when it is not JSON, is nested past what can be decoded, or holds a
    lone surrogate."""
    try:
        value: JSONValue = json.loads(text)
        # A \ud800 escape decodes to a lone surrogate: not text, so nothing
        # can store or send it.
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except json.JSONDecodeError as exc:
        raise Failure(f"line {number} is not JSON: {exc.msg}", EXIT_USAGE) from None
    except RecursionError:
        raise Failure(f"line {number} is {TOO_DEEP}", EXIT_USAGE) from None
    except UnicodeEncodeError as exc:
        unit = exc.object[exc.start]
        raise Failure(
            f"line {number} holds a lone surrogate (U+{ord(unit):04X}), which is not text",
            EXIT_USAGE,
        ) from None
    return value


def stdin_text(limit: int) -> str | None:
    """The prompt piped on stdin (at most ``limit`` bytes of UTF-8 text, a
    usage :class:`Failure` otherwise), or None when stdin is a terminal."""
    if sys.stdin is None or sys.stdin.isatty():
        return None
    try:
        data = read_stream(sys.stdin.buffer, limit)
    except ReadRefused as exc:
        raise Failure(f"stdin: {exc}", EXIT_USAGE) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Failure(f"stdin is not UTF-8 text (byte {exc.start})", EXIT_USAGE) from None
