"""``elelem embed``, ``elelem similar`` and ``elelem collections``: vectors
for texts, kept in collections of the store and searched by similarity.

``elelem embed -m openai:text-embedding-3-small "some text"`` prints the
vector as a JSON array (one line per input).  With ``-c NAME`` the vectors
are stored in collection NAME instead (made on first use with that model),
each under its ``--id``, its line number in ``-i FILE`` or the ``id`` of a
``--jsonl`` row; content that is stored unchanged is not embedded again.
``elelem similar NAME "query"`` prints the most similar rows, best first.
"""

from __future__ import annotations

import base64
import json
import math
import os
from collections.abc import Sequence
from contextlib import closing
from typing import Any

import click
import msgspec

from elelem.cli.exits import EXIT_PROVIDER, EXIT_USAGE, Failure, debug_option, guarded, utf8_text
from elelem.cli.flags import max_bytes_option
from elelem.cli.inputs import INPUT_LIMIT, input_lines, jsonl_row
from elelem.cli.store import store_from_env
from elelem.cli.testmodel import TEST_EMBEDDING, command_client, is_test_model
from elelem.embeddings import TASKS, Embeddings
from elelem.embeddings.collections import Collections, Hit, Item, to_bytes
from elelem.render import sanitize_line

MODEL_ENV = "ELELEM_EMBEDDING_MODEL"


def _model_name(model: str) -> str:
    """``model``, with ``test`` spelled as the test model's address."""
    return TEST_EMBEDDING if is_test_model(model) else model


def _rows(source: str, jsonl: bool, limit: int) -> list[tuple[str, str, Any]]:
    """``(id, content, metadata)`` of each non-empty line of ``source``."""
    rows = []
    for number, text in input_lines(source, limit):
        if not text.strip():
            continue
        if not jsonl:
            rows.append((str(number), text, None))
            continue
        row = jsonl_row(text, number)
        if not isinstance(row, dict) or not isinstance(row.get("content"), str):
            raise Failure(f'line {number}: a row is {{"id", "content", "metadata"?}}', EXIT_USAGE)
        rows.append((str(row.get("id", number)), row["content"], row.get("metadata")))
    return rows


def _inputs(
    texts: Sequence[str], source: str | None, jsonl: bool, ids: Sequence[str], limit: int
) -> list[
    tuple[str, str, Any]
]:  # fmt: skip
    if source is not None and texts:
        raise Failure("give texts or -i FILE, not both", EXIT_USAGE)
    if source is None:
        if ids and len(ids) != len(texts):
            raise Failure(f"{len(ids)} --id for {len(texts)} texts", EXIT_USAGE)
        return [(ids[n] if ids else str(n + 1), t, None) for n, t in enumerate(texts)]
    if ids:
        raise Failure("--id names texts given as arguments; -i FILE rows are numbered", EXIT_USAGE)
    return _rows(source, jsonl, limit)


def _count(n: int, what: str) -> str:
    """``1 vector``, ``2 vectors``."""
    return f"{n:,} {what}" if n == 1 else f"{n:,} {what}s"


def _report(result: Embeddings, stored: int, skipped: int, name: str | None) -> None:
    usage = result.usage
    tokens = _count(usage.input, "token") if usage is not None else "tokens not reported"
    where = f"stored {stored} in {name}" if name else _count(len(result), "vector")
    extra = f", {skipped} unchanged" if skipped else ""
    requests = "request" if result.requests == 1 else "requests"
    click.echo(
        sanitize_line(
            f"{where}{extra}; {result.requests} {requests}, {tokens}, {result.cost.describe()}"
        ),
        err=True,
    )
    for drop in result.dropped:
        click.echo(sanitize_line(f"dropped {drop.description}"), err=True)


@click.command("embed")
@click.argument("texts", nargs=-1)
@click.option("-m", "--model", help=f"provider:model (default ${MODEL_ENV} or the collection's).")
@click.option("-i", "--input", "source", help="Read one text per line from FILE ('-': stdin).")
@click.option("--jsonl", is_flag=True, help='-i rows are JSON {"id", "content", "metadata"?}.')
@click.option("-c", "--collection", help="Store the vectors in this collection.")
@click.option("--id", "ids", multiple=True, help="The id of each text argument (repeat).")
@click.option("-d", "--dimensions", type=click.IntRange(min=1), help="Shorter vectors.")
@click.option("--task", type=click.Choice(TASKS), help="What the vectors are for.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["json", "base64"]),
    default="json",
    help="Printed vectors: JSON arrays, or base64 of little-endian float32.",
)
@click.option("--all", "embed_all", is_flag=True, help="Embed again content stored unchanged.")
@max_bytes_option(INPUT_LIMIT, "an -i file")
@debug_option
@guarded
def embed_command(
    texts: tuple[str, ...],
    model: str | None,
    source: str | None,
    jsonl: bool,
    collection: str | None,
    ids: tuple[str, ...],
    dimensions: int | None,
    task: str | None,
    fmt: str,
    embed_all: bool,
    max_bytes: int,
) -> None:
    """Embed TEXTS (or the lines of -i FILE): print the vectors, or store
    them in a collection with -c."""
    for value in (*texts, *ids, collection or ""):
        utf8_text(value, "an argument")
    rows = _inputs(texts, source, jsonl, ids, max_bytes)
    if not rows:
        raise Failure("nothing to embed: give texts or -i FILE", EXIT_USAGE)
    if collection is None:
        result = _embed(model, [c for _, c, _ in rows], dimensions, task)
        for vector in result:
            if fmt == "json":
                click.echo(json.dumps([float(x) for x in vector]))
            else:
                click.echo(base64.b64encode(to_bytes(vector)).decode())
        _report(result, 0, 0, None)
        return
    with closing(store_from_env()) as store:
        collections = Collections(store)
        found = None
        if any(c.name == collection for c in collections.list()):
            found = collections.get(collection)
        skipped: set[str] = set()
        if found is not None and not embed_all:
            skipped = found.unchanged((i, c) for i, c, _ in rows)
        todo = [r for r in rows if r[0] not in skipped]
        result = _embed(model or (found.model if found else None), [c for _, c, _ in todo],
                        dimensions, task)  # fmt: skip
        if todo:
            target = collections.open(collection, result.model, result.dimensions or 0)
            vectors = result.vectors
            target.upsert(Item(i, v, c, m) for (i, c, m), v in zip(todo, vectors, strict=True))
        _report(result, len(todo), len(skipped), collection)


