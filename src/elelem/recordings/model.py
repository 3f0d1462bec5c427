"""The neutral shape of a recording: its interactions, each a request (where
one was recorded) and a response, and the error a bad recording raises.

:mod:`elelem.recordings.cassettes` reads every corpus format into these;
:mod:`elelem.recordings.rawfile` serves a large raw stream from its file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from elelem.errors import ElelemError
from elelem.reading import ReadRefused, too_large
from elelem.vocabulary.json import JSONValue

RecordingFormat = Literal[
    "vcr", "when-then", "chunks", "sse", "json", "ndjson", "eventstream",
    "ruby-vcr", "json-wrapper", "har", "nock", "pairs", "httprr", "test-proxy",
]  # fmt: skip


class RecordingError(ElelemError, ValueError):
    """A file is not a readable recording; the message names the file and the problem."""

    def __init__(self, path: Path | str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = str(path)
        self.problem = problem


def unreadable(path: Path, exc: ReadRefused | OSError, max_bytes: int) -> RecordingError:
    """The :class:`RecordingError` for a recording that could not be read
    (``exc`` says why: too large, not a regular file, an OS error)."""
    if isinstance(exc, ReadRefused):
        if str(exc) == too_large(max_bytes):
            return RecordingError(path, f"{exc} (--max-bytes)")
        return RecordingError(path, f"cannot read: {exc}")
    return RecordingError(path, f"cannot read: {exc.strerror or exc}")


@dataclass(frozen=True)
class RecordedRequest:
    """A recorded HTTP request.

    ``uri`` is the full URI where the recorder kept one; ``path`` and
    ``query`` are its parts (``/v1/messages``, ``beta=true``).  Header names
    are lower-case; repeated values are joined with ``", "``.  ``body`` is the
    body text as recorded (None where only a parsed form was kept); ``json``
    is the parsed JSON body, or None when the body is not JSON.
    """

    method: str
    path: str
    query: str = ""
    uri: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    body: str | None = None
    json: JSONValue = None


@dataclass(frozen=True)
class RecordedResponse:
    """A recorded HTTP response.

    ``body`` holds the response bytes; ``body_exact`` is False when they are
    not the original bytes: a JSON body the recorder re-serialized (its
    structure is right), or a chunk file's payloads reframed as ``data:``
    frames (each payload verbatim, the lost event names not invented).  ``streamed`` is True for SSE and NDJSON bodies.
    """

    status: int
    headers: Mapping[str, str]
    body: bytes
    streamed: bool
    body_exact: bool = True
    encoding: str = ""
    """The content-coding the recorded bytes had (``gzip``, ``deflate``,
    ``br``), decoded into :attr:`body`; ``""`` when they were not encoded."""

    @property
    def content_type(self) -> str:
        """The media type, lower-case, without parameters (``""`` if none)."""
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    def json(self) -> JSONValue:
        """The body parsed as JSON (raises :class:`ValueError` if it is not)."""
        return json.loads(self.body)


@dataclass(frozen=True)
class Interaction:
    """One request (None where the format records none) and its response."""

    index: int
    request: RecordedRequest | None
    response: RecordedResponse


@dataclass(frozen=True)
class Recording:
    """Every interaction of one recording file, in recorded order."""

    path: Path
    format: RecordingFormat
    interactions: tuple[Interaction, ...]


@dataclass(frozen=True)
class SSEFrame:
    """One server-sent event: its name (``""`` when the frame named none) and data."""

    event: str
    data: str


MAX_RECORDING_BYTES = 64 * 1024 * 1024
"""The most of a recording :func:`load` reads (``/dev/zero`` is no recording)."""


__all__ = [
    "MAX_RECORDING_BYTES",
    "Interaction",
    "RecordedRequest",
    "RecordedResponse",
    "Recording",
    "RecordingError",
    "RecordingFormat",
    "SSEFrame",
    "unreadable",
]
