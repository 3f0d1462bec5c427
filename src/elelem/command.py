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
        missing = (exc.name or "").partition(".")[0]
        if missing not in CLI_MODULES:
            raise
        sys.stderr.write(
            f"elelem: the command needs the cli extra ({missing} is not installed): "
            "pip install 'elelem[cli]'\n"
        )
        raise SystemExit(2) from None
    cli_main()


__all__ = ["CLI_MODULES", "main"]
