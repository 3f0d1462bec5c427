"""Uploading blobs to a provider's Files API once and sending them by id
(issue #42): the IO of :mod:`elelem.wire.files`' requests.

A :class:`FileUploader` serves turns (``files=`` of
:func:`elelem.turns.drive.send`, opt-in: docs/cli.md says why).  Before a
request it gives each image and PDF document of the history the id the
provider holds it under (:meth:`FileUploader.refer`), uploading each blob
that has no live id there first, once, and recording the id and the expiry
the provider gave in the store's ``provider_files`` table
(:class:`~elelem.conversation.files.ProviderFiles`).  When the provider
answers that a file it was sent by id is gone (404, or an error naming the
id) :meth:`FileUploader.lost` forgets those ids, and the turn sends the
request once more, uploading them again.

The requests are blocking (the turn engine runs them in a worker thread
under the async driver), with the endpoint's own authentication; a failed
one is the typed :class:`~elelem.errors.StreamError` its status names,
with the key redacted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx2

from elelem.conversation.files import (
    FileRef,
    ProviderFiles,
    refer_messages,
    uploadable,
    utc_time,
)
from elelem.conversation.sqlschema import SQLOps
from elelem.conversation.store import Clock, format_time, utc_now
from elelem.errors import (
    ConfigError,
    LimitExceededError,
    MalformedStreamError,
    StreamError,
    TransportError,
    UnsupportedError,
)
from elelem.providers.catalog import Target
from elelem.providers.listing import json_answer
from elelem.transport.endpoint import Endpoint
from elelem.vocabulary import Blob, DocumentBlock, ImageBlock, Message
from elelem.vocabulary.registry import RecordTable
from elelem.wire.files import FileRequest, FilesWire, GeneratedFile, ProviderFile

TIMEOUT = 120.0
"""Seconds an upload, list or delete may take."""

GONE_STATUSES = frozenset({400, 403, 404})
"""Statuses with which providers say a file id is unknown (Anthropic and
OpenAI 404 or 400 naming it, Gemini 403 naming it)."""


FILES_PROVIDERS: Mapping[str, str] = RecordTable(lambda r: r.kinds.get("files"))
"""The providers whose Files API elelem uses (their records' ``files``
kind): a wire's ``files`` is its documented API, but most servers speaking
a wire (the OpenAI-compatible ones above all) have no ``/files``, and a
turn to them sends bytes."""


def files_wire(target: Target) -> FilesWire:
    """The Files API of ``target``'s wire (UnsupportedError when it has none)."""
    wire = getattr(target.shape, "files", None)
    if not isinstance(wire, FilesWire) or target.endpoint.signer is not None:
        raise UnsupportedError(
            f"provider {target.provider}: uploading files is not supported"
            f" (shape {getattr(target.shape, 'name', '?')})"
        )
    return wire


def _same_origin(url: str, base: str) -> bool:
    a, b = urlsplit(url), urlsplit(base)
    return (a.scheme, a.netloc) == (b.scheme, b.netloc)


def send_file_request(
    endpoint: Endpoint, http: httpx2.Client, request: FileRequest, what: str
) -> tuple[Mapping[str, str], dict[str, Any]]:
    """Send one request of the exchange; its answer's headers (lower-cased)
    and JSON object (empty for an empty answer)."""
    url = endpoint.url(request.path)
    if not _same_origin(url, endpoint.base_url):
        # A URL an answer gave: the key goes nowhere but the provider's host.
        raise MalformedStreamError(
            f"provider {endpoint.provider}: {what}: the answer named another host"
        )
    try:
        response = http.request(
            request.method,
            url,
            content=request.body or None,
            headers=endpoint.request_headers(request.headers),
        )
    except httpx2.HTTPError as exc:
        raise TransportError(
            endpoint.redact(f"provider {endpoint.provider}: {what} failed: {exc}")
        ) from None
    headers = {k.lower(): v for k, v in response.headers.items()}
    return headers, json_answer(endpoint, response.status_code, response.content, what, empty=True)


