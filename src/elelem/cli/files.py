"""``elelem files list`` and ``elelem files rm``: the files elelem uploaded
to providers' Files APIs (images and PDFs sent by id, docs/cli.md);
``elelem files generated`` and ``elelem files download``: the files a
provider's hosted code execution made in a conversation, fetched into the
store (and written out) on request."""

from __future__ import annotations

import json
import os
import sys

import click
import httpx2

from elelem.cli.exits import EXIT_USAGE, Failure, debug_option, guarded
from elelem.cli.flags import max_bytes_option
from elelem.cli.history import resolve_conversation
from elelem.cli.store import store_from_env
from elelem.conversation import Conversation
from elelem.conversation.files import FileRef, ProviderFiles
from elelem.conversation.generated import GeneratedFileBody
from elelem.conversation.sqlbase import SQLStore
from elelem.providers import load_catalog
from elelem.providers.catalog import Target
from elelem.providers.files import DOWNLOAD_LIMIT, TIMEOUT, delete_file, list_files
from elelem.providers.generated import fetch_generated, fetched, generated_files
from elelem.render import sanitize_line
from elelem.vocabulary import Blob, BytesSource
from elelem.wire.files import GeneratedFile


def _table() -> ProviderFiles:
    store = store_from_env()
    if not isinstance(store, SQLStore):
        raise Failure("the store keeps no provider files (a SQL store does)", EXIT_USAGE)
    return ProviderFiles(store)


def _target(provider: str) -> Target:
    catalog = load_catalog()
    catalog.get(provider)  # an unknown provider is refused by name
    return catalog.target(provider, os.environ)


def _columns(*fields: str) -> str:
    # Each field sanitized on its own: ids and names come from the provider.
    return "  ".join(sanitize_line(field) for field in fields if field)


def _row(ref: FileRef) -> str:
    size = "" if ref.size is None else f"{ref.size:,} bytes"
    expires = f"expires {ref.expires_at or 'kept until deleted'}"
    return _columns(ref.provider, ref.file_id, f"sha256:{ref.sha256[:12]}", size, expires)


@click.group("files")
def files_group() -> None:
    """Files uploaded to providers (images and PDFs sent by id)."""


@files_group.command("list")
@click.option("--provider", help="Only this provider's files.")
@click.option("--remote", is_flag=True, help="Ask the provider's Files API (needs --provider).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per file (NDJSON).")
@debug_option
@guarded
def files_list_command(provider: str | None, remote: bool, as_json: bool) -> None:
    """List the files uploaded for this store (newest first); --remote lists
    what PROVIDER holds."""
    if provider is not None:
        load_catalog().get(provider)
    if remote:
        if provider is None:
            raise click.UsageError("--remote needs --provider (e.g. --provider anthropic)")
        with httpx2.Client(timeout=TIMEOUT) as http:
            held = list_files(_target(provider), http)
        for found in held:
            if as_json:
                click.echo(
                    json.dumps(
                        {
                            "provider": provider,
                            "id": found.id,
                            "filename": found.filename,
                            "size": found.size,
                            "expires_at": found.expires_at,
                        }
                    )
                )
            else:
                click.echo(_columns(provider, found.id, found.filename or ""))
        return
    for ref in _table().all(provider):
        if as_json:
            click.echo(
                json.dumps(
                    {
                        "provider": ref.provider,
                        "id": ref.file_id,
                        "sha256": ref.sha256,
                        "size": ref.size,
                        "uploaded_at": ref.uploaded_at,
                        "expires_at": ref.expires_at,
                    }
                )
            )
        else:
            click.echo(_row(ref))


@files_group.command("rm")
@click.argument("file_id", metavar="ID")
@click.option("--provider", help="The provider holding ID (default: the one it was uploaded to).")
@debug_option
@guarded
def files_rm_command(file_id: str, provider: str | None) -> None:
    """Delete file ID at its provider and forget it (a later request
    uploads the bytes again)."""
    table = _table()
    if provider is None:
        owners = {ref.provider for ref in table.all() if ref.file_id == file_id}
        if len(owners) != 1:
            raise Failure(
                sanitize_line(f"no uploaded file {file_id!r} is recorded: name its --provider"),
                EXIT_USAGE,
            )
        (provider,) = owners
    target = _target(provider)
    with httpx2.Client(timeout=TIMEOUT) as http:
        delete_file(target, http, file_id)
    table.forget(provider, file_id)
    click.echo(sanitize_line(f"deleted {file_id} at {provider}"), err=True)


def _generated(conversation: str | None) -> tuple[Conversation, list[GeneratedFile]]:
    store = store_from_env()
    conv = Conversation.open(store, resolve_conversation(store, conversation))
    return conv, generated_files(conv.events, load_catalog())


@files_group.command("generated")
@click.argument("conversation", required=False, metavar="[ID]")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per file (NDJSON).")
@debug_option
@guarded
def files_generated_command(conversation: str | None, as_json: bool) -> None:
    """List the files hosted code execution made in conversation ID (a
    unique prefix, or the latest), and whether each is in the store."""
    conv, found = _generated(conversation)
    kept = fetched(conv.events)
    for file in found:
        body = kept.get(file.file_id)
        blob = _blob(body) if body is not None else None
        if as_json:
            entry = {"provider": file.provider, "id": file.file_id,
                     "container": file.container_id, "filename": file.filename,
                     "sha256": blob.sha256 if blob else None, "size": blob.size if blob else None}  # fmt: skip
            click.echo(json.dumps(entry))
            continue
        where = f"{file.container_id}/{file.file_id}" if file.container_id else file.file_id
        state = f"sha256:{blob.sha256[:12]}  {blob.size:,} bytes" if blob else "not fetched"
        click.echo(_columns(file.provider, where, file.filename or "", state))


def _blob(body: GeneratedFileBody) -> Blob | None:
    source = body.content[0].source if body.content else None
    return source.blob if isinstance(source, BytesSource) else None


@files_group.command("download")
@click.argument("file_id", metavar="FILE")
@click.option("--conversation", metavar="ID", help="The conversation (default: the latest).")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True, allow_dash=True),
    help="Also write the bytes here (- for stdout, never a terminal).",
)
@max_bytes_option(DOWNLOAD_LIMIT, "a file")
@debug_option
@guarded
def files_download_command(
    file_id: str, conversation: str | None, output: str | None, max_bytes: int
) -> None:
    """Fetch FILE, made by hosted code execution in a conversation (its id
    as `elelem files generated` lists it), into the store; -o writes it out."""
    conv, found = _generated(conversation)
    matches = [f for f in found if f.file_id == file_id]
    if not matches:
        raise Failure(
            sanitize_line(f"no file {file_id!r} was made in conversation {conv.id}"), EXIT_USAGE
        )
    file = matches[0]
    if output == "-" and sys.stdout.isatty():
        raise Failure("-o -: stdout is a terminal; name a file", EXIT_USAGE)
    with httpx2.Client(timeout=TIMEOUT) as http:
        body = fetch_generated(conv, _target(file.provider), file, http, max_bytes=max_bytes)
    blob = _blob(body)
    data = conv.store.get_blob(blob.sha256) if blob is not None else b""
    if output == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    elif output is not None:
        with open(output, "wb") as out:
            out.write(data)
    click.echo(sanitize_line(f"kept {file.filename or file_id}: {len(data):,} bytes"), err=True)


__all__ = ["files_group"]
