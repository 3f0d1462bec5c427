"""The ``elelem`` command's entry point, loadable without the ``cli`` extra.

The console script is installed with the library, but the command's own
dependencies (click, rich, prompt-toolkit, jsonschema) come with
``elelem[cli]``: without them, the command says which extra to install
(exit status 2, bad configuration) instead of a traceback.
"""

from __future__ import annotations

import sys

CLI_MODULES = frozenset({"click", "rich", "prompt_toolkit", "jsonschema"})
"""The top-level modules the ``cli`` extra brings."""


def main() -> None:
    """Run the ``elelem`` command (:func:`elelem.cli.main`)."""
    try:
        from elelem.cli import main as cli_main
    except ModuleNotFoundError as exc:
        from elelem.errors import install_line

        missing = (exc.name or "").partition(".")[0]
        if missing not in CLI_MODULES:
            raise
        sys.stderr.write(
            f"elelem: the command needs the cli extra ({missing} is not installed): "
            f"{install_line('cli')}\n"
        )
        raise SystemExit(2) from None
    from elelem.cli.exits import leave

    try:
        cli_main()
    except SystemExit as exc:
        code = exc.code
        leave(code if isinstance(code, int) else 0 if code is None else 1)
        raise


__all__ = ["CLI_MODULES", "main"]
