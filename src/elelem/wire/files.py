"""Provider file storage as a kind of exchange, types only: uploading a
blob once to a provider's Files API, listing and deleting what is there.

A shape package whose wire has a Files API holds one :class:`FilesWire` as
``files.FILES``, and its ``SHAPE.files`` is that value (None for a wire
without one).  The requests are built and the answers read here, sans-IO;
:mod:`elelem.providers.files` sends them, and
:mod:`elelem.conversation.files` maps each blob to each provider's id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from elelem.vocabulary import Message


class ProviderFile(msgspec.Struct, frozen=True):
    """One file a provider holds: ``id`` is what a request refers to it by
    (Gemini's ``uri``), ``expires_at`` an ISO 8601 UTC time when the
    provider said it will delete it (None: kept until deleted)."""

    id: str
    filename: str | None = None
    media_type: str | None = None
    size: int | None = None
    expires_at: str | None = None


def provider_file(
    file_id: object,
    *,
    filename: object = None,
    media_type: object = None,
    size: object = None,
    expires_at: str | None = None,
) -> ProviderFile:
    """A :class:`ProviderFile` of an answer's fields: the id a non-empty
    string (else TypeError), a size given as an integer or its digits, the
    name and type kept where they are strings."""
    if not isinstance(file_id, str) or not file_id:
        raise TypeError(f"a file id must be a non-empty string, not {file_id!r}")
    if isinstance(size, str) and size.isdigit():
        size = int(size)
    return ProviderFile(
        file_id,
        filename=filename if isinstance(filename, str) else None,
        media_type=media_type if isinstance(media_type, str) else None,
        size=size if isinstance(size, int) and not isinstance(size, bool) else None,
        expires_at=expires_at,
    )


class GeneratedFile(msgspec.Struct, frozen=True):
    """A file a provider's hosted code execution made, as its answer names
    it: ``file_id`` (Anthropic's Files API id, OpenAI's container file id),
    ``container_id`` the OpenAI container holding it (None elsewhere), and
    the ``filename`` the answer gave."""

    provider: str
    file_id: str
    container_id: str | None = None
    filename: str | None = None


@dataclass(frozen=True)
class FileRequest:
    """One HTTP request of the exchange: ``path`` relative to the base URL
    (or a whole URL a previous answer gave), the wire's own ``headers``
    (authentication is the endpoint's), the ``body`` bytes."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes = b""


Upload = Callable[[bytes, str, str], FileRequest]
"""``(data, media_type, filename)`` -> the first request of an upload."""

FollowUpload = Callable[[Mapping[str, str], bytes], FileRequest]
"""The first answer's headers (lower-cased) and the data -> the request that
sends the bytes (a two-step, resumable upload)."""


@dataclass(frozen=True)
class FilesWire:
    """How one wire stores files.  ``upload`` builds the first request;
    ``follow`` (None for a one-request upload) the second from the first
    answer's headers; ``read`` the last answer's JSON object into a
    :class:`ProviderFile`; ``listing`` the request of the list and
    ``read_listing`` its answer; ``delete`` the request removing a file by
    id; ``refers`` which blocks go by id.  A reader meets a missing field or a value of the wrong type with
    ``KeyError``/``TypeError``/``ValueError`` (the answer is malformed)."""

    upload: Upload
    follow: FollowUpload | None
    read: Callable[[dict[str, Any]], ProviderFile]
    listing: FileRequest
    read_listing: Callable[[dict[str, Any]], list[ProviderFile]]
    delete: Callable[[str], FileRequest]
    refers: frozenset[str] = frozenset({"image", "document"})
    """Which blocks a request may give by file id (``image``, ``document``):
    Chat Completions takes a PDF by id but an image only by URL."""
    download: Callable[[GeneratedFile], FileRequest] | None = None
    """The request of a generated file's bytes (None: the wire has none)."""
    generated: Callable[[Message], list[GeneratedFile]] | None = None
    """The files an assistant message of this wire says code execution made."""
    metadata: Callable[[str], FileRequest] | None = None
    """The request of a file's metadata by id (read by ``read``), for the
    name of a generated file its answer did not give (None: the wire has none)."""


__all__ = [
    "FileRequest",
    "FilesWire",
    "FollowUpload",
    "GeneratedFile",
    "ProviderFile",
    "Upload",
    "provider_file",
]
