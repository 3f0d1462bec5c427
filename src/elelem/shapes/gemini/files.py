"""Gemini's Files API (https://ai.google.dev/gemini-api/docs/files,
https://ai.google.dev/api/files): a resumable upload in two requests.
``POST /upload/v1beta/files`` with ``X-Goog-Upload-Protocol: resumable``,
``X-Goog-Upload-Command: start``, the size and type in
``X-Goog-Upload-Header-Content-Length``/``-Type`` and ``{"file":
{"display_name"}}`` answers with the upload URL in ``X-Goog-Upload-URL``;
the bytes go there with ``X-Goog-Upload-Command: upload, finalize`` and
offset 0, answered ``{"file": {"name": "files/…", "uri", "mimeType",
"sizeBytes", "expirationTime"}}`` (files expire after 48 hours).  A part
refers to it as ``fileData.fileUri`` (:mod:`.media`), so the ``uri`` is
the id kept.  ``GET /v1beta/files`` lists them (``{"files": [...]}``),
``DELETE /v1beta/files/{name}`` removes one."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec

from elelem.wire.files import FileRequest, FilesWire, ProviderFile, provider_file


def _upload(data: bytes, media_type: str, filename: str) -> FileRequest:
    headers = {
        "x-goog-upload-protocol": "resumable",
        "x-goog-upload-command": "start",
        "x-goog-upload-header-content-length": str(len(data)),
        "x-goog-upload-header-content-type": media_type,
        "content-type": "application/json",
    }
    body = msgspec.json.encode({"file": {"display_name": filename}})
    return FileRequest("POST", "upload/v1beta/files", headers, body)


def _follow(answer: Mapping[str, str], data: bytes) -> FileRequest:
    url = answer["x-goog-upload-url"]
    if not url.startswith(("https://", "http://")):
        raise ValueError(f"the upload URL is not an http(s) URL: {url[:80]!r}")
    headers = {"x-goog-upload-offset": "0", "x-goog-upload-command": "upload, finalize"}
    return FileRequest("POST", url, headers, data)


_NAME = re.compile(r"files/[a-z0-9][a-z0-9-]{0,39}")
"""A file's resource name (its id: lowercase letters, digits and dashes)."""


def file_name(file_id: str) -> str:
    """The resource name (``files/abc``) of a file's URI (or of the name itself)."""
    at = file_id.find("files/")
    if at < 0 or not _NAME.fullmatch(file_id[at:]):
        raise ValueError(f"{file_id!r} names no Gemini file (files/…)")
    return file_id[at:]


def _read_entry(obj: dict[str, Any]) -> ProviderFile:
    expires = obj.get("expirationTime")
    return provider_file(
        obj["uri"],
        filename=obj.get("displayName"),
        media_type=obj.get("mimeType"),
        size=obj.get("sizeBytes"),
        expires_at=expires if isinstance(expires, str) else None,
    )


def read_file(answer: dict[str, Any]) -> ProviderFile:
    """The ``file`` of the finalizing answer."""
    return _read_entry(answer["file"])


def _read_list(page: dict[str, Any]) -> list[ProviderFile]:
    return [_read_entry(entry) for entry in page.get("files", [])]


FILES = FilesWire(
    upload=_upload,
    follow=_follow,
    read=read_file,
    listing=FileRequest("GET", "v1beta/files", {}),
    read_listing=_read_list,
    delete=lambda file_id: FileRequest("DELETE", f"v1beta/{file_name(file_id)}", {}),
)
"""How the Gemini wire stores files."""

__all__ = ["FILES", "file_name", "read_file"]
