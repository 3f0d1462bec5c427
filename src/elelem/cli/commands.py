"""Every command of the ``elelem`` group, in one table, and its registration.

The built-in commands are the rows of :data:`COMMANDS`; a plugin adds its
own through the entry-point group :data:`COMMAND_PLUGINS`
(``elelem.commands``), whose entries are ``click.Command`` values, each
added under its entry point's name by the same :func:`add_command` the
built-ins go through.  It is a group of its own beside ``elelem.plugins``
(whose entries are registration callables the library runs) because the
library never imports the command: a command needs click, the ``cli``
extra.  The command's group reads the entry points only when asked for a
name it does not hold, or for the list of its commands (``--help``), so
``elelem ask`` starts without scanning the installed distributions.
"""

from __future__ import annotations

from importlib.metadata import entry_points

import click

from elelem.cli.approve import approve_command, resume_command
from elelem.cli.ask import ask_command
from elelem.cli.batch import batch_group
from elelem.cli.chat import chat_command
from elelem.cli.demo import demo_command
from elelem.cli.embed import collections_group, embed_command, similar_command
from elelem.cli.exits import EXIT_STATUSES, EXIT_USAGE, Failure
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


COMMAND_PLUGINS = "elelem.commands"
"""The entry-point group of the commands plugins add: each entry point is a
``click.Command`` (or group), added under the entry point's name."""


def add_command(group: click.Group, command: click.Command, name: str, where: str) -> None:
    """Add ``command`` to ``group`` as ``name``; ``where`` says where it came
    from.  A name already taken by another command is a :class:`Failure`
    (exit status 2) naming both, never a silent replacement."""
    taken = group.commands.get(name)
    if taken is not None and taken is not command:
        raise Failure(
            f"command {name!r} of {where}: elelem already has a command {name!r}", EXIT_USAGE
        )
    group.add_command(command, name)


def register(group: click.Group) -> None:
    """Add every command of :data:`COMMANDS` to ``group``, and document the
    exit statuses in its help."""
    for command in COMMANDS:
        add_command(group, command, str(command.name), "elelem")
    group.epilog = EXIT_STATUSES


_plugins_added: set[int] = set()


def add_plugin_commands(group: click.Group) -> None:
    """Add the commands of every :data:`COMMAND_PLUGINS` entry point to
    ``group``, once per group.  One that fails to load, is no command, or
    takes a name already held is a :class:`Failure` naming it (exit status
    2, the bad configuration it is); nothing is skipped silently."""
    if id(group) in _plugins_added:
        return
    _plugins_added.add(id(group))
    for ep in entry_points(group=COMMAND_PLUGINS):
        where = f"plugin {ep.value}"
        try:
            command = ep.load()
        except Exception as exc:
            raise Failure(
                f"the elelem command {ep.name!r} of {where} failed to load: {exc}", EXIT_USAGE
            ) from exc
        if not isinstance(command, click.Command):
            raise Failure(
                f"the elelem command {ep.name!r} of {where} is a {type(command).__name__}, "
                "not a click command",
                EXIT_USAGE,
            )
        add_command(group, command, ep.name, where)


__all__ = ["COMMANDS", "COMMAND_PLUGINS", "add_command", "add_plugin_commands", "register"]
