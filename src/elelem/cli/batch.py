"""``elelem batch submit|status|results``: batches at half price, kept in the log.

``submit FILE|-`` reads one prompt a line (or, with ``--jsonl``, rows
``{"custom_id"?, "prompt", "system"?, "max_tokens"?}``), submits them to the
model's batch API and records the batch in the store; it prints the
conversation id and the provider's batch id, either of which the other two
commands take, from this process or any later one.  ``status`` asks the
provider and records what changed.  ``results`` reads a finished batch's
responses into the log once (each in its request's turn, priced at the batch
price) and prints them.
"""

from __future__ import annotations

import os
from contextlib import closing
from typing import Any

import click

from elelem.batches.core import MAX_REQUESTS, BatchRequest, neutral_requests
from elelem.cli.exits import EXIT_PROVIDER, EXIT_USAGE, Failure, debug_option, guarded, utf8_text
from elelem.cli.flags import max_bytes_option
from elelem.cli.inputs import INPUT_LIMIT, input_lines, jsonl_row
from elelem.cli.json_out import echo_json
from elelem.cli.store import store_from_env
from elelem.providers.costs import events_cost
from elelem.render import sanitize_line
from elelem.turns.batchlog import (
    find,
    latest,
    record_results,
    record_status,
    record_submission,
    recorded,
    results_of,
)
from elelem.vocabulary import GenerationOptions


def _client() -> Any:
    from elelem.client import SyncClient  # deferred: the client loads the catalog

    return SyncClient(env=os.environ)


def _requests(source: str, jsonl: bool, max_tokens: int | None, limit: int) -> list[BatchRequest]:
    out: list[BatchRequest] = []
    for number, text in input_lines(source, limit):
        if not text.strip():
            continue
        if len(out) == MAX_REQUESTS:
            # Refused as it is read: each request held costs kilobytes.
            raise Failure(
                f"line {number}: a batch holds at most {MAX_REQUESTS} requests: split the file",
                EXIT_USAGE,
            )
        if not jsonl:
            out.append(BatchRequest(text, options=GenerationOptions(max_tokens=max_tokens)))
            continue
        row = jsonl_row(text, number)
        if not isinstance(row, dict) or not isinstance(row.get("prompt"), str):
            why = f'line {number}: a row is {{"prompt", "custom_id"?, "system"?}}'
            raise Failure(why, EXIT_USAGE)
        out.append(_row_request(row, number, max_tokens))
    return out


def _row_request(row: dict[str, Any], number: int, max_tokens: int | None) -> BatchRequest:
    """The request of one JSONL row; a field of the wrong type is a usage
    error naming its line (never sent on, never a crash in the encoder)."""
    custom_id, system = row.get("custom_id"), row.get("system")
    limit = row.get("max_tokens", max_tokens)
    if isinstance(custom_id, bool) or not isinstance(custom_id, (str, int, type(None))):
        raise Failure(f"line {number}: custom_id is not a string", EXIT_USAGE)
    if not isinstance(system, (str, type(None))):
        raise Failure(f"line {number}: system is not a string", EXIT_USAGE)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise Failure(f"line {number}: max_tokens is not a positive integer", EXIT_USAGE)
    return BatchRequest(
        row["prompt"],
        None if custom_id is None else str(custom_id),
        system,
        GenerationOptions(max_tokens=limit),
    )


@click.group("batch")
def batch_group() -> None:
    """Batches at the batch price (Anthropic, OpenAI, Gemini), kept in the log."""


@batch_group.command("submit")
@click.argument("source")
@click.option("-m", "--model", required=True, help="provider:model for every request.")
@click.option("--jsonl", is_flag=True, help='Rows {"prompt", "custom_id"?, "system"?, …}.')
@click.option("--max-tokens", type=click.IntRange(min=1), help="Each answer's token limit.")
@max_bytes_option(INPUT_LIMIT, "a SOURCE file")
@debug_option
@guarded
def submit_command(
    source: str, model: str, jsonl: bool, max_tokens: int | None, max_bytes: int
) -> None:
    """Submit the prompts of SOURCE (a file, or - for stdin), one a line."""
    requests = _requests(source, jsonl, max_tokens, max_bytes)
    with closing(store_from_env()) as store, _client() as client:
        target = client.target(model)
        record = client.batch(target, requests)
        neutral = neutral_requests(requests, target.model, None)
        conversation = record_submission(store, record, neutral)
    click.echo(f"conversation {conversation.id}")
    click.echo(sanitize_line(f"batch {record.batch_id}: {record.state} ({record.raw_state})"))


@batch_group.command("status")
@click.argument("ref")
@debug_option
@guarded
def status_command(ref: str) -> None:
    """Ask the provider how far batch REF (conversation or batch id) got."""
    utf8_text(ref, "REF")
    with closing(store_from_env()) as store:
        conversation = find(store, ref)
        record = latest(conversation)
        if not record.done:
            with _client() as client:
                record = client.batch_status(record)
            record_status(conversation, record)
    counts = ", ".join(f"{k} {v}" for k, v in sorted(record.counts.items()))
    line = f"batch {record.batch_id}: {record.state} ({record.raw_state})"
    click.echo(sanitize_line(line + (f"; {counts}" if counts else "")))


@batch_group.command("results")
@click.argument("ref")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per request.")
@debug_option
@guarded
def results_command(ref: str, as_json: bool) -> None:
    """Read a finished batch's responses into the log (once) and print them."""
    utf8_text(ref, "REF")
    with closing(store_from_env()) as store:
        conversation = find(store, ref)
        if not recorded(conversation):
            record = latest(conversation)
            with _client() as client:
                if not record.done:
                    record = client.batch_status(record)
                    record_status(conversation, record)
                if not record.done:
                    raise Failure(
                        f"batch {record.batch_id} is {record.state}: no results yet", EXIT_PROVIDER
                    )
                strays = record_results(conversation, client.batch_results(record))
                if strays:
                    shown = ", ".join(strays[:5]) + (", …" if len(strays) > 5 else "")
                    click.echo(
                        sanitize_line(
                            f"elelem: warning: {len(strays)} results name a request the batch "
                            f"never had (custom_id {shown}): not stored"
                        ),
                        err=True,
                    )
        rows = results_of(conversation)
        cost = events_cost(conversation.events)
    for custom_id, text, response in rows:
        if as_json:
            row = {
                "custom_id": custom_id,
                "text": text,
                "finish": response.finish,
                "error": response.error,
            }
            echo_json(row)  # written as encoded: a long answer is not held twice more
        elif response.error is not None:
            click.echo(sanitize_line(f"{custom_id}: error: {response.error}"))
        else:
            click.echo(sanitize_line(f"{custom_id}: {text}"))
    click.echo(
        sanitize_line(f"{len(rows)} results, {cost.describe()} at the batch price"), err=True
    )


__all__ = ["batch_group"]
