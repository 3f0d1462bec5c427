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
    with _echo(on=False):
        yield


@contextmanager
def echoing_terminal() -> Iterator[None]:
    """Turn the terminal's echo back on for the block (a question whose
    answer the user must see while typing it, inside :func:`quiet_terminal`)."""
    with _echo(on=True):
        yield


@contextmanager
def _echo(*, on: bool) -> Iterator[None]:
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
    changed = list(saved)
    changed[3] = saved[3] | termios.ECHO if on else saved[3] & ~(termios.ECHO | termios.ECHOCTL)
    termios.tcsetattr(fd, termios.TCSANOW, changed)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)


__all__ = ["echoing_terminal", "quiet_terminal"]
