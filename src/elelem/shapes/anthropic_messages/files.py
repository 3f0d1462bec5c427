"""Anthropic's Files API (beta ``files-api-2025-04-14``,
https://platform.claude.com/docs/en/api/files-create): ``POST /v1/files``
as ``multipart/form-data`` with one ``file`` field; the answer ``{"id",
"filename", "mime_type", "size_bytes", "created_at", "type": "file"}`` (a
file is kept until deleted).  ``GET /v1/files`` lists them (``{"data":
[...]}``), ``DELETE /v1/files/{id}`` removes one.  A message refers to a
file as ``{"type": "file", "file_id": …}`` (:mod:`.media`)."""

from __future__ import annotations

from typing import Any

from elelem.shapes.anthropic_messages.content import FILES_BETA
from elelem.shapes.files import plain_id
from elelem.shapes.multipart import multipart
from elelem.wire.files import FileRequest, FilesWire, ProviderFile, provider_file

HEADERS = {"anthropic-version": "2023-06-01", "anthropic-beta": FILES_BETA}
"""The headers of every Files API request."""


def _upload(data: bytes, media_type: str, filename: str) -> FileRequest:
    body, content_type = multipart({}, "file", filename, data, media_type)
    return FileRequest("POST", "v1/files", {**HEADERS, "content-type": content_type}, body)


def read_file(obj: dict[str, Any]) -> ProviderFile:
    """The file metadata of an upload or a list entry."""
    return provider_file(
        obj["id"],
        filename=obj.get("filename"),
        media_type=obj.get("mime_type"),
        size=obj.get("size_bytes"),
    )


def _read_list(page: dict[str, Any]) -> list[ProviderFile]:
    return [read_file(entry) for entry in page["data"]]


FILES = FilesWire(
    upload=_upload,
    follow=None,
    read=read_file,
    listing=FileRequest("GET", "v1/files", HEADERS),
    read_listing=_read_list,
    delete=lambda file_id: FileRequest("DELETE", f"v1/files/{plain_id(file_id)}", HEADERS),
)
"""How the Messages wire stores files."""

__all__ = ["FILES", "HEADERS", "read_file"]
