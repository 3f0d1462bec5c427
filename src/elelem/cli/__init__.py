"""The ``elelem`` command: a click group; each command lives in its own module.

To add a command, write it as a ``click.Command`` in ``elelem/cli/<name>.py``
and add it to the one table of commands, :data:`elelem.cli.commands.COMMANDS`
(a plugin's command: an entry point of the group
:data:`~elelem.cli.commands.COMMAND_PLUGINS`, ``elelem.commands``).  A command reports a user-facing failure by
raising the one CLI error class, :class:`elelem.cli.exits.Failure`: one
sanitized ``elelem: …`` line on stderr with its documented exit status, no
traceback (:func:`elelem.cli.exits.guarded` turns elelem's typed errors
into one).
"""

from __future__ import annotations

import difflib
from typing import Any

import click
from click.exceptions import NoArgsIsHelpError

from elelem.cli.commands import CommandTable, add_plugin_commands, register
from elelem.cli.exits import EXIT_USAGE, Failure
from elelem.cli.safety import install, mend_closed_streams, secrets_in_force
from elelem.providers.config import named_config_missing


def usage_line(exc: click.UsageError) -> Failure:
    """A usage error (bad option value, unknown option, missing argument) as
    the one ``elelem: …`` line every other failure is, exit status 2, with
    where to read the usage instead of click's four-line block."""
    path = exc.ctx.command_path if exc.ctx is not None else "elelem"
    return Failure(f"{exc.format_message()} (see: {path} --help)", EXIT_USAGE)


OWN_OPTIONS = frozenset({"-h", "--help", "--version"})
"""The options of the ``elelem`` group itself (any other goes to ``ask``)."""


class ElelemGroup(CommandTable):
    """The ``elelem`` group: its own and every command's usage errors are
    one line (:func:`usage_line`); a name it does not hold, and the list of
    its commands, first add the plugins' commands
    (:func:`~elelem.cli.commands.add_plugin_commands`)."""

    def holds(self, name: str) -> bool:
        """Whether ``name`` is one of the group's commands, a plugin's included."""
        if name not in self.commands and name not in self.rows and self.name == "main":
            add_plugin_commands(self)
        return name in self.commands or name in self.rows

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command ``cmd_name``, a plugin's included, or None."""
        return self.loaded(cmd_name) if self.holds(cmd_name) else None

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command's name, the plugins' included (what ``--help`` lists)."""
        if self.name == "main":
            add_plugin_commands(self)
        return super().list_commands(ctx)

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except NoArgsIsHelpError:
            raise  # a bare group: click prints its help (exit status 2)
        except click.UsageError as exc:
            raise usage_line(exc) from None

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """``elelem "prompt"`` (and ``elelem -m MODEL "prompt"``) is ``elelem
        ask …``, as ``llm "prompt"`` is; a lone word close to a command's
        name is taken for a typo of it, not sent to a model."""
        if self.name == "main" and args and not (args[0][:1] != "-" and self.holds(args[0])):
            first = args[0]
            if first.startswith("-"):
                if first not in OWN_OPTIONS:
                    args = ["ask", *args]
            else:
                close = difflib.get_close_matches(first, self.list_commands(ctx), n=1, cutoff=0.75)
                if close and len(args) == 1 and " " not in first:
                    raise Failure(
                        f"no such command {first!r} (did you mean {close[0]}?); "
                        f"to ask it: elelem ask {first}",
                        EXIT_USAGE,
                    )
                args = ["ask", *args]
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except NoArgsIsHelpError:
            raise  # `elelem keys`, `elelem batch`: their help, as click shows it
        except click.UsageError as exc:
            raise usage_line(exc) from None


@click.group(cls=ElelemGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="elelem")
def main() -> None:
    """elelem: stream LLM responses into one provider-neutral model, losing nothing."""
    mend_closed_streams()
    # A typo in ELELEM_CONFIG must not run without the config it meant.
    missing = named_config_missing()
    if missing is not None:
        raise Failure(str(missing), EXIT_USAGE)
    # Every write of every command passes the redactor of the secrets in force.
    install(secrets_in_force())


register(main)  # every command, in one table

__all__ = ["main"]