def _read(endpoint: Endpoint, what: str, reader: Any, answer: Any) -> Any:
    try:
        return reader(answer)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise MalformedStreamError(
            f"provider {endpoint.provider}: {what}: not in the documented form"
            f" ({type(exc).__name__}: {exc})"
        ) from None


def upload_blob(
    target: Target, http: httpx2.Client, data: bytes, media_type: str, filename: str
) -> ProviderFile:
    """Upload ``data`` to ``target``'s provider; the file it now holds."""
    wire, endpoint = files_wire(target), target.endpoint
    headers, answer = send_file_request(
        endpoint, http, wire.upload(data, media_type, filename), "uploading a file"
    )
    if wire.follow is not None:
        step = _read(endpoint, "starting an upload", lambda h: wire.follow(h, data), headers)
        headers, answer = send_file_request(endpoint, http, step, "uploading a file")
    found: ProviderFile = _read(endpoint, "uploading a file", wire.read, answer)
    if found.expires_at is not None:
        _read(endpoint, "uploading a file: its expiry", utc_time, found.expires_at)
    return found


def list_files(target: Target, http: httpx2.Client) -> list[ProviderFile]:
    """The files ``target``'s provider holds (the first page of its list)."""
    wire = files_wire(target)
    _, answer = send_file_request(target.endpoint, http, wire.listing, "listing files")
    found: list[ProviderFile] = _read(target.endpoint, "listing files", wire.read_listing, answer)
    return found


def delete_file(target: Target, http: httpx2.Client, file_id: str) -> None:
    """Delete ``file_id`` at ``target``'s provider."""
    wire = files_wire(target)
    try:
        request = wire.delete(file_id)
    except ValueError:
        raise ConfigError(f"{file_id!r} is not a {target.provider} file id") from None
    send_file_request(target.endpoint, http, request, "deleting a file")


DOWNLOAD_LIMIT = 100 * 1024 * 1024
"""Bytes a generated file's download may hold by default (100 MiB)."""


def download_generated(
    target: Target, http: httpx2.Client, file: GeneratedFile, *, max_bytes: int = DOWNLOAD_LIMIT
) -> tuple[bytes, str]:
    """The bytes of a file ``target``'s provider made with hosted code
    execution (:class:`~elelem.wire.files.GeneratedFile`) and the media type
    the answer gave (empty when none), read as they stream and refused with :class:`~elelem.errors.LimitExceededError` past
    ``max_bytes`` (the announced length is checked before any is read)."""
    wire = files_wire(target)
    if wire.download is None:
        raise UnsupportedError(f"provider {target.provider}: no download of generated files")
    endpoint, what = target.endpoint, "downloading a generated file"
    try:
        request = wire.download(file)
    except ValueError:
        raise ConfigError(f"{file.file_id!r} is not a {target.provider} file id") from None
    url = endpoint.url(request.path)
    try:
        with http.stream(
            request.method, url, headers=endpoint.request_headers(request.headers)
        ) as response:
            if response.status_code >= 400:
                json_answer(endpoint, response.status_code, response.read(), what)
            announced = response.headers.get("content-length", "")
            if announced.isdigit() and int(announced) > max_bytes:
                raise _too_big(endpoint, file, max_bytes)
            media_type = response.headers.get("content-type", "")
            data = bytearray()
            for piece in response.iter_bytes():
                data += piece
                if len(data) > max_bytes:
                    raise _too_big(endpoint, file, max_bytes)
    except httpx2.HTTPError as exc:
        raise TransportError(
            endpoint.redact(f"provider {endpoint.provider}: {what}: {exc}")
        ) from None
    return bytes(data), media_type


def _too_big(endpoint: Endpoint, file: GeneratedFile, max_bytes: int) -> LimitExceededError:
    return LimitExceededError(
        f"provider {endpoint.provider}: generated file {file.file_id} is larger than allowed",
        limit="max_bytes",
        value=max_bytes,
    )


