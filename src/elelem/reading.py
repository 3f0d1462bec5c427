"""Bounded reads of local inputs (files given by name, and stdin).

- Only a regular file is read by name: a FIFO would block until a writer
  came, a device such as ``/dev/zero`` never ends.  The file is opened
  without blocking (a FIFO opens at once) and checked by ``fstat`` on the
  open descriptor, so a path swapped after the check cannot slip through.
- A file's size is checked before any byte is read; a stream (a pipe on
  stdin) is read in pieces and refused as soon as it passes the limit, so
  at most ``limit + 1`` bytes are ever held.

Imports only the errors: the recordings, the providers' files and the CLI
all read through here.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from elelem.errors import ElelemError

PIECE = 1024 * 1024
"""Bytes asked of a stream at a time."""

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class ReadRefused(ElelemError, ValueError):
    """An input refused before it was read whole; the message says why
    (``not a regular file (a FIFO)``, ``larger than the read limit of N bytes``)."""


def too_large(limit: int) -> str:
    """The words for an input past ``limit`` bytes."""
    return f"larger than the read limit of {limit} bytes"


def file_kind(mode: int) -> str:
    """What a ``st_mode`` that is no regular file is: ``a FIFO``, ``a directory``…"""
    return next((name for test, name in _KINDS if test(mode)), "not a file")


def open_file(path: Path | str, limit: int) -> tuple[BinaryIO, int]:
    """The regular file at ``path`` opened for reading (blocking), and its
    size, which is at most ``limit``: for a caller that reads it in pieces.

    Raises :class:`ReadRefused` for anything but a regular file and for a
    file past ``limit``, and :class:`OSError` when it cannot be opened.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ReadRefused(f"not a regular file ({file_kind(st.st_mode)})")
        if st.st_size > limit:
            raise ReadRefused(too_large(limit))
        os.set_blocking(fd, True)
        return os.fdopen(os.dup(fd), "rb"), st.st_size
    finally:
        os.close(fd)


def read_file(path: Path | str, limit: int) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them.

    Raises :class:`ReadRefused` for anything but a regular file and for a
    file past ``limit``, and :class:`OSError` when it cannot be opened.
    """
    file, _ = open_file(path, limit)
    with file:
        return read_stream(file, limit)  # the file may have grown since fstat


def read_stream(stream: BinaryIO, limit: int) -> bytes:
    """Everything ``stream`` holds, refused with :class:`ReadRefused` as soon
    as it passes ``limit`` bytes.  A regular file behind the stream (stdin
    redirected from one) is refused by its size before it is read."""
    try:
        st = os.fstat(stream.fileno())
    except (OSError, AttributeError, ValueError):
        st = None  # an in-memory stream: no descriptor to look at
    if st is not None and stat.S_ISREG(st.st_mode) and st.st_size > limit:
        raise ReadRefused(too_large(limit))
    pieces: list[bytes] = []
    held = 0
    while True:
        piece = stream.read(min(PIECE, limit + 1 - held))
        if not piece:
            return b"".join(pieces)
        pieces.append(piece)
        held += len(piece)
        if held > limit:
            raise ReadRefused(too_large(limit))


__all__ = ["ReadRefused", "file_kind", "open_file", "read_file", "read_stream", "too_large"]
