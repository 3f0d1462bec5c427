"""Files a provider's hosted code execution made, found in a conversation
and fetched into its store on request (issue #43).

:func:`generated_files` reads what a conversation's answers say was made
(each wire's :attr:`~elelem.wire.files.FilesWire.generated`: Anthropic's code
execution results, OpenAI's ``container_file_citation`` annotations); a
file already fetched is named by its ``generated-file`` event.
:func:`fetch_generated` downloads one (bounded, with the provider's own
authentication: :func:`~elelem.providers.files.download_generated`) and
appends the event holding it (:mod:`elelem.conversation.generated`).
Gemini's code execution returns what it makes inline (images as parts), so
those are in the log already.
"""

from __future__ import annotations

from collections.abc import Iterable

import httpx2
import msgspec

from elelem.conversation import Conversation, Draft, Event, HostedBody, MessageBody
from elelem.conversation.generated import GeneratedFileBody
from elelem.errors import ConfigError, DecodeError, MalformedStreamError
from elelem.providers.catalog import Catalog, Target
from elelem.providers.files import (
    DOWNLOAD_LIMIT,
    download_generated,
    files_wire,
    send_file_request,
)
from elelem.shapes.registry import shape_named
from elelem.vocabulary import DocumentBlock, ImageBlock, Message, ProviderId
from elelem.wire.files import FilesWire, GeneratedFile


def _answers(events: Iterable[Event]) -> Iterable[Message]:
    for event in events:
        body = event.body
        if isinstance(body, HostedBody) and body.provider is not None:
            yield Message("assistant", (body.activity,), provider=body.provider)
        elif isinstance(body, MessageBody) and body.role == "assistant" and body.provider:
            yield Message("assistant", body.content, provider=body.provider)


def generated_files(events: Iterable[Event], catalog: Catalog) -> list[GeneratedFile]:
    """Every file the conversation's answers say hosted code execution made
    (each once, in order); a provider no longer in the catalog is skipped."""
    found: dict[tuple[str, str | None, str], GeneratedFile] = {}
    wires: dict[str, FilesWire | None] = {}
    for message in _answers(events):
        provider = str(message.provider)
        if provider not in wires:
            try:
                wire = getattr(shape_named(catalog.get(provider).shape), "files", None)
            except ConfigError:
                wire = None
            wires[provider] = wire if isinstance(wire, FilesWire) else None
        wire = wires[provider]
        if wire is None or wire.generated is None:
            continue
        for file in wire.generated(message):
            found.setdefault((file.provider, file.container_id, file.file_id), file)
    return list(found.values())


def fetched(events: Iterable[Event]) -> dict[str, GeneratedFileBody]:
    """The generated files already fetched into the store, by file id."""
    return {e.body.file_id: e.body for e in events if isinstance(e.body, GeneratedFileBody)}


def _block(data: bytes, media_type: str, filename: str | None) -> ImageBlock | DocumentBlock:
    kind = media_type.split(";")[0].strip().lower() or None
    if kind is not None and kind.startswith("image/"):
        return ImageBlock.from_bytes(data, kind, filename=filename)
    try:
        return DocumentBlock.from_bytes(data, kind, filename=filename)
    except DecodeError:
        # A file of no type the provider named or the bytes tell: kept as bytes.
        return DocumentBlock.from_bytes(data, "application/octet-stream", filename=filename)


def generated_name(target: Target, http: httpx2.Client, file: GeneratedFile) -> str | None:
    """The name the provider's Files API gives ``file`` (Anthropic's code
    execution names its files by id only), or None where the wire has no
    metadata request."""
    wire = files_wire(target)
    if wire.metadata is None:
        return None
    try:
        request = wire.metadata(file.file_id)
    except ValueError:
        raise ConfigError(f"{file.file_id!r} is not a {target.provider} file id") from None
    what = "reading a generated file's name"
    _, answer = send_file_request(target.endpoint, http, request, what)
    try:
        return wire.read(answer).filename
    except (KeyError, TypeError, ValueError) as exc:
        raise MalformedStreamError(
            f"provider {target.provider}: {what}: not in the documented form ({exc})"
        ) from None


def fetch_generated(
    conv: Conversation,
    target: Target,
    file: GeneratedFile,
    http: httpx2.Client,
    *,
    max_bytes: int = DOWNLOAD_LIMIT,
) -> GeneratedFileBody:
    """Download ``file`` from ``target``'s provider and keep it in ``conv``'s
    store as a ``generated-file`` event (the one already there when it was
    fetched before: nothing is downloaded twice)."""
    if target.provider != ProviderId(file.provider):
        raise ConfigError(f"file {file.file_id} is {file.provider}'s, not {target.provider}'s")
    done = fetched(conv.events).get(file.file_id)
    if done is not None:
        return done
    if file.filename is None:
        file = msgspec.structs.replace(file, filename=generated_name(target, http, file))
    data, media_type = download_generated(target, http, file, max_bytes=max_bytes)
    body = GeneratedFileBody(
        file.provider,
        file.file_id,
        (_block(data, media_type, file.filename),),
        file.container_id,
        file.filename,
    )
    conv.append(Draft.of(body, turn=conv.turn))
    return body


__all__ = ["fetch_generated", "fetched", "generated_files", "generated_name"]
