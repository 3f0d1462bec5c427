"""``elelem worker temporal``: a worker process of durable runs.

It runs elelem's workflow and activities (:mod:`elelem.durable.temporal`) on
a task queue, writing to the store of ``$ELELEM_STORE`` (a SQLite file on one
machine, a PostgreSQL URL across machines) with the providers, keys and
retry policy of its own environment.  ``--tools`` imports the modules that
hold the runs' tools (a file, or an importable module), so the import paths
the runs name (``tools:lookup``) resolve in this process.
"""

from __future__ import annotations

import asyncio
import importlib
import math
import sys
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import click

from elelem.cli.exits import EXIT_PROVIDER, EXIT_USAGE, Failure, guarded
from elelem.cli.store import store_from_env
from elelem.conversation import Store
from elelem.errors import install_line
from elelem.render import sanitize_line

DEFAULT_ADDRESS = "127.0.0.1:7233"
DBOS_DATABASES = ("sqlite:///", "postgresql://", "postgres://")
"""The system database URLs DBOS takes."""


def durable_module(extra: str, what: str) -> Any:
    """``elelem.durable.<extra>``, or a failure naming the extra ``what``
    needs (exit 2, as the command does for the cli extra)."""
    try:
        return importlib.import_module(f"elelem.durable.{extra}")
    except ModuleNotFoundError as exc:
        raise Failure(
            f"{what} needs the {extra} extra ({exc.name} is not installed): {install_line(extra)}",
            2,
        ) from None


def temporal_address(address: str, what: str) -> str:
    """``address`` if it is HOST:PORT (a port from 1 to 65535), else a
    usage failure naming ``what``: checked before anything starts, so a
    server or worker never runs with an address it cannot reach."""
    host, colon, port = address.rpartition(":")
    if not (colon and host and port.isdigit() and 0 < int(port) < 65536):
        raise Failure(f"{what} takes HOST:PORT, not {sanitize_line(repr(address))}", EXIT_USAGE)
    return address


async def temporal_client(address: str, what: str, **options: Any) -> Any:
    """A Temporal client connected to ``address``; a server that cannot be
    reached is a provider failure naming ``what``, not an internal error."""
    from temporalio.client import Client as TemporalClient

    try:
        return await TemporalClient.connect(address, **options)
    except (RuntimeError, ValueError) as exc:  # the SDK's connect failures
        raise Failure(
            f"{what}: cannot reach Temporal at {sanitize_line(address)}: {sanitize_line(str(exc))}",
            EXIT_PROVIDER,
        ) from None


def temporal_delivery(address: str, what: str = "--temporal") -> Any:
    """What hands approval decisions to a durable run on the Temporal server
    at ``address`` (:func:`elelem.durable.temporal.decide`): an async
    function of the conversation id, the approvals and the results."""
    temporal_address(address, what)
    temporal = durable_module("temporal", what)

    async def deliver(conv_id: str, approvals: dict[str, bool], results: dict[str, str]) -> None:
        client = await temporal_client(address, what)
        await temporal.decide(client, conv_id, approvals=approvals, results=results)

    return deliver


def import_tools(reference: str) -> None:
    """Import ``reference``: a ``.py`` file (its folder put on the import
    path, so the runs name its tools ``stem:function``) or a module name."""
    if reference.endswith(".py"):
        path = Path(reference).resolve()
        if not path.is_file():
            raise Failure(f"--tools {sanitize_line(reference)}: no such file", EXIT_USAGE)
        folder = str(path.parent)
        if folder not in sys.path:
            sys.path.insert(0, folder)
        reference = path.stem
    if not reference.strip(" ."):
        raise Failure(f"--tools {reference!r}: no module named", EXIT_USAGE)
    try:
        importlib.import_module(reference)
    except ImportError as exc:
        raise Failure(
            f"--tools {sanitize_line(reference)}: cannot import it: {sanitize_line(str(exc))}",
            EXIT_USAGE,
        ) from None


tools_option = click.option(
    "--tools",
    "tool_modules",
    multiple=True,
    metavar="FILE.py|MODULE",
    help="Import the module holding the runs' tools (repeatable).",
)
"""``--tools``, of both workers: read by :func:`import_tools`."""


def dbos_database(url: str, what: str) -> str:
    """``url`` if it is a system database URL DBOS takes, else a usage
    failure naming ``what`` (only the scheme is shown: the rest may hold a
    password)."""
    if not url.startswith(DBOS_DATABASES):
        scheme = url.partition("://")[0] if "://" in url else url[:20]
        raise Failure(
            f"{what} takes sqlite:///PATH or postgresql://…, not {sanitize_line(repr(scheme))}",
            EXIT_USAGE,
        )
    # Checked here: DBOS would log a traceback of its own before failing.
    folder = Path(url.removeprefix("sqlite:///").partition("?")[0]).parent
    if url.startswith("sqlite:///") and not folder.is_dir():
        raise Failure(
            f"{what}: no folder {sanitize_line(str(folder))} for the database", EXIT_USAGE
        )
    return url


