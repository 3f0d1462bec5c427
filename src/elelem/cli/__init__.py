"""The ``elelem`` command: a click group; each command lives in its own module.

To add a command, write it as a ``click.Command`` in ``elelem/cli/<name>.py``
and register it below with one ``main.add_command(...)`` line.  A command
reports a user-facing failure by raising :class:`CLIError`: one line on
stderr, exit status 2, no traceback.
"""

from __future__ import annotations

from typing import IO, Any

import click

from elelem.cli.safety import install, secrets_in_force


class CLIError(click.ClickException):
    """A failure the user can act on: printed as one ``elelem: …`` line, exit 2."""

    exit_code = 2

    def show(self, file: IO[Any] | None = None) -> None:
        """Write the one-line message to stderr (newlines in it are flattened)."""
        message = " ".join(self.format_message().split())
        click.echo(f"elelem: {message}", err=True, file=file)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="elelem")
def main() -> None:
    """elelem: stream LLM responses into one provider-neutral model, losing nothing."""
    # Every write of every command passes the redactor of the secrets in force.
    install(secrets_in_force())


from elelem.cli.inspect import inspect_command  # noqa: E402  (commands import CLIError)

main.add_command(inspect_command)

from elelem.cli.serve import serve_command  # noqa: E402

main.add_command(serve_command)

from elelem.cli.commands import register  # noqa: E402  (ask, chat, log, show, … demo)

register(main)

__all__ = ["CLIError", "main"]
