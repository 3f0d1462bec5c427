"""Where a command writes: the rich console and the renderer of an answer."""

from __future__ import annotations

from rich.console import Console

from elelem.render import Renderer, RenderOptions


def make_console(stderr: bool = False) -> Console:
    """A console on stdout (or stderr); rich decides whether it is a terminal."""
    return Console(stderr=stderr, highlight=False, soft_wrap=False)


def make_renderer(reasoning: str, citations: str, console: Console | None = None) -> Renderer:
    """A renderer on stdout with the display options of the command line."""
    options = RenderOptions(reasoning=reasoning, citations=citations)  # type: ignore[arg-type]
    return Renderer(console or make_console(), options)
