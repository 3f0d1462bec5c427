"""The ``elelem`` command."""

from __future__ import annotations

import sys


def main() -> None:
    """Entry point of the ``elelem`` console script."""
    sys.stderr.write("elelem: no commands yet\n")
    raise SystemExit(2)
