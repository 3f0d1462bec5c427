"""Questions asked on the terminal in the middle of a turn (an approval,
an MCP server's request for input), read on the running event loop.

Read on the loop, not in a worker thread: Ctrl-C cancels the read at once,
where a thread blocked on stdin would stay blocked, eat the next line typed
and hold stdin's lock while the interpreter shuts down.
"""

from __future__ import annotations

import asyncio
import os
import sys

import click

YES = frozenset({"y", "yes"})
NO = frozenset({"n", "no", ""})  # Enter alone: the default, no


async def confirm(question: str, verdicts: tuple[str, str] = ("approved", "refused")) -> bool:
    """Ask ``question [y/N]: `` on stderr and read the answer from the
    terminal (stdin) on the running event loop, as click's confirm would
    (asked again after anything but y, yes, n, no or Enter; end of input
    is no), and echo the verdict (``verdicts``: yes's, no's; an empty one
    is not echoed)."""
    while True:
        click.echo(f"{question} [y/N]: ", nl=False, err=True)
        line = await read_line(sys.stdin.fileno())
        if line is None:
            click.echo("", err=True)
            answer = "n"
        else:
            answer = line.strip().lower()
        if answer in YES or answer in NO:
            verdict = answer in YES
            said = verdicts[0] if verdict else verdicts[1]
            if said:
                click.echo(said, err=True)
            return verdict
        click.echo("Error: invalid input", err=True)


async def read_line(fd: int) -> str | None:
    """One line from ``fd`` (a terminal: the line discipline hands it over
    whole), read when the loop sees it readable; None at end of input."""
    loop = asyncio.get_running_loop()
    arrived: asyncio.Future[bytes | None] = loop.create_future()
    held = bytearray()

    def readable() -> None:
        chunk = os.read(fd, 4096)
        held.extend(chunk)
        if arrived.done():
            return
        if not chunk:
            arrived.set_result(bytes(held) if held else None)
        elif b"\n" in held:
            arrived.set_result(bytes(held))

    loop.add_reader(fd, readable)
    try:
        got = await arrived
    finally:
        loop.remove_reader(fd)
    return None if got is None else got.decode(errors="replace").partition("\n")[0]


__all__ = ["NO", "YES", "confirm", "read_line"]
