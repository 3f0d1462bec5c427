"""A raw streamed body (SSE, NDJSON, an AWS event stream) read from its
file a piece at a time, never held whole.

:func:`~elelem.recordings.cassettes.load` reads a recording into memory,
which a container format (a cassette, a HAR file) needs.  A raw stream is
one response: its format is told from its first bytes (and, for NDJSON, a
pass over its lines that keeps one line at a time), its wire shape from
its first frame, and the loopback server serves it from the file
(:class:`~elelem.recordings.loopback.SendFile`), so reading a 60 MB
stream holds what the driver assembles from it, not the stream.  The
format is decided exactly as :func:`~elelem.recordings.cassettes.detect_format`
would; anything else (a chunk dump, one JSON body, a gzip file) is left to
:func:`~elelem.recordings.cassettes.load`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

from elelem.reading import ReadRefused, open_file
from elelem.recordings.bodies import SSE_START, head, is_blank, is_eventstream
from elelem.recordings.cassettes import RAW_TYPES, RESPONSE_START_TYPES
from elelem.recordings.loopback import Reply, SendFile
from elelem.recordings.model import (
    MAX_RECORDING_BYTES,
    Interaction,
    RecordedResponse,
    unreadable,
)
from elelem.recordings.replaying import served_content_type

HEAD_BYTES = 64 * 1024
"""How much of the file is read to tell its format, and at a time after."""

RawFormat = Literal["sse", "ndjson", "eventstream"]


@dataclass(frozen=True)
class RawBodyFile:
    """A raw streamed body in a file: its path, format and size (at most
    the read limit), and its first bytes."""

    path: Path
    format: RawFormat
    size: int
    first: bytes

    def interaction(self) -> Interaction:
        """The recording's one interaction, its response body only the
        file's first bytes (what the content type is told from); the whole
        body is served by :meth:`reply`."""
        response = RecordedResponse(
            status=200,
            headers={"content-type": RAW_TYPES[self.format]},
            body=self.first,
            streamed=True,
        )
        return Interaction(index=0, request=None, response=response)

    def pieces(self) -> Iterator[bytes]:
        """The file's bytes, a piece at a time (at most :attr:`size`)."""
        with self.path.open("rb") as file:
            left = self.size
            while left > 0:
                piece = file.read(min(HEAD_BYTES, left))
                if not piece:
                    return
                left -= len(piece)
                yield piece

    def reply(self) -> Reply:
        """The loopback reply serving the whole file, a piece at a time."""
        content_type = served_content_type(self.interaction().response)
        return Reply(200, {"content-type": content_type}, (SendFile(self.path, self.size),))


def open_raw_body(path: Path | str, max_bytes: int = MAX_RECORDING_BYTES) -> RawBodyFile | None:
    """The raw stream at ``path``, or None when it is another format
    (for :func:`~elelem.recordings.cassettes.load`).  A file that cannot be
    read, or is longer than ``max_bytes``, raises the
    :class:`~elelem.recordings.model.RecordingError` ``load`` would."""
    p = Path(path)
    try:
        file, size = open_file(p, max_bytes)
    except (ReadRefused, OSError) as exc:
        raise unreadable(p, exc, max_bytes) from None
    with file:
        first = file.read(HEAD_BYTES)
        fmt = _format(p, first, file)
    return RawBodyFile(p, fmt, size, first) if fmt is not None else None


def _format(path: Path, first: bytes, file: BinaryIO) -> RawFormat | None:
    if first[:2] == b"\x1f\x8b" or is_blank(first):
        return None  # a gzip file, or an empty one: load says what it is
    if is_eventstream(first):
        return "eventstream"
    if path.name.endswith((".chunks.txt", ".yaml", ".yml")):
        return None
    start = head(first, 200)
    if start.startswith(SSE_START):
        return "sse"
    if start.startswith(b"{"):
        file.seek(0)
        return "ndjson" if _ndjson(file) else None
    return None


def _ndjson(file: BinaryIO) -> bool:
    """True when every non-blank line is a JSON object, there are several,
    and none begins a response (that is a chunk dump): one line held at a
    time, and a one-line file (a HAR, say) is not parsed at all."""
    if not _several_lines(file):
        return False
    file.seek(0)
    for line in file:
        if is_blank(line):
            continue
        if head(line, 1) != b"{":
            return False
        try:
            payload = json.loads(line)
        except (ValueError, RecursionError):
            return False  # a chunk dump's bad line: load names it
        if isinstance(payload, dict) and payload.get("type") in RESPONSE_START_TYPES:
            return False
    return True


def _several_lines(file: BinaryIO) -> bool:
    """Whether text follows the end of the first line that holds any, read
    a piece at a time (a one-line file of 45 MB is never held whole)."""
    started = ended = False
    while piece := file.read(HEAD_BYTES):
        if ended:
            if not is_blank(piece):
                return True
            continue
        offset = 0
        if not started:
            if is_blank(piece):
                continue  # leading blank lines
            started = True
            offset = len(piece) - len(piece.lstrip())
        at = piece.find(b"\n", offset)
        if at >= 0:
            ended = True
            if not is_blank(piece[at:]):
                return True
    return False


__all__ = ["HEAD_BYTES", "RawBodyFile", "RawFormat", "open_raw_body"]