def dbos_delivery(system_database: str, what: str = "--dbos") -> Any:
    """What hands approval decisions to a durable run on DBOS whose system
    database is at ``system_database`` (:func:`elelem.durable.dbos.decide`)."""
    dbos_database(system_database, what)
    dbos = durable_module("dbos", what)

    async def deliver(conv_id: str, approvals: dict[str, bool], results: dict[str, str]) -> None:
        from dbos import DBOSClient

        client = DBOSClient(system_database_url=system_database)
        try:
            await dbos.decide(client, conv_id, approvals=approvals, results=results)
        finally:
            client.destroy()

    return deliver


def _named(flag: str, value: str) -> None:
    """A usage error for an empty (or blank) name given to ``flag``."""
    if not value.strip():
        raise Failure(f"{flag} takes a name, not an empty one", EXIT_USAGE)


def _worker_store(tool_modules: Sequence[str]) -> Store:
    """Import the modules of the tools a worker's runs may call, then open
    the store the runs are logged in."""
    for reference in tool_modules:
        import_tools(reference)
    return store_from_env()


@click.group("worker")
def worker_group() -> None:
    """Run a worker of durable runs (see docs/durable.md)."""


@worker_group.command("temporal")
@click.option("--task-queue", required=True, help="The task queue the runs are started on.")
@click.option(
    "--address",
    envvar="ELELEM_TEMPORAL",
    default=DEFAULT_ADDRESS,
    show_default=True,
    help="The Temporal server (or $ELELEM_TEMPORAL).",
)
@click.option("--namespace", default="default", show_default=True)
@tools_option
@click.option(
    "--sticky-timeout",
    type=click.FloatRange(min=0.1),
    default=10.0,
    show_default=True,
    help="Seconds before a run this worker cached moves to another worker if it dies.",
)
@guarded
def temporal_worker(
    task_queue: str,
    address: str,
    namespace: str,
    tool_modules: tuple[str, ...],
    sticky_timeout: float,
) -> None:
    """Run elelem's Temporal workflow and activities on TASK-QUEUE until stopped."""
    temporal_address(address, "--address")
    if not math.isfinite(sticky_timeout):
        raise Failure(f"--sticky-timeout takes seconds, not {sticky_timeout}", EXIT_USAGE)
    _named("--task-queue", task_queue)
    _named("--namespace", namespace)
    temporal = durable_module("temporal", "the worker")
    store = _worker_store(tool_modules)

    async def serve() -> None:
        from elelem.client import Client

        client = await temporal_client(address, "the worker", namespace=namespace)
        options: dict[str, Any] = {
            "sticky_queue_schedule_to_start_timeout": timedelta(seconds=sticky_timeout)
        }
        async with Client() as elelem_client:
            worker = temporal.worker(
                client, task_queue, store=store, elelem_client=elelem_client, **options
            )
            click.echo(f"worker on task queue {sanitize_line(task_queue)}", err=True)
            await worker.run()

    asyncio.run(serve())  # until stopped: its runs move to the other workers


@worker_group.command("dbos")
@click.option(
    "--system-database",
    envvar="ELELEM_DBOS_DATABASE",
    required=True,
    metavar="URL",
    help="DBOS's system database: sqlite:///PATH on one machine, postgresql://… across machines "
    "(or $ELELEM_DBOS_DATABASE).",
)
@click.option(
    "--executor-id",
    required=True,
    help="This worker's name: started again under it, it finishes the runs it had.",
)
@tools_option
@guarded
def dbos_worker(system_database: str, executor_id: str, tool_modules: tuple[str, ...]) -> None:
    """Run elelem's DBOS workflow, taking runs from the elelem queue until stopped."""
    import threading

    from elelem.client import Client

    dbos_database(system_database, "--system-database")
    _named("--executor-id", executor_id)
    dbos = durable_module("dbos", "the worker")
    store = _worker_store(tool_modules)
    try:
        dbos.launch(store, system_database, elelem_client=Client(), executor_id=executor_id)
    except Exception as exc:  # noqa: BLE001 - DBOS and SQLAlchemy raise their own types
        # The URL is left out: it may hold the database's password.
        raise Failure(
            f"the DBOS system database could not be opened: {type(exc).__name__}: "
            f"{sanitize_line(str(exc).splitlines()[0] if str(exc) else '')}",
            EXIT_PROVIDER,
        ) from None
    click.echo(f"worker {sanitize_line(executor_id)} on queue {dbos.QUEUE}", err=True)
    threading.Event().wait()  # DBOS works in its own threads until the process is stopped


__all__ = [
    "dbos_delivery",
    "durable_module",
    "import_tools",
    "temporal_delivery",
    "worker_group",
]
