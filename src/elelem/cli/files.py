"""``elelem files list`` and ``elelem files rm``: the files elelem uploaded
to providers' Files APIs (images and PDFs sent by id, docs/cli.md)."""

from __future__ import annotations

import json
import os

import click
import httpx2

from elelem.cli.exits import EXIT_USAGE, Failure, debug_option, guarded
from elelem.cli.store import store_from_env
from elelem.conversation.files import FileRef, ProviderFiles
from elelem.conversation.sqlbase import SQLStore
from elelem.providers import load_catalog
from elelem.providers.catalog import Target
from elelem.providers.files import TIMEOUT, delete_file, list_files
from elelem.render import sanitize_line


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


__all__ = ["files_group"]
