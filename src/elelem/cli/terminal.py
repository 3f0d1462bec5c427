"""The terminal while an answer streams.

The live region redraws the answer in place and erases itself when the
answer is done, counting the lines it drew.  Anything the terminal itself
echoes meanwhile — the ``^C`` of an interrupt, keys typed ahead — moves the
cursor behind its back, so the erase misses and the partial answer stays on
screen twice.  While an answer streams, echo is off (Ctrl-C still
interrupts: signals are left on); the terminal's settings are restored
after, however the answer ends.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def quiet_terminal() -> Iterator[None]:
    """Turn the terminal's echo off for the block, where stdin is a terminal."""
    stdin = sys.stdin
    if stdin is None or not stdin.isatty():
        yield
        return
    try:
        import termios
    except ImportError:  # no termios (Windows): nothing to turn off
        yield
        return
    fd = stdin.fileno()
    saved = termios.tcgetattr(fd)
    quiet = list(saved)
    quiet[3] = saved[3] & ~(termios.ECHO | termios.ECHOCTL)
    termios.tcsetattr(fd, termios.TCSANOW, quiet)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)


__all__ = ["quiet_terminal"]
