"""A ``multipart/form-data`` body, sans-IO: the uploads of the audio and
batch endpoints (a transcription's audio, a batch's JSONL file)."""

from __future__ import annotations

import secrets
from collections.abc import Mapping

from elelem.errors import ConfigError

_QUOTED = {'"': "%22", "\r": "%0D", "\n": "%0A"}
"""What a quoted header value may not hold, escaped as browsers do."""


def _text(key: str, value: str) -> bytes:
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ConfigError(
            f"the {key} is not valid UTF-8 text (at character {exc.start + 1})"
        ) from None


def multipart(
    fields: Mapping[str, str], name: str, filename: str, content: bytes, content_type: str
) -> tuple[bytes, str]:
    """A ``multipart/form-data`` body of text ``fields`` and one file; and its
    content type.  A field that is not UTF-8 text is a
    :class:`~elelem.errors.ConfigError` naming it; the file's name has its
    quotes and line breaks escaped (a name could otherwise end the header
    and forge another) and is sent as UTF-8, undecodable bytes replaced."""
    boundary = "elelem-" + secrets.token_hex(16)
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n'.encode()
        + _text(key, value)
        + b"\r\n"
        for key, value in fields.items()
    ]
    safe = "".join(_QUOTED.get(c, c) for c in filename)
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{safe}"'
        f"\r\nContent-Type: {content_type}\r\n\r\n".encode("utf-8", "replace")
        + content
        + b"\r\n"
    )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


__all__ = ["multipart"]