def _embed(
    model: str | None, texts: list[str], dimensions: int | None, task: str | None
) -> Embeddings:
    """``texts`` embedded with ``model``, else ``$ELELEM_EMBEDDING_MODEL``."""
    model = model or os.environ.get(MODEL_ENV) or None
    if model is None:
        raise Failure(
            f"name the embedding model with -m provider:model or ${MODEL_ENV}", EXIT_USAGE
        )
    model = _model_name(model)
    with command_client(model) as client:
        result: Embeddings = client.embed(model, texts, dimensions=dimensions, task=task)
    for index, vector in enumerate(result):
        # A number past float32's range is inf: printed, it is no JSON; stored, no score.
        if not math.isfinite(sum(vector)):
            raise Failure(
                f"the {result.model} answer's vector {index} holds a value that is not a finite"
                " number",
                EXIT_PROVIDER,
            )
    return result


def _print_hits(hits: Sequence[Hit], as_json: bool) -> None:
    for hit in hits:
        if as_json:
            # ensure_ascii: stored content is untrusted, and escaped it
            # cannot move a terminal's cursor or reorder its text.
            click.echo(json.dumps(msgspec.structs.asdict(hit), ensure_ascii=True))
        else:
            text = (hit.content or "").replace("\n", " ")
            text = text[:77] + "..." if len(text) > 80 else text
            # Tab-separated, each field sanitized on its own (the sanitizer
            # folds runs of whitespace, tabs included).
            click.echo(f"{hit.score:.4f}\t{sanitize_line(hit.id)}\t{sanitize_line(text)}")


@click.command("similar")
@click.argument("collection")
@click.argument("text", required=False)
@click.option("--id", "item", help="Find rows like this stored row instead of TEXT.")
@click.option("-n", "--number", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per row.")
@debug_option
@guarded
def similar_command(
    collection: str, text: str | None, item: str | None, number: int, as_json: bool
) -> None:
    """The rows of COLLECTION most similar to TEXT (embedded with the
    collection's model as a query), best first: score, id and content,
    tab-separated."""
    if (text is None) == (item is None):
        raise Failure("give TEXT or --id, one of them", EXIT_USAGE)
    for value in (collection, text or "", item or ""):
        utf8_text(value, "an argument")
    store = store_from_env()
    try:
        found = Collections(store).get(collection)
        if item is not None:
            hits = found.similar(found.vector(item), number=number, skip=item)
        else:
            assert text is not None
            with command_client(found.model) as client:
                query = client.embed(found.model, [text], dimensions=found.dimensions, task="query")
            hits = found.similar(query[0], number=number)
        _print_hits(hits, as_json)
    finally:
        store.close()


@click.group("collections", invoke_without_command=True)
@click.pass_context
def collections_group(ctx: click.Context) -> None:
    """The collections of embeddings in the store (list them by default)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_command)


@collections_group.command("list")
@debug_option
@guarded
def list_command() -> None:
    """Each collection, tab-separated: name, model, dimensions, rows, and how
    similarity is ranked (python, pgvector, pgvector+hnsw); on stderr, why
    not by pgvector on a PostgreSQL store that lacks it."""
    with closing(store_from_env()) as store:
        collections = Collections(store)
        for info in collections.list():
            name, model = sanitize_line(info.name), sanitize_line(info.model)
            click.echo(f"{name}\t{model}\t{info.dimensions}\t{info.count}\t{info.search}")
        if collections.backend_note:
            # The note may quote the server's error text: one sanitized line.
            note = sanitize_line(collections.backend_note)
            click.echo(f"similarity is ranked in Python: {note}", err=True)


@collections_group.command("delete")
@click.argument("name")
@debug_option
@guarded
def delete_command(name: str) -> None:
    """Remove collection NAME and its rows."""
    utf8_text(name, "NAME")
    with closing(store_from_env()) as store:
        Collections(store).delete(name)


__all__ = ["collections_group", "embed_command", "similar_command"]
