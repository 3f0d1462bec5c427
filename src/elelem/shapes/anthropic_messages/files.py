"""Anthropic's Files API (beta ``files-api-2025-04-14``,
https://platform.claude.com/docs/en/api/files-create): ``POST /v1/files``
as ``multipart/form-data`` with one ``file`` field; the answer ``{"id",
"filename", "mime_type", "size_bytes", "created_at", "type": "file"}`` (a
file is kept until deleted).  ``GET /v1/files`` lists them (``{"data":
[...]}``), ``DELETE /v1/files/{id}`` removes one.  A message refers to a
file as ``{"type": "file", "file_id": …}`` (:mod:`.media`).

Files the code execution tool makes are Files API files too
(https://docs.claude.com/en/docs/agents-and-tools/tool-use/code-execution-tool,
"Retrieve generated files"): its result block holds ``{"type":
"bash_code_execution_output", "file_id": …}`` entries (``code_execution_output``
in the older version); ``GET /v1/files/{id}`` gives its name and type and
``GET /v1/files/{id}/content`` its bytes."""

from __future__ import annotations

from typing import Any

from elelem.shapes.anthropic_messages.content import FILES_BETA
from elelem.shapes.files import plain_id
from elelem.shapes.multipart import multipart
from elelem.vocabulary import HostedActivity, Message
from elelem.wire.files import (
    FileRequest,
    FilesWire,
    GeneratedFile,
    ProviderFile,
    provider_file,
)

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


def _download(file: GeneratedFile) -> FileRequest:
    return FileRequest("GET", f"v1/files/{plain_id(file.file_id)}/content", HEADERS)


def _outputs(value: Any, provider: str, out: dict[str, GeneratedFile]) -> None:
    # Any ``*_output`` entry with a file id, however deep the result nests it.
    if isinstance(value, dict):
        kind, file_id = value.get("type"), value.get("file_id")
        if isinstance(kind, str) and kind.endswith("_output") and isinstance(file_id, str):
            out.setdefault(file_id, GeneratedFile(provider, file_id))
        for item in value.values():
            _outputs(item, provider, out)
    elif isinstance(value, list):
        for item in value:
            _outputs(item, provider, out)


def code_execution_files(message: Message) -> list[GeneratedFile]:
    """The files the code execution results of an answer name (each once)."""
    out: dict[str, GeneratedFile] = {}
    for part in message.content:
        payload = part.payload if isinstance(part, HostedActivity) else None
        if payload is not None:
            _outputs(payload.value, str(payload.provider), out)
    return list(out.values())


FILES = FilesWire(
    upload=_upload,
    follow=None,
    read=read_file,
    listing=FileRequest("GET", "v1/files", HEADERS),
    read_listing=_read_list,
    delete=lambda file_id: FileRequest("DELETE", f"v1/files/{plain_id(file_id)}", HEADERS),
    download=_download,
    generated=code_execution_files,
    metadata=lambda file_id: FileRequest("GET", f"v1/files/{plain_id(file_id)}", HEADERS),
)
"""How the Messages wire stores files."""

__all__ = ["FILES", "HEADERS", "code_execution_files", "read_file"]
