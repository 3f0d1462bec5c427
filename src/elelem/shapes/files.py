"""OpenAI's Files API, the one Responses and Chat Completions share
(https://platform.openai.com/docs/api-reference/files/create): ``POST
{base}/files`` as ``multipart/form-data`` with ``purpose`` (``user_data``:
files a model reads) and ``file``; the answer is the file object ``{"id",
"bytes", "filename", "expires_at"?}`` (``expires_at`` in Unix seconds,
absent or null when kept until deleted).  ``GET {base}/files`` lists them
(``{"data": [...]}``), ``DELETE {base}/files/{id}`` removes one."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from elelem.shapes.multipart import multipart
from elelem.wire.files import FileRequest, FilesWire, ProviderFile, provider_file

PURPOSE = "user_data"
"""The purpose of a file a model reads as input."""


def iso_of_unix(seconds: object) -> str | None:
    """An ISO 8601 UTC time of Unix ``seconds`` (None for None)."""
    if seconds is None:
        return None
    if not isinstance(seconds, int) or isinstance(seconds, bool):
        raise TypeError(f"a time in Unix seconds must be an integer, not {seconds!r}")
    return datetime.fromtimestamp(seconds, UTC).isoformat()


_PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,254}")


def plain_id(file_id: str) -> str:
    """``file_id`` when it is one path segment of letters, digits, ``_.-``
    (so that it cannot name another endpoint), else ValueError."""
    if not _PLAIN_ID.fullmatch(file_id) or ".." in file_id:
        raise ValueError(f"{file_id!r} is not a file id")
    return file_id


def _upload(data: bytes, media_type: str, filename: str) -> FileRequest:
    body, content_type = multipart({"purpose": PURPOSE}, "file", filename, data, media_type)
    return FileRequest("POST", "files", {"content-type": content_type}, body)


def read_file(obj: dict[str, Any]) -> ProviderFile:
    """The file object of an upload or a list entry."""
    return provider_file(
        obj["id"],
        filename=obj.get("filename"),
        size=obj.get("bytes"),
        expires_at=iso_of_unix(obj.get("expires_at")),
    )


def _read_list(page: dict[str, Any]) -> list[ProviderFile]:
    return [read_file(entry) for entry in page["data"]]


OPENAI_FILES = FilesWire(
    upload=_upload,
    follow=None,
    read=read_file,
    listing=FileRequest("GET", "files", {}),
    read_listing=_read_list,
    delete=lambda file_id: FileRequest("DELETE", f"files/{plain_id(file_id)}", {}),
)
"""OpenAI's Files API (both OpenAI wires)."""

__all__ = ["OPENAI_FILES", "PURPOSE", "iso_of_unix", "plain_id", "read_file"]