class FileUploader:
    """Uploads a history's images and PDFs once per provider and refers to
    them by id (see the module's docstring).  ``store``: a SQL store
    (:class:`~elelem.conversation.SQLiteStore` or
    :class:`~elelem.conversation.PostgresStore`); ``http``: the blocking
    client the uploads use (one of its own by default)."""

    def __init__(
        self, store: SQLOps, http: httpx2.Client | None = None, clock: Clock = utc_now
    ) -> None:
        self.table = ProviderFiles(store, clock)
        self.clock = clock
        self._http = http
        self.uploads = 0
        """How many uploads this uploader made."""
        self._sent: dict[str, set[str]] = {}

    @property
    def http(self) -> httpx2.Client:
        """The blocking HTTP client (made on first use)."""
        if self._http is None:
            self._http = httpx2.Client(timeout=TIMEOUT)
        return self._http

    def _file_id(self, target: Target, block: ImageBlock | DocumentBlock, blob: Blob) -> str:
        provider = str(target.provider)
        ref = self.table.live(blob.sha256, provider)
        if ref is None:
            name = block.filename or block.title or f"{blob.sha256[:16]}"
            found = upload_blob(target, self.http, blob.data, block.media_type or "", name)
            self.uploads += 1
            ref = FileRef(
                blob.sha256,
                provider,
                found.id,
                format_time(self.clock()),
                found.expires_at,
                blob.size,
            )
            self.table.record(ref)
        return ref.file_id

    def refer(self, messages: tuple[Message, ...], target: Target | Any) -> tuple[Message, ...]:
        """``messages`` with each image and PDF given by the id ``target``'s
        provider holds it under (uploading what it lacks); unchanged for a
        target whose wire has no Files API."""
        if not (
            isinstance(target, Target)
            and target.provider in FILES_PROVIDERS
            and isinstance(getattr(target.shape, "files", None), FilesWire)
            and target.endpoint.signer is None
        ):
            return messages
        ids: dict[str, str] = {}
        for block in uploadable(messages, target.shape.files.refers):  # type: ignore[attr-defined]
            blob = block.source.blob  # type: ignore[union-attr]
            ids[blob.sha256] = self._file_id(target, block, blob)
        self._sent[str(target.provider)] = set(ids.values())
        return refer_messages(messages, str(target.provider), lambda b: ids.get(b.sha256))

    def lost(self, exc: BaseException, target: Target | Any) -> bool:
        """Whether ``exc`` says files the last request referred to are gone:
        those ids are forgotten (uploaded again by the next :meth:`refer`)."""
        if not isinstance(exc, StreamError) or exc.status not in GONE_STATUSES:
            return False
        provider = str(getattr(target, "provider", ""))
        sent = self._sent.get(provider, set())
        text = f"{exc} {(exc.body or b'').decode('utf-8', 'replace')}"
        named = {file_id for file_id in sent if _names(text, file_id)}
        if not named and exc.status == 404:
            named = sent
        for file_id in named:
            self.table.forget(provider, file_id)
        return bool(named)

    def close(self) -> None:
        """Close the HTTP client (if one was made)."""
        if self._http is not None:
            self._http.close()


def _names(text: str, file_id: str) -> bool:
    # A Gemini id is its URI; Gemini's 403 names the file by its bare id
    # ("You do not have permission to access the File abc or it may not exist").
    if file_id in text:
        return True
    at = file_id.find("files/")
    if at < 0:
        return False
    bare = file_id[at + len("files/") :]
    return re.search(rf"(?<![\w-]){re.escape(bare)}(?![\w-])", text) is not None


__all__ = [
    "DOWNLOAD_LIMIT",
    "FILES_PROVIDERS",
    "GONE_STATUSES",
    "FileUploader",
    "delete_file",
    "download_generated",
    "files_wire",
    "list_files",
    "send_file_request",
    "upload_blob",
]
