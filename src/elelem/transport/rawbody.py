"""The framing of a body that has none: each network read is one frame.

An endpoint that streams a file (OpenAI's ``audio/speech`` sends the audio's
bytes as they are made, chunked) has no events to cut out: the parser is
handed each read whole, as ``message("", data)`` with ``data`` the read's
bytes, and the body's end is its only terminal event.
"""

from __future__ import annotations

RAW_FRAMING = "raw"
"""The name of this framing (a shape's ``framing``)."""


class RawDecoder:
    """Bytes in, the same bytes out as one ``("", data)`` frame per read.

    It has the other decoders' faces (:attr:`failure`, :attr:`unterminated`,
    :meth:`close`) so the driver reads it as it reads them; it never fails
    and never holds anything back: no read can be a partial frame.
    """

    failure = None
    unterminated = 0

    def feed(self, chunk: bytes) -> list[tuple[str, bytes]]:
        """The frame of one read (none for an empty read)."""
        return [("", chunk)] if chunk else []

    def close(self) -> list[tuple[str, bytes]]:
        """The body ended: nothing is held back."""
        return []


__all__ = ["RAW_FRAMING", "RawDecoder"]
