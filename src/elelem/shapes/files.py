"""OpenAI's Files API, the one Responses and Chat Completions share
(https://platform.openai.com/docs/api-reference/files/create): ``POST
{base}/files`` as ``multipart/form-data`` with ``purpose`` (``user_data``:
files a model reads) and ``file``; the answer is the file object ``{"id",
"bytes", "filename", "expires_at"?}`` (``expires_at`` in Unix seconds,
absent or null when kept until deleted).  ``GET {base}/files`` lists them
(``{"data": [...]}``), ``DELETE {base}/files/{id}`` removes one.

A file the code interpreter made lives in its container
(https://platform.openai.com/docs/guides/tools-code-interpreter): the
answer's text cites it with a ``container_file_citation`` annotation
(``container_id``, ``file_id``, ``filename``), and ``GET
{base}/containers/{container_id}/files/{file_id}/content`` returns its bytes
(https://platform.openai.com/docs/api-reference/container-files)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from elelem.shapes.multipart import multipart
from elelem.vocabulary import Message
from elelem.wire.files import (
    FileRequest,
    FilesWire,
    GeneratedFile,
    ProviderFile,
    provider_file,
)

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


def _download(file: GeneratedFile) -> FileRequest:
    if file.container_id is None:
        return FileRequest("GET", f"files/{plain_id(file.file_id)}/content", {})
    container, file_id = plain_id(file.container_id), plain_id(file.file_id)
    return FileRequest("GET", f"containers/{container}/files/{file_id}/content", {})


def container_files(message: Message) -> list[GeneratedFile]:
    """The container files an answer's ``container_file_citation``
    annotations cite (each once, in order)."""
    out: dict[tuple[str, str], GeneratedFile] = {}
    for part in message.content:
        for attribution in getattr(part, "attributions", ()) or ():
            replay = attribution.replay
            value = replay.value if replay is not None else None
            if not isinstance(value, dict) or value.get("type") != "container_file_citation":
                continue
            file_id, container = value.get("file_id"), value.get("container_id")
            if isinstance(file_id, str) and isinstance(container, str):
                name = value.get("filename")
                out.setdefault(
                    (container, file_id),
                    GeneratedFile(
                        str(replay.provider),
                        file_id,
                        container,
                        name if isinstance(name, str) else None,
                    ),
                )
    return list(out.values())


OPENAI_FILES = FilesWire(
    upload=_upload,
    follow=None,
    read=read_file,
    listing=FileRequest("GET", "files", {}),
    read_listing=_read_list,
    delete=lambda file_id: FileRequest("DELETE", f"files/{plain_id(file_id)}", {}),
    download=_download,
    generated=container_files,
)
"""OpenAI's Files API (both OpenAI wires)."""

__all__ = ["OPENAI_FILES", "PURPOSE", "container_files", "iso_of_unix", "plain_id", "read_file"]
