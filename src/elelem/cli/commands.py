"""Every command of the ``elelem`` group, in one table, and its registration."""

from __future__ import annotations

import click

from elelem.cli.approve import approve_command, resume_command
from elelem.cli.ask import ask_command
from elelem.cli.batch import batch_group
from elelem.cli.chat import chat_command
from elelem.cli.demo import demo_command
from elelem.cli.embed import collections_group, embed_command, similar_command
from elelem.cli.exits import EXIT_STATUSES
from elelem.cli.files import files_group
from elelem.cli.history import export_command, import_command, log_command, show_command
from elelem.cli.inspect import inspect_command
from elelem.cli.keys import keys_group
from elelem.cli.live import live_command
from elelem.cli.manage import fork_command, rename_command, rm_command
from elelem.cli.mcp import mcp_group
from elelem.cli.models import aliases_command, config_group, models_command
from elelem.cli.providers import providers_command
from elelem.cli.serve import serve_command
from elelem.cli.speak import speak_command
from elelem.cli.transcribe import transcribe_command
from elelem.cli.worker import worker_group

COMMANDS: tuple[click.Command, ...] = (
    ask_command,
    chat_command,
    approve_command,
    resume_command,
    log_command,
    show_command,
    export_command,
    import_command,
    inspect_command,
    serve_command,
    providers_command,
    models_command,
    aliases_command,
    config_group,
    keys_group,
    rm_command,
    rename_command,
    fork_command,
    demo_command,
    embed_command,
    similar_command,
    collections_group,
    batch_group,
    speak_command,
    transcribe_command,
    live_command,
    worker_group,
    mcp_group,
    files_group,
)
"""Every command and command group of ``elelem``: a new one is one row here."""


def register(group: click.Group) -> None:
    """Add every command of :data:`COMMANDS` to ``group``, and document the
    exit statuses in its help."""
    for command in COMMANDS:
        group.add_command(command)
    group.epilog = EXIT_STATUSES


__all__ = ["COMMANDS", "register"]
