"""The ``elelem`` command: a click group; each command lives in its own module.

To add a command, write it as a ``click.Command`` in ``elelem/cli/<name>.py``
and register it below with one ``main.add_command(...)`` line (or in
:mod:`elelem.cli.commands`).  A command reports a user-facing failure by
raising the one CLI error class, :class:`elelem.cli.common.Failure`: one
sanitized ``elelem: …`` line on stderr with its documented exit status, no
traceback (:func:`elelem.cli.common.guarded` turns elelem's typed errors
into one).
"""

from __future__ import annotations

import click

from elelem.cli.safety import install, secrets_in_force


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="elelem")
def main() -> None:
    """elelem: stream LLM responses into one provider-neutral model, losing nothing."""
    # Every write of every command passes the redactor of the secrets in force.
    install(secrets_in_force())


from elelem.cli.inspect import inspect_command  # noqa: E402

main.add_command(inspect_command)

from elelem.cli.serve import serve_command  # noqa: E402

main.add_command(serve_command)

from elelem.cli.commands import register  # noqa: E402  (ask, chat, log, show, … demo)

register(main)

__all__ = ["main"]
