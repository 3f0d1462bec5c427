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

import importlib
from importlib.metadata import entry_points
from typing import Any

import click

from elelem.cli.exits import EXIT_STATUSES, EXIT_USAGE, Failure

COMMANDS: tuple[tuple[str, str], ...] = (
    ("ask", "elelem.cli.ask:ask_command"),
    ("chat", "elelem.cli.chat:chat_command"),
    ("approve", "elelem.cli.approve:approve_command"),
    ("resume", "elelem.cli.approve:resume_command"),
    ("log", "elelem.cli.history:log_command"),
    ("show", "elelem.cli.history:show_command"),
    ("export", "elelem.cli.history:export_command"),
    ("import", "elelem.cli.history:import_command"),
    ("inspect", "elelem.cli.inspect:inspect_command"),
    ("serve", "elelem.cli.serve:serve_command"),
    ("providers", "elelem.cli.providers:providers_command"),
    ("models", "elelem.cli.models:models_command"),
    ("aliases", "elelem.cli.models:aliases_command"),
    ("config", "elelem.cli.models:config_group"),
    ("keys", "elelem.cli.keys:keys_group"),
    ("rm", "elelem.cli.manage:rm_command"),
    ("rename", "elelem.cli.manage:rename_command"),
    ("fork", "elelem.cli.manage:fork_command"),
    ("demo", "elelem.cli.demo:demo_command"),
    ("embed", "elelem.cli.embed:embed_command"),
    ("similar", "elelem.cli.embed:similar_command"),
    ("collections", "elelem.cli.embed:collections_group"),
    ("batch", "elelem.cli.batch:batch_group"),
    ("speak", "elelem.cli.speak:speak_command"),
    ("transcribe", "elelem.cli.transcribe:transcribe_command"),
    ("live", "elelem.cli.live:live_command"),
    ("worker", "elelem.cli.worker:worker_group"),
    ("mcp", "elelem.cli.mcp:mcp_group"),
    ("files", "elelem.cli.files:files_group"),
)
"""Every command and command group of ``elelem``, as (name, ``module:attribute``
of its ``click.Command``): a new one is one row here.  The module is imported
when the command is first asked for, so ``elelem ask`` does not import what
``serve``, ``inspect`` or ``live`` need."""


COMMAND_PLUGINS = "elelem.commands"
"""The entry-point group of the commands plugins add: each entry point is a
``click.Command`` (or group), added under the entry point's name."""


class CommandTable(click.Group):
    """A group whose built-in commands are rows of :data:`COMMANDS`, each
    imported when first asked for (by name, or for the list ``--help``
    shows); commands added whole (a plugin's) are held as click holds them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rows: dict[str, str] = {}
        """Each command not imported yet: name -> ``module:attribute``."""

    def names(self) -> list[str]:
        """Every command's name, imported or not, sorted as click lists them."""
        return sorted({*self.commands, *self.rows})

    def loaded(self, name: str) -> click.Command | None:
        """The command ``name``, imported now if it is a row not yet imported."""
        where = self.rows.pop(name, None)
        if where is not None:
            module, _, attribute = where.partition(":")
            self.commands[name] = getattr(importlib.import_module(module), attribute)
        return self.commands.get(name)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command ``cmd_name`` (imported when first asked for), or None."""
        return self.loaded(cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command's name, those not imported yet included."""
        return self.names()


def add_command(group: click.Group, command: click.Command, name: str, where: str) -> None:
    """Add ``command`` to ``group`` as ``name``; ``where`` says where it came
    from.  A name already taken by another command is a :class:`Failure`
    (exit status 2) naming both, never a silent replacement."""
    taken = group.commands.get(name)
    held = isinstance(group, CommandTable) and name in group.rows
    if held or (taken is not None and taken is not command):
        raise Failure(
            f"command {name!r} of {where}: elelem already has a command {name!r}", EXIT_USAGE
        )
    group.add_command(command, name)


def register(group: CommandTable) -> None:
    """Give ``group`` every command of :data:`COMMANDS` (imported when first
    asked for), and document the exit statuses in its help."""
    for name, where in COMMANDS:
        if name in group.rows or name in group.commands:
            raise Failure(f"command {name!r} is twice in elelem's table of commands", EXIT_USAGE)
        group.rows[name] = where
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


__all__ = [
    "COMMANDS",
    "COMMAND_PLUGINS",
    "CommandTable",
    "add_command",
    "add_plugin_commands",
    "register",
]
